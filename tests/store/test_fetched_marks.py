"""A fork's "fetched" marks (`WriteBatch.put_fetched`), on both backends: written in a batch,
idempotent, read back by the sync and the serving readers, copied by `store copy`, and kept in
an optional table that a store written before it gets with its first mark."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from nearrpc.store import StoreLocation, open_store
from nearrpc.store.copy import copy_store
from tests.support.postgres import PostgresServer

MARKS = ("block/7", "account/alice.localnet/12", "key-list/bob.localnet/3")


def _mark(location: StoreLocation, *keys: str) -> None:
    with open_store(location, "write") as writer, writer.batch() as batch:
        for key in keys:
            batch.put_fetched(key)


def _read_marks(location: StoreLocation) -> tuple[set[str], list[bool]]:
    reader = open_store(location, "read")
    try:
        return set(reader.iter_fetched()), [reader.fetched(key) for key in (*MARKS, "block/8")]
    finally:
        reader.close()


def _served_marks(location: StoreLocation) -> list[bool]:
    async def ask() -> list[bool]:
        reader = open_store(location, "serve")
        try:
            return [await reader.fetched(key) for key in (*MARKS, "block/8")]
        finally:
            await reader.close()

    return asyncio.run(ask())


def _check(location: StoreLocation) -> None:
    _mark(location, *MARKS)
    _mark(location, MARKS[0])  # again: a replica that fetched the same answer
    assert _read_marks(location) == (set(MARKS), [True, True, True, False])
    assert _served_marks(location) == [True, True, True, False]


def test_sqlite_marks(store_copy: Path, tmp_path: Path) -> None:
    _check(store_copy)
    copied = tmp_path / "copied.db"
    copy_store(store_copy, copied)
    assert _read_marks(copied)[0] == set(MARKS)


def test_postgres_marks(pg_copy: str, postgres: PostgresServer, store_copy: Path) -> None:
    _check(pg_copy)
    into_sqlite = store_copy.with_name("from-pg.db")
    copy_store(pg_copy, into_sqlite)
    assert _read_marks(into_sqlite)[0] == set(MARKS)
    into_pg = postgres.create_database("marks-copy")
    copy_store(into_sqlite, into_pg)
    assert _read_marks(into_pg)[0] == set(MARKS)


def test_a_store_without_the_table_reads_no_marks_and_gets_it_with_the_first(store_copy: Path) -> None:
    """Stores written before the table existed: served as before, marked on the first write."""
    with sqlite3.connect(store_copy) as conn:
        conn.execute("DROP TABLE fetched")
    assert _read_marks(store_copy) == (set(), [False, False, False, False])
    assert _served_marks(store_copy) == [False, False, False, False]
    reader = open_store(store_copy, "read")
    try:
        assert reader.check(thorough=True).ok
    finally:
        reader.close()
    _check(store_copy)


def test_marks_of_a_failed_batch_are_not_kept(store_copy: Path) -> None:
    with pytest.raises(RuntimeError), open_store(store_copy, "write") as writer, writer.batch() as batch:
        batch.put_fetched("block/99")
        raise RuntimeError("the upstream answer failed validation")
    assert _read_marks(store_copy)[0] == set()
