"""Concurrent lookups batched into one statement (store/pg_batch.py), alone and in the
PostgreSQL serving reader."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Sequence
from pathlib import Path

import pytest

from nearrpc.sample import SampleChain
from nearrpc.store import StoreError, StoreOptions, open_store
from nearrpc.store.pg_batch import MAX_KEYS_PER_STATEMENT, BatchedLookup


class _Table:
    """A fake statement over a dict: records the keys of each call."""

    def __init__(self, rows: dict[int, str], failure: Exception | None = None) -> None:
        self.rows = rows
        self.failure = failure
        self.calls: list[list[int]] = []

    async def fetch(self, keys: Sequence[int]) -> dict[int, str]:
        self.calls.append(list(keys))
        await asyncio.sleep(0)  # a round trip: the statement is in flight for a while
        if self.failure is not None:
            raise self.failure
        return {key: self.rows[key] for key in keys if key in self.rows}


def test_lookups_asked_together_go_out_as_one_statement_and_each_gets_its_row() -> None:
    table = _Table({1: "one", 2: "two", 3: "three"})
    lookup = BatchedLookup(table.fetch)

    async def ask() -> list[str | None]:
        return await asyncio.gather(*(lookup.load(key) for key in (3, 1, 9, 1, 2, 3)))

    assert asyncio.run(ask()) == ["three", "one", None, "one", "two", "three"]
    assert table.calls == [[3, 1, 9, 2]]  # one statement, each key once


def test_lookups_asked_while_a_statement_is_in_flight_go_out_in_the_next() -> None:
    table = _Table({key: str(key) for key in range(10)})
    lookup = BatchedLookup(table.fetch)

    async def ask() -> list[str | None]:
        first = asyncio.gather(*(lookup.load(key) for key in range(5)))
        await asyncio.sleep(0)  # the first statement is sent
        second = asyncio.gather(*(lookup.load(key) for key in range(5, 10)))
        return [*await first, *await second]

    assert asyncio.run(ask()) == [str(key) for key in range(10)]
    assert table.calls == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]


def test_lookups_asked_over_many_turns_while_one_statement_is_in_flight_go_out_together_after_it() -> None:
    table = _Table({key: str(key) for key in range(10)})
    first_sent = asyncio.Event()
    answer_now = asyncio.Event()
    plain_fetch = table.fetch

    async def slow_first(keys: Sequence[int]) -> dict[int, str]:
        if not first_sent.is_set():
            first_sent.set()
            await answer_now.wait()  # a slow round trip
        return await plain_fetch(keys)

    lookup = BatchedLookup(slow_first)

    async def ask() -> list[str | None]:
        first = asyncio.ensure_future(lookup.load(0))
        await first_sent.wait()
        later = []
        for key in range(1, 10):  # one lookup a turn, all while the first is in flight
            later.append(asyncio.ensure_future(lookup.load(key)))
            await asyncio.sleep(0)
        answer_now.set()
        return [await first, *[await one for one in later]]

    assert asyncio.run(ask()) == [str(key) for key in range(10)]
    assert table.calls == [[0], list(range(1, 10))]


def test_a_turn_of_many_lookups_is_split_into_bounded_statements() -> None:
    count = MAX_KEYS_PER_STATEMENT * 2 + 3
    table = _Table({key: str(key) for key in range(count)})
    lookup = BatchedLookup(table.fetch)

    async def ask() -> list[str | None]:
        return await asyncio.gather(*(lookup.load(key) for key in range(count)))

    assert asyncio.run(ask()) == [str(key) for key in range(count)]
    assert [len(keys) for keys in table.calls] == [MAX_KEYS_PER_STATEMENT, MAX_KEYS_PER_STATEMENT, 3]


def test_a_failed_statement_fails_each_of_its_lookups_and_the_next_one_is_sent_afresh() -> None:
    table = _Table({1: "one"}, failure=StoreError("connection lost"))
    lookup = BatchedLookup(table.fetch)

    async def ask() -> tuple[list[str | BaseException | None], str | None]:
        failed = list(await asyncio.gather(lookup.load(1), lookup.load(2), return_exceptions=True))
        table.failure = None
        return failed, await lookup.load(1)

    failed, again = asyncio.run(ask())
    assert [str(error) for error in failed] == ["connection lost", "connection lost"]
    assert again == "one"


def test_a_cancelled_lookup_leaves_the_others_of_its_statement_answered() -> None:
    table = _Table({1: "one", 2: "two"})
    lookup = BatchedLookup(table.fetch)

    async def ask() -> str | None:
        gone = asyncio.ensure_future(lookup.load(1))
        kept = asyncio.ensure_future(lookup.load(2))
        await asyncio.sleep(0)
        gone.cancel()
        return await kept

    assert asyncio.run(ask()) == "two"


def test_the_postgresql_serving_reader_answers_concurrent_lookups_as_sqlite_does(
    filled: str, filled_store_file: Path, chain: SampleChain
) -> None:
    """Many lookups at once (found and missing blocks by height and hash, account states at
    heights with and without one) through batched statements: the rows SQLite has."""
    expected = open_store(filled_store_file, "read")
    served = open_store(filled, "serve", StoreOptions(pool_size=2))
    heights = [block.height for block in chain.blocks] + [10**9, 2**63 - 1]
    hashes = [block.hash for block in chain.blocks] + ["11111111111111111111111111111111"]
    states = [(state.account_id, state.height + offset) for state in chain.account_states for offset in (0, 3)]
    states += [("nobody.near", 5), (chain.account_states[0].account_id, 0)]
    # each lookup as (what the serving reader is asked, what SQLite answers)
    asked: list[tuple[Awaitable[object], object]] = []
    try:
        asked += [(served.block_by_height(height), expected.block_by_height(height)) for height in heights]
        asked += [(served.block_by_hash(value), expected.block_by_hash(value)) for value in hashes]
        asked += [(served.account_json(*state), expected.account_json(*state)) for state in states]
    finally:
        expected.close()
    random.Random(5).shuffle(asked)

    async def ask_all() -> list[object]:
        try:
            return list(await asyncio.gather(*(lookup for lookup, _ in asked)))
        finally:
            await served.close()

    answers = asyncio.run(ask_all())
    assert answers == [answer for _, answer in asked]
    assert any(answer is None for answer in answers) and sum(answer is not None for answer in answers) > 100


@pytest.mark.parametrize("height", [-1, 2**64])
def test_heights_out_of_range_are_no_block_without_a_statement(filled: str, height: int) -> None:
    served = open_store(filled, "serve")

    async def ask() -> object:
        try:
            return await served.block_by_height(height)
        finally:
            await served.close()

    assert asyncio.run(ask()) is None
