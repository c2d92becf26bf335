"""The SQLite serving reader's read transactions: lookups share one for at most
VERSION_CHECK_SECONDS, and an idle server holds no lock a writer would wait for."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest

from nearrpc.sample import SampleChain
from nearrpc.store import open_store
from nearrpc.store.sqlite_serving import VERSION_CHECK_SECONDS


def _exclusive_lock_now(path: Path) -> bool:
    """Whether another connection gets the store's exclusive lock without waiting."""
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")
        other.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError as exc:
        assert "locked" in str(exc)
        return False
    finally:
        other.close()


def test_lookups_share_a_read_that_ends_by_itself_when_the_server_is_idle(
    store_copy: Path, chain: SampleChain
) -> None:
    served = open_store(store_copy, "serve")

    async def scenario() -> tuple[bool, bool, bool]:
        try:
            served.version()
            block = await served.block_by_height(chain.blocks[5].height)
            assert block == chain.blocks[5]
            held = not _exclusive_lock_now(store_copy)  # the read is still open: its lock is held
            await asyncio.sleep(VERSION_CHECK_SECONDS * 20)  # idle: nothing else happens
            released = _exclusive_lock_now(store_copy)
            await served.block_by_hash(chain.blocks[6].hash)
            served.version()  # a version check after the snapshot's time is up ends it too
            await asyncio.sleep(VERSION_CHECK_SECONDS * 2)
            served.version()
            return held, released, _exclusive_lock_now(store_copy)
        finally:
            await served.close()

    assert asyncio.run(scenario()) == (True, True, True)


@pytest.mark.parametrize("requests", [1, 50])
def test_a_write_committed_while_served_is_seen_within_a_version_check(
    store_copy: Path, chain: SampleChain, requests: int
) -> None:
    """An account state written by another writer (a thread: an import in another process) right
    after the server has read: the writer waits at most the snapshot's life for the server's
    lock, and the write is seen by the first request after the next version check."""
    served = open_store(store_copy, "serve")
    account = chain.account_states[0].account_id
    head = chain.blocks[-1].height

    def write(view: bytes | None) -> None:
        with open_store(store_copy, "write") as writer, writer.batch() as batch:
            batch.put_account_state("new-account.test.near", head, view)

    async def scenario() -> tuple[bytes | None, bytes | None]:
        try:
            served.version()
            for _ in range(requests):
                before = await served.account_json("new-account.test.near", head)
            started = time.monotonic()
            await asyncio.to_thread(write, await served.account_json(account, head))
            assert time.monotonic() - started < 1.0  # not a busy timeout (5 s)
            await asyncio.sleep(VERSION_CHECK_SECONDS * 2)
            served.version()
            return before, await served.account_json("new-account.test.near", head)
        finally:
            await served.close()

    before, after = asyncio.run(scenario())
    assert before is None and after is not None
