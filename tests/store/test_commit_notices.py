"""`CommitListener` on both serving readers: told of a commit by the process's own writer (the
sandbox's chain writer), the reader's next `version()` and lookups see it at once, however rarely
it checks on its own; a PostgreSQL poll begun before a notice never takes the reader back."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from nearrpc.sample import SampleChain
from nearrpc.store import CommitListener, StoreLocation, open_store, postgres_serving, sqlite_serving
from nearrpc.store.postgres_serving import PostgresServingReader

NEW = "new-account.test.near"


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_notice_makes_the_next_version_and_lookup_see_the_commit(
    backend: str, request: pytest.FixtureRequest, chain: SampleChain, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the readers' own checks slowed to a minute: only the notice can make them see the commit
    monkeypatch.setattr(sqlite_serving, "VERSION_CHECK_SECONDS", 60.0)
    monkeypatch.setattr(postgres_serving, "POLL_SECONDS", 60.0)
    location: StoreLocation = request.getfixturevalue("store_copy" if backend == "sqlite" else "pg_copy")
    head = chain.blocks[-1].height
    account = chain.account_states[0].account_id

    async def scenario() -> None:
        with open_store(location, "write") as writer:  # first, as the chain writer (SQLite's WAL mode)
            served = open_store(location, "serve")
            assert isinstance(served, CommitListener)
            try:
                assert await served.account_json(NEW, head) is None  # SQLite: a read snapshot is open
                before = served.version()
                view = await served.account_json(account, head)
                with writer.batch() as batch:
                    batch.put_account_state(NEW, head, view)
                assert served.version() == before  # not noticed on its own within the minute
                served.committed(writer.reader().version())
                assert served.version().changed_since(before) == {"accounts"}
                assert await served.account_json(NEW, head) == view
            finally:
                await served.close()

    asyncio.run(scenario())


def test_a_postgresql_poll_begun_before_a_notice_does_not_take_it_back(pg_copy: str) -> None:
    async def scenario() -> None:
        served = open_store(pg_copy, "serve")
        assert isinstance(served, PostgresServingReader)
        try:
            await served.head()  # the first poll
            polled = served.version()
            told = dataclasses.replace(polled, accounts=polled.accounts + 1)  # a commit the poll cannot have read
            poll = asyncio.get_running_loop().create_task(served._poll(None))
            await asyncio.sleep(0)  # the poll has begun: it waits for its connection
            served.committed(told)
            conn = await poll
            await conn.close()
            assert served.version() == told
        finally:
            await served.close()

    asyncio.run(scenario())


def test_without_a_notice_the_postgresql_poll_still_follows_the_database(pg_copy: str, chain: SampleChain) -> None:
    """A server that only reads (no notice ever) sees a commit at its next poll, as before; the
    writer's counters, told afterwards, are the very ones the poll read (no change to drop)."""

    async def scenario() -> None:
        served = open_store(pg_copy, "serve")
        assert isinstance(served, CommitListener)
        try:
            await served.head()
            before = served.version()
            with open_store(pg_copy, "write") as writer:
                with writer.batch() as batch:
                    batch.put_account_state(NEW, chain.blocks[-1].height, None)
                await asyncio.sleep(postgres_serving.POLL_SECONDS * 3)
                polled = served.version()
                assert polled.changed_since(before) == {"accounts"}
                served.committed(writer.reader().version())  # a writer's counters are the poll's: no change
                assert served.version() == polled
        finally:
            await served.close()

    asyncio.run(scenario())


def test_an_sqlite_reader_reads_the_counters_it_is_told_of_itself(store_copy: Path) -> None:
    """SQLite's reader takes the notice as a cue and reads the counters itself (with its own
    generation, which follows a replaced file), never the writer's copy as given."""

    async def scenario() -> None:
        with open_store(store_copy, "write") as writer:
            served = open_store(store_copy, "serve")
            assert isinstance(served, CommitListener)
            try:
                told = dataclasses.replace(writer.reader().version(), accounts=10**9)
                served.committed(told)
                assert served.version() == writer.reader().version() != told
            finally:
                await served.close()

    asyncio.run(scenario())
