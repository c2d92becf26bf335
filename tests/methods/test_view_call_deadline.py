"""A view call on a worker is bounded by the clock too (methods.view_calls.ViewRunner, issue 43
items 1-2): past its deadline it is stopped and answered as nearcore answers a query its view
client did not answer in time (INTERNAL_ERROR "Timeout"); a call whose client goes away (its
task cancelled) or whose server stops is stopped too, the worker free again at once; a storage
read it waits on (a fork's fetch) is cancelled with it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from nearrpc.contracts import CANCELLED, DEADLINE, SHUTDOWN, ExecutionInterrupted
from nearrpc.http.connections import request_task
from nearrpc.methods.view_calls import VIEW_CALL_TIMEOUT, ViewRunner, interrupted_error, stop_calls_of
from nearrpc.store import open_store
from tests.contracts.support import CONTEXT, IMPORTS, module, with_limit

LOOP = module('(func (export "m") (loop $l (br $l)))')
READ = module(
    '(func (export "m") (drop (call $storage_read (i64.const 1) (i64.const 0) (i64.const 0))))',
    IMPORTS + '(import "env" "storage_read" (func $storage_read (param i64 i64 i64) (result i64)))',
)
QUICK = module('(func (export "m"))')
FOREVER = with_limit(10**17)  # tens of seconds of looping: only the clock or a stop ends it soon
COSTS = with_limit(10**13)


def test_a_loop_past_its_deadline_is_answered_timeout(sample_store: Path) -> None:
    async def call() -> str:
        reader = open_store(sample_store, "serve")
        runner = ViewRunner(call_timeout=0.2)
        try:
            with pytest.raises(ExecutionInterrupted) as failed:
                await runner.run(reader, LOOP, "deadline-loop", "m", b"", CONTEXT, FOREVER)
            assert runner.interrupted == 1
            # the worker is free again: a quick call answers
            await runner.run(reader, QUICK, "deadline-quick", "m", b"", CONTEXT, COSTS)
        finally:
            runner.close()
            await reader.close()
        return failed.value.reason

    assert asyncio.run(call()) == DEADLINE
    error = interrupted_error(DEADLINE)  # nearcore's answer to a query its view client did not answer in time
    assert (str(error.kind.cause), error.info, error.kind.http_status) == (
        "INTERNAL_ERROR", {"error_message": "Timeout"}, 500,
    )  # fmt: skip


def test_a_call_whose_client_goes_away_is_stopped(sample_store: Path) -> None:
    async def call() -> None:
        reader = open_store(sample_store, "serve")
        runner = ViewRunner(workers=1, call_timeout=60)
        try:
            task = asyncio.create_task(runner.run(reader, LOOP, "gone-loop", "m", b"", CONTEXT, FOREVER))
            await asyncio.sleep(0.2)
            task.cancel()  # what the HTTP room does when the client disconnects
            with pytest.raises(asyncio.CancelledError):
                await task
            # the one worker is free within ticks, not after the loop's tens of seconds
            await asyncio.wait_for(runner.run(reader, QUICK, "gone-quick", "m", b"", CONTEXT, COSTS), 5)
        finally:
            runner.close()
            await reader.close()

    asyncio.run(call())


def test_a_call_running_when_the_server_stops_is_stopped(sample_store: Path) -> None:
    async def call() -> str:
        reader = open_store(sample_store, "serve")
        runner = ViewRunner(call_timeout=60)
        try:
            task = asyncio.create_task(runner.run(reader, LOOP, "stop-loop", "m", b"", CONTEXT, FOREVER))
            await asyncio.sleep(0.2)
            runner.close()
            with pytest.raises(ExecutionInterrupted) as failed:
                await asyncio.wait_for(task, 5)
        finally:
            await reader.close()
        return failed.value.reason

    assert asyncio.run(call()) == SHUTDOWN
    stopping = "the server is shutting down: it runs no more view calls"
    assert interrupted_error(SHUTDOWN).info == {"error_message": stopping}


class _WaitingReader:
    """A reader whose storage reads wait forever (an upstream that never answers), counting the
    reads begun and cancelled."""

    def __init__(self) -> None:
        self.begun = 0
        self.cancelled = 0

    def inline_contract_values(self) -> None:
        return None

    async def contract_value(self, account_id: str, key: bytes, height: int) -> bytes | None:
        self.begun += 1
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return None


@pytest.mark.parametrize("how", ["deadline", "disconnect", "shutdown"])
def test_a_storage_read_in_flight_is_cancelled_with_its_call(how: str) -> None:
    async def call() -> _WaitingReader:
        reader = _WaitingReader()
        serving: Any = reader
        runner = ViewRunner(call_timeout=0.2 if how == "deadline" else 60)
        task = asyncio.create_task(runner.run(serving, READ, f"read-{how}", "m", b"", CONTEXT, COSTS))
        try:
            while reader.begun == 0:
                await asyncio.sleep(0.01)
            if how == "disconnect":
                task.cancel()
            elif how == "shutdown":
                runner.close()
            with pytest.raises((ExecutionInterrupted, asyncio.CancelledError)):
                await asyncio.wait_for(task, 5)
            for _ in range(100):  # the cancellation reaches the read on the loop
                if reader.cancelled:
                    break
                await asyncio.sleep(0.01)
        finally:
            runner.close()
        return reader

    reader = asyncio.run(call())
    assert (reader.begun, reader.cancelled) == (1, 1)


def test_a_lost_connection_stops_the_call_its_request_task_waits_for(sample_store: Path) -> None:
    class Cycle:  # uvicorn's request cycle: its task runs `run_asgi`
        def __init__(self, runner: ViewRunner, reader: Any) -> None:
            self.runner, self.reader = runner, reader

        async def run_asgi(self) -> None:
            await self.runner.run(self.reader, LOOP, "lost-loop", "m", b"", CONTEXT, FOREVER)

    async def call() -> tuple[str, bool]:
        reader = open_store(sample_store, "serve")
        runner = ViewRunner(call_timeout=60)
        try:
            cycle = Cycle(runner, reader)
            other = asyncio.create_task(asyncio.sleep(10))
            task = asyncio.create_task(cycle.run_asgi())
            await asyncio.sleep(0.2)
            found = request_task([other, task], cycle)  # what the protocol does on connection_lost
            assert found is task and request_task([other], cycle) is None
            assert stop_calls_of(task)
            with pytest.raises(ExecutionInterrupted) as failed:
                await asyncio.wait_for(task, 5)
            other.cancel()
            return failed.value.reason, stop_calls_of(task)
        finally:
            runner.close()
            await reader.close()

    # stopped; and the finished task is forgotten (nothing left to stop)
    assert asyncio.run(call()) == (CANCELLED, False)


def test_the_default_deadline_is_the_serve_flag_default() -> None:
    from nearrpc.cli.settings import ServeSettings

    assert ServeSettings.model_fields["view_call_timeout"].default == VIEW_CALL_TIMEOUT
    assert ViewRunner().call_timeout == VIEW_CALL_TIMEOUT
