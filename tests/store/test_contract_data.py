"""Contract state in the store (schema 4), on both backends: each storage key's value per
account and height with removals, read back as of a height by key and by prefix (nearcore's
trie order, bounded by a limit) through the sync and the serving readers; counted, versioned,
refused when nearcore could not have written it, copied both ways, and checked."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from nearrpc.store import StoreIntegrityError, StoreLocation, open_store
from nearrpc.store.base import StoreVersion
from nearrpc.store.checks import storage_limits
from nearrpc.store.copy import copy_store
from nearrpc.store.sqlite import SqliteChainReader
from tests.support.postgres import PostgresServer

ALICE, BOB = "alice.localnet", "bob.localnet"

# (account, key, height, value or None for a removal), written in an order unlike the keys'
ROWS: tuple[tuple[str, bytes, int, bytes | None], ...] = (
    (ALICE, b"c", 3, b"z"),
    (ALICE, b"STATE", 5, b"\x01"),
    (ALICE, b"b\xff", 3, b"y"),
    (ALICE, b"b1", 5, b"x"),
    (ALICE, b"STATE", 7, b"\x02"),
    (ALICE, b"b1", 8, None),
    (ALICE, b"\xff\xff", 4, b"top"),
    (ALICE, b"", 6, b"empty key"),
    (ALICE, b"b", 9, b"bare prefix"),
    (BOB, b"b1", 3, b"bob's"),
)


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreLocation]:
    if request.param == "sqlite":
        yield tmp_path / "state.db"
    else:
        server: PostgresServer = request.getfixturevalue("postgres")
        yield server.create_database("state")


def _write(location: StoreLocation, rows: tuple[tuple[str, bytes, int, bytes | None], ...] = ROWS) -> None:
    with open_store(location, "write") as writer, writer.batch() as batch:
        for account_id, key, height, value in rows:
            batch.put_contract_data(account_id, key, height, value)


def _state(location: StoreLocation, prefix: bytes, height: int, limit: int = 100) -> list[tuple[bytes, bytes]]:
    reader = open_store(location, "read")
    try:
        synced = reader.contract_state(ALICE, prefix, height, limit)
    finally:
        reader.close()

    async def served() -> list[tuple[bytes, bytes]]:
        serving = open_store(location, "serve")
        try:
            return await serving.contract_state(ALICE, prefix, height, limit)
        finally:
            await serving.close()

    assert asyncio.run(served()) == synced  # the serving reader answers the same
    return synced


def test_a_value_is_the_latest_row_at_or_below_the_height(location: StoreLocation) -> None:
    _write(location)
    asked = [(ALICE, b"STATE", h) for h in (4, 5, 6, 7, 100)] + [(ALICE, b"b1", h) for h in (4, 5, 7, 8, 9)]
    asked += [(BOB, b"b1", 3), (BOB, b"STATE", 9), ("carol.localnet", b"b1", 9), (ALICE, b"b1", -1)]
    expected = [None, b"\x01", b"\x01", b"\x02", b"\x02", None, b"x", b"x", None, None, b"bob's", None, None, None]
    reader = open_store(location, "read")
    try:
        assert [reader.contract_value(*one) for one in asked] == expected
    finally:
        reader.close()

    async def served() -> list[bytes | None]:
        serving = open_store(location, "serve")
        try:  # asked together: PostgreSQL answers them in one batched statement
            return list(await asyncio.gather(*(serving.contract_value(*one) for one in asked)))
        finally:
            await serving.close()

    assert asyncio.run(served()) == expected


def test_the_state_by_prefix_is_in_key_byte_order_and_skips_removed_keys(location: StoreLocation) -> None:
    _write(location)
    assert _state(location, b"", 4) == [(b"b\xff", b"y"), (b"c", b"z"), (b"\xff\xff", b"top")]
    assert _state(location, b"", 7) == [
        (b"", b"empty key"), (b"STATE", b"\x02"), (b"b1", b"x"), (b"b\xff", b"y"),
        (b"c", b"z"), (b"\xff\xff", b"top"),
    ]  # fmt: skip
    # b1 removed at 8; the key equal to the prefix is in its range
    assert _state(location, b"b", 9) == [(b"b", b"bare prefix"), (b"b\xff", b"y")]
    assert _state(location, b"b", 7) == [(b"b1", b"x"), (b"b\xff", b"y")]
    assert _state(location, b"\xff", 9) == [(b"\xff\xff", b"top")]  # a prefix with no key past it
    assert _state(location, b"STATE", 6) == [(b"STATE", b"\x01")]
    assert _state(location, b"STATEX", 9) == [] and _state(location, b"", -1) == []


def test_the_limit_counts_live_keys(location: StoreLocation) -> None:
    _write(location)
    assert _state(location, b"", 9, limit=2) == [(b"", b"empty key"), (b"STATE", b"\x02")]
    # b1 (removed) does not take a place of the limit
    assert _state(location, b"b", 9, limit=1) == [(b"b", b"bare prefix")]
    assert _state(location, b"b1", 9, limit=1) == [] and _state(location, b"", 9, limit=0) == []
    assert len(_state(location, b"", 1 << 70, limit=1 << 70)) == 6  # beyond 64 bits: every live key


def test_rows_are_counted_once_and_bump_their_change_counter(location: StoreLocation) -> None:
    _write(location)
    reader = open_store(location, "read")
    try:
        before = reader.version()
        assert reader.info().contract_data_count == len(ROWS)
    finally:
        reader.close()
    _write(location, ((ALICE, b"STATE", 7, b"\x03"), (ALICE, b"new", 7, b"n")))  # one replaced, one new
    reader = open_store(location, "read")
    try:
        assert reader.info().contract_data_count == len(ROWS) + 1
        assert reader.version().changed_since(before) == {"contract_data"}
        assert reader.contract_value(ALICE, b"STATE", 7) == b"\x03"
        assert sorted(reader.iter_contract_data()) == sorted(
            [row for row in ROWS if row[:3] != (ALICE, b"STATE", 7)] + [(ALICE, b"STATE", 7, b"\x03"),
                                                                      (ALICE, b"new", 7, b"n")]
        )  # fmt: skip
        check = reader.check(thorough=True)
        assert check.ok and check.counts["contract_data"] == len(ROWS) + 1, check
    finally:
        reader.close()
    assert "contract_data" in StoreVersion.__dataclass_fields__


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (("Not An Account", b"k", 1, b"v"), r"contract state of 'Not An Account': not a valid account id"),
        ((ALICE, "k", 1, b"v"), rf"contract state of {ALICE}: a storage key is bytes, got str"),
        ((ALICE, b"k", 1, "v"), rf"contract state of {ALICE}: a storage value is bytes or None \(removed\), got str"),
        ((ALICE, b"k", -1, b"v"), rf"contract state of {ALICE}: height -1 is out of range \(0 to \d+\)"),
        ((ALICE, b"k" * (storage_limits()[0] + 1), 1, b"v"),
         rf"contract state of {ALICE} at 1: a storage key of {storage_limits()[0] + 1} bytes is longer than "
         rf"nearcore's max_length_storage_key \({storage_limits()[0]}\)"),
        ((ALICE, b"k", 1, b"v" * (storage_limits()[1] + 1)),
         rf"contract state of {ALICE} at 1: a storage value of {storage_limits()[1] + 1} bytes is longer than "
         rf"nearcore's max_length_storage_value \({storage_limits()[1]}\)"),
    ],
)  # fmt: skip
def test_what_nearcore_could_not_have_written_is_refused(
    location: StoreLocation, row: tuple[str, bytes, int, bytes | None], message: str
) -> None:
    with pytest.raises(StoreIntegrityError, match=f"^{message}$"):
        _write(location, (row,))


def test_a_postgresql_store_refuses_keys_longer_than_its_index_holds(postgres: PostgresServer) -> None:
    url = postgres.create_database("long-keys")
    _write(url, ((ALICE, b"k" * 2048, 1, b"v"),))  # nearcore's bound since protocol 53: kept
    with pytest.raises(StoreIntegrityError, match=r"a storage key of 2049 bytes is longer than a PostgreSQL store "
                                                  r"indexes \(2048 bytes"):  # fmt: skip
        _write(url, ((ALICE, b"k" * 2049, 1, b"v"),))


def test_copied_both_ways(tmp_path: Path, postgres: PostgresServer) -> None:
    source = tmp_path / "source.db"
    _write(source)
    into_pg = postgres.create_database("copied")
    summary = copy_store(source, into_pg)
    assert summary.contract_data == len(ROWS)
    back = tmp_path / "back.db"
    copy_store(into_pg, back)
    for location in (into_pg, back):
        reader = open_store(location, "read")
        try:
            assert sorted(reader.iter_contract_data()) == sorted(ROWS)
            assert reader.info().contract_data_count == len(ROWS)
            assert reader.contract_state(ALICE, b"b", 7, 10) == [(b"b1", b"x"), (b"b\xff", b"y")]
        finally:
            reader.close()


def test_the_thorough_check_finds_a_damaged_sqlite_row(tmp_path: Path) -> None:
    path = tmp_path / "damaged.db"
    _write(path)
    with sqlite3.connect(path) as conn:  # text where bytes belong: it sorts apart from every key
        conn.execute("UPDATE contract_data SET key = 'STATE' WHERE key = X'5354415445' AND height = 7")
    reader = open_store(path, "read")
    try:
        assert reader.check(thorough=False).ok  # the pages are sound
        assert reader.check(thorough=True).problems == (
            f"contract state of '{ALICE}' at height 7: its key is stored as text, not as bytes",
        )
    finally:
        reader.close()


def test_the_thorough_check_finds_a_damaged_postgresql_row(postgres: PostgresServer) -> None:
    url = postgres.create_database("damaged")
    _write(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE contract_data SET height = -2 WHERE key = %s AND height = 7", (b"STATE",))
        conn.execute("DELETE FROM contract_data WHERE key = %s", (b"c",))
    reader = open_store(url, "read")
    try:
        assert reader.check(thorough=True).problems == (
            f"meta counts {len(ROWS)} rows of contract_data, the table holds {len(ROWS) - 1}",
            f"contract state of '{ALICE}' at height -2: its height is negative",
        )
    finally:
        reader.close()


def test_a_prefix_walk_stops_at_the_limit(tmp_path: Path) -> None:
    """The work of `contract_state` follows the limit, not the keys stored after it: SQLite's
    virtual-machine steps are counted for the same lookup before and after 20,000 more keys."""
    path = tmp_path / "walk.db"
    _write(path)

    def steps() -> int:
        reader = open_store(path, "read")
        counted = 0

        def count() -> int:
            nonlocal counted
            counted += 1
            return 0

        try:
            assert isinstance(reader, SqliteChainReader)
            reader._connection.conn.set_progress_handler(count, 1)
            assert reader.contract_state(ALICE, b"", 9, 2) == [(b"", b"empty key"), (b"STATE", b"\x02")]
        finally:
            reader.close()
        return counted

    before = steps()
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO contract_data VALUES (?, ?, ?, ?)",
                         ((ALICE, b"m%05d" % i, 1, b"v") for i in range(20_000)))  # fmt: skip
    assert steps() == before


def test_a_fork_reads_contract_state_it_marked_from_its_store_without_asking_the_upstream(tmp_path: Path) -> None:
    """What a fork fetched (its marks: fork/marks.py) is read from its store alone, so an upstream
    where nothing listens is never asked; a key never fetched there is a miss (the upstream's)."""
    from nearrpc.fork import marks
    from nearrpc.fork.reader import ForkReader
    from nearrpc.fork.upstream import Upstream, UpstreamError, UpstreamSettings
    from nearrpc.fork.writer import ForkWriter
    from nearrpc.ingest.rpc_client import RetryPolicy
    from tests.support.live_server import free_port

    path = tmp_path / "fork.db"
    _write(path)
    with open_store(path, "write") as writer, writer.batch() as batch:
        batch.put_fetched(marks.contract_value(ALICE, b"STATE", 6))
        batch.put_fetched(marks.contract_state(ALICE, b"b", 7))
    settings = UpstreamSettings(f"http://127.0.0.1:{free_port()}", 1, 0, RetryPolicy(retries=0, backoff=0.01,
                                                                                        timeout=1.0))  # fmt: skip

    async def read() -> tuple[bytes | None, list[tuple[bytes, bytes]], str]:
        writer = ForkWriter(path, None)
        fork = ForkReader(open_store(path, "serve"), Upstream(settings), writer, fork_height=None, miss_timeout=1.0)
        try:
            value, state = await fork.contract_value(ALICE, b"STATE", 6), await fork.contract_state(ALICE, b"b", 7, 10)
            try:
                await fork.contract_value(ALICE, b"STATE", 7)  # not fetched at 7
            except UpstreamError as missed:
                return value, state, str(missed)
            return value, state, "answered without the upstream"
        finally:
            await fork.close()  # the upstream's client too (it was asked), the store, the writer

    value, state, unmarked = asyncio.run(read())
    assert (value, state) == (b"\x01", [(b"b1", b"x"), (b"b\xff", b"y")])
    assert "127.0.0.1" in unmarked  # asked of the upstream, which does not answer


def test_postgresql_writes_large_values_in_chunks_bounded_by_bytes(
    postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Values run to 4 MiB, so a batch's staged contract rows are written out by bytes as well as
    by rows (here a bound of 10 bytes: a write-out every few rows of a few bytes each), and land all the same."""
    from nearrpc.store import postgres as backend

    monkeypatch.setattr(backend, "_CHUNK_BYTES", 10)
    flushed: list[int] = []  # the contract rows each write-out carried
    original = backend.PostgresWriteBatch._flush

    def counting(batch: backend.PostgresWriteBatch, staged: Any) -> None:
        if staged.table == "contract_data" and staged.rows:
            flushed.append(len(staged.rows))
        original(batch, staged)

    monkeypatch.setattr(backend.PostgresWriteBatch, "_flush", counting)
    url = postgres.create_database("chunks")
    _write(url)
    assert sum(flushed) == len(ROWS) and max(flushed) <= 3, flushed  # each write-out holds a few bytes
    reader = open_store(url, "read")
    try:
        assert sorted(reader.iter_contract_data()) == sorted(ROWS)
        assert reader.info().contract_data_count == len(ROWS)
    finally:
        reader.close()
