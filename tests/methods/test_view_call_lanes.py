"""No number of slow view calls holds a fresh one (issue 43 item 1; methods.view_calls.ViewRunner):
a call still running after its fast-lane slice goes on in the slow lane (one thread), which
holds at most `max_slow_calls` calls, running or waiting; a slow call past that is refused at
once (BUSY, INTERNAL_ERROR). A call's deadline counts from the moment a worker takes it up, not
its wait in the slow lane's queue. Attacks scaled to seconds: loops that only the clock ends."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from nearrpc.contracts import BUSY, DEADLINE, ExecutionInterrupted, ViewCallError
from nearrpc.methods.view_calls import SLOW_WORKERS, ViewRunner, interrupted_error
from nearrpc.store import ServingReader, open_store
from tests.contracts.support import CONTEXT, module, with_limit

FOREVER = with_limit(10**17)  # tens of seconds of looping: only the clock or a stop ends it soon
GAS_LOOP = with_limit(10**14)  # a loop that ends at its gas limit within a fraction of a second
QUICK_COSTS = with_limit(10**13)


def _loop(tag: int) -> bytes:
    # distinct code per tag: each its own module, not compiled yet (so never run on the event loop)
    return module(f'(func (export "m") (loop $l (br $l))) (func (export "tag{tag}"))')


QUICK = module('(func (export "m"))')


async def _until(condition: object, seconds: float = 20) -> None:
    for _ in range(int(seconds / 0.01)):
        if callable(condition) and condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never held")


def _open(sample_store: Path) -> ServingReader:
    return open_store(sample_store, "serve")


def test_a_fresh_call_answers_while_slow_calls_hold_the_workers(sample_store: Path) -> None:
    async def attack() -> tuple[list[bool], int]:
        reader = _open(sample_store)
        runner = ViewRunner(call_timeout=8, max_slow_calls=8)
        loops = [
            asyncio.create_task(runner.run(reader, _loop(i), f"fair-loop-{i}", "m", b"", CONTEXT, FOREVER))
            for i in range(4)  # twice the fast lane's threads
        ]
        try:
            await _until(lambda: runner.slow_runs == 4)  # every loop has left the fast lane
            outcome = await asyncio.wait_for(runner.run(reader, QUICK, "fair-quick", "m", b"", CONTEXT, QUICK_COSTS), 6)
            assert outcome.result == b""
            # answered while every loop still runs: before, the loops held both workers to their deadline
            return [loop.done() for loop in loops], runner.slow_calls
        finally:
            runner.close()
            await asyncio.gather(*loops, return_exceptions=True)
            await reader.close()

    done, slow_calls = asyncio.run(attack())
    assert done == [False] * 4 and slow_calls == 4


def test_slow_calls_past_the_bound_are_refused_at_once(sample_store: Path) -> None:
    async def attack() -> tuple[str, int]:
        reader = _open(sample_store)
        runner = ViewRunner(call_timeout=8, max_slow_calls=2)
        loops = [
            asyncio.create_task(runner.run(reader, _loop(10 + i), f"bound-loop-{i}", "m", b"", CONTEXT, FOREVER))
            for i in range(2)
        ]
        try:
            await _until(lambda: runner.slow_calls == 2)
            with pytest.raises(ExecutionInterrupted) as refused:
                await asyncio.wait_for(runner.run(reader, _loop(12), "bound-third", "m", b"", CONTEXT, FOREVER), 6)
            # the two admitted still run: the refusal took nothing from them
            assert not any(loop.done() for loop in loops)
            return refused.value.reason, runner.refused
        finally:
            runner.close()
            await asyncio.gather(*loops, return_exceptions=True)
            await reader.close()

    reason, refused = asyncio.run(attack())
    assert (reason, refused) == (BUSY, 1)
    error = interrupted_error(BUSY)
    assert (str(error.kind.cause), error.kind.http_status) == ("INTERNAL_ERROR", 500)
    assert "--max-slow-view-calls" in str(error.info)


def test_the_deadline_does_not_count_the_wait_for_the_slow_lane(sample_store: Path) -> None:
    async def attack() -> tuple[list[str], str]:
        reader = _open(sample_store)
        runner = ViewRunner(call_timeout=1.5)
        runner.slow_after = 0.01
        try:
            holders = [
                asyncio.create_task(runner.run(reader, _loop(20 + i), f"queue-forever-{i}", "m", b"", CONTEXT, FOREVER))
                for i in range(SLOW_WORKERS)
            ]
            await _until(lambda: runner.slow_calls == SLOW_WORKERS)
            # this one ends at its gas limit well within its own 1.5 s, after waiting ~1.5 s for
            # a slow lane's thread: counted from its arrival, it would be past its deadline
            queued = asyncio.create_task(runner.run(reader, _loop(29), "queue-gas", "m", b"", CONTEXT, GAS_LOOP))
            reasons = []
            for holder in holders:
                try:
                    await holder
                except ExecutionInterrupted as stopped:
                    reasons.append(stopped.reason)
            try:
                await queued
            except ViewCallError as failed:
                return reasons, failed.debug
            return reasons, "answered"
        finally:
            runner.close()
            await reader.close()

    holders, queued = asyncio.run(attack())
    assert holders == [DEADLINE] * SLOW_WORKERS
    assert queued == "HostError(GasLimitExceeded)"


class _ColdReader:
    """A fork's reader in small: the first read of a key waits on the "upstream", later ones are
    answered at once (the key is kept)."""

    def __init__(self) -> None:
        self.kept: set[bytes] = set()
        self.asked = 0

    def inline_contract_values(self) -> None:
        return None

    async def contract_value(self, account_id: str, key: bytes, height: int) -> bytes | None:
        self.asked += 1
        if key not in self.kept:
            await asyncio.sleep(0.3)
            self.kept.add(key)
        return None


def test_a_method_slow_while_cold_returns_to_the_fast_lane_once_quick() -> None:
    reads = module(
        '(func (export "m") (drop (call $storage_read (i64.const 1) (i64.const 0) (i64.const 0))))',
        '(import "env" "storage_read" (func $storage_read (param i64 i64 i64) (result i64)))',
    )

    cold = _ColdReader()

    async def calls() -> list[int]:
        reader: Any = cold
        runner = ViewRunner(call_timeout=10)
        slow_runs = []
        try:
            for _ in range(3):
                await runner.run(reader, reads, "cold-then-warm", "m", b"", CONTEXT, QUICK_COSTS)
                slow_runs.append(runner.slow_runs)
        finally:
            runner.close()
        return slow_runs

    # cold: past its slice waiting on the read, run in the slow lane (the read handed over, not
    # asked again); the next call goes there at once and is quick; the third is the fast lane's
    assert asyncio.run(calls()) == [1, 2, 2]
    assert cold.asked == 3  # one read a call
