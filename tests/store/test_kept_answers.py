"""A fork's kept upstream answers (`WriteBatch.put_kept_answer`), on both backends: written in a
batch, replaced by the same key, read back by the sync and the serving readers, listed apart
from the store's own meta keys, and copied by `store copy`."""

from __future__ import annotations

import asyncio
from pathlib import Path

from nearrpc.store import StoreLocation, open_store
from nearrpc.store.copy import copy_store
from tests.support.postgres import PostgresServer

ANSWERS = {
    "call/counter.localnet/hash-a/digest": b'{"result":{"result":[52],"logs":[],"block_height":30,"block_hash":"a"}}',
    "call/token.localnet/hash-b/digest": b'{"error":{"name":"HANDLER_ERROR","cause":{"name":"UNKNOWN_ACCOUNT"}}}',
}


def _keep(location: StoreLocation, answers: dict[str, bytes]) -> None:
    with open_store(location, "write") as writer, writer.batch() as batch:
        for key, answer in answers.items():
            batch.put_kept_answer(key, answer)


def _read(location: StoreLocation) -> tuple[list[tuple[str, bytes]], list[bytes | None]]:
    reader = open_store(location, "read")
    try:
        return sorted(reader.iter_kept_answers()), [reader.kept_answer(key) for key in (*ANSWERS, "call/none")]
    finally:
        reader.close()


def _served(location: StoreLocation) -> list[bytes | None]:
    async def ask() -> list[bytes | None]:
        reader = open_store(location, "serve")
        try:
            return [await reader.kept_answer(key) for key in (*ANSWERS, "call/none")]
        finally:
            await reader.close()

    return asyncio.run(ask())


def _check(location: StoreLocation) -> None:
    first = next(iter(ANSWERS))
    _keep(location, {first: b'{"result":"an older answer"}'})
    _keep(location, ANSWERS)  # the same key again: the newer answer stands
    expected = [*ANSWERS.values(), None]
    assert _read(location) == (sorted(ANSWERS.items()), expected)  # and none of the store's own meta keys
    assert _served(location) == expected


def test_sqlite_kept_answers(store_copy: Path, tmp_path: Path) -> None:
    _check(store_copy)
    copied = tmp_path / "copied.db"
    copy_store(store_copy, copied)
    assert _read(copied)[0] == sorted(ANSWERS.items())


def test_postgres_kept_answers(pg_copy: str, postgres: PostgresServer, store_copy: Path) -> None:
    _check(pg_copy)
    into_sqlite = store_copy.with_name("from-pg.db")
    copy_store(pg_copy, into_sqlite)
    assert _read(into_sqlite)[0] == sorted(ANSWERS.items())
    into_pg = postgres.create_database("answers-copy")
    copy_store(into_sqlite, into_pg)
    assert _read(into_pg)[0] == sorted(ANSWERS.items())
