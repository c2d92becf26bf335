"""A view call's upstream requests are capped (issue 43 item 2; store.fetch_budget): each request a
fork's miss starts spends one of the running call's budget, joining one in flight spends none,
and past the budget the read fails with FetchCapReached, a StoreError the handlers answer
INTERNAL_ERROR naming the flag. The budget reaches the reads a call hands to the event loop
from its worker thread (a context variable), across its fast and slow runs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from nearrpc.methods import errors
from nearrpc.methods.view_calls import ViewRunner
from nearrpc.store import CURRENT_FETCH_BUDGET, FetchBudget, FetchCapReached, spend_fetch
from tests.contracts.support import CONTEXT, module, with_limit
from tests.fork.test_fork_miss_cancel import _Misses

# reads keys 0, 1, 2, ... (8 bytes each) in a loop: one upstream request per key through a fork
READS_MANY_KEYS = module(
    '(func (export "m") (local $i i64)'
    " (loop $l (i64.store (i32.const 0) (local.get $i))"
    " (drop (call $storage_read (i64.const 8) (i64.const 0) (i64.const 0)))"
    " (local.set $i (i64.add (local.get $i) (i64.const 1)))"
    " (br_if $l (i64.lt_u (local.get $i) (i64.const 1000)))))",
    '(import "env" "storage_read" (func $storage_read (param i64 i64 i64) (result i64)))',
)


class _FetchingReader:
    """A fork's reader in small: every read is a miss that asks the upstream (and spends)."""

    def __init__(self) -> None:
        self.requests = 0

    def inline_contract_values(self) -> None:
        return None

    async def contract_value(self, account_id: str, key: bytes, height: int) -> bytes | None:
        spend_fetch()
        self.requests += 1
        await asyncio.sleep(0)
        return None


def test_a_call_past_its_fetches_is_refused_with_the_cap() -> None:
    async def call() -> tuple[int, FetchCapReached]:
        reader = _FetchingReader()
        serving: Any = reader
        runner = ViewRunner(call_timeout=20)
        runner.fetches_per_call = 25
        try:
            with pytest.raises(FetchCapReached) as capped:
                await runner.run(serving, READS_MANY_KEYS, "cap-many", "m", b"", CONTEXT, with_limit(10**15))
        finally:
            runner.close()
        return reader.requests, capped.value

    requests, capped = asyncio.run(call())
    assert requests == 25  # the 26th read was refused before it asked anything
    answer = errors.internal_error(str(capped))  # what `store_failures_are_internal` answers
    assert (str(answer.kind.cause), answer.kind.http_status) == ("INTERNAL_ERROR", 500)
    assert "--fork-fetches-per-call" in str(answer.info)


def test_misses_spend_the_budget_and_a_joined_flight_spends_nothing() -> None:
    async def scenario() -> tuple[int, bool]:
        misses = _Misses()
        budget = FetchBudget(2)
        CURRENT_FETCH_BUDGET.set(budget)
        first = asyncio.create_task(misses._miss("a", misses.slow_fetch))
        joined = asyncio.create_task(misses._miss("a", misses.slow_fetch))
        second = asyncio.create_task(misses._miss("b", misses.slow_fetch))
        await asyncio.sleep(0.01)
        spent = budget.spent
        refused = False
        try:
            await misses._miss("c", misses.slow_fetch)
        except FetchCapReached:
            refused = True
        for task in (first, joined, second):
            task.cancel()
        await asyncio.gather(first, joined, second, return_exceptions=True)
        return spent, refused

    assert asyncio.run(scenario()) == (2, True)


def test_a_lookup_outside_a_view_call_is_not_counted() -> None:
    assert CURRENT_FETCH_BUDGET.get() is None
    for _ in range(1000):
        spend_fetch()  # no budget: nothing raised
