"""The SQLite serving reader's contract reads from a thread other than the event loop's (a view
call on a worker, service/store/sqlite_threads.py): read there on the thread's own connection,
without the loop (which may be busy), inside a read the loop ends by itself; on the file served,
also while another file is at the path and before the server follows it."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from nearrpc.sample import SampleChain
from nearrpc.store import StoreError, open_store
from nearrpc.store.sqlite_serving import FILE_CHECK_SECONDS, VERSION_CHECK_SECONDS

ACCOUNT, KEY = "threads.localnet", b"STATE"


def _put_value(path: Path, height: int, value: bytes) -> None:
    with open_store(path, "write") as writer, writer.batch() as batch:
        batch.put_contract_data(ACCOUNT, KEY, height, value)


def _exclusive_lock_now(path: Path) -> bool:
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")
        other.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        other.close()


def test_a_worker_reads_without_the_loop_in_a_read_the_loop_ends(store_copy: Path, chain: SampleChain) -> None:
    height = chain.blocks[-1].height
    _put_value(store_copy, height, b"one")
    served = open_store(store_copy, "serve")
    read = served.inline_contract_values()
    assert read is not None
    pool = ThreadPoolExecutor(1)

    async def scenario() -> tuple[bytes | None, bytes | None, bool, bool]:
        try:
            on_loop = read(ACCOUNT, KEY, height)  # on the loop: its own connection
            # the loop waits here without running anything: a read that needed it would never end
            on_worker = pool.submit(read, ACCOUNT, KEY, height).result(timeout=10)
            await asyncio.sleep(VERSION_CHECK_SECONDS * 20)  # the loop's read ended meanwhile
            pool.submit(read, ACCOUNT, KEY, height - 1).result(timeout=10)
            held = not _exclusive_lock_now(store_copy)  # the worker's read is open
            await asyncio.sleep(VERSION_CHECK_SECONDS * 20)  # idle: the loop ends it
            return on_loop, on_worker, held, _exclusive_lock_now(store_copy)
        finally:
            await served.close()

    try:
        assert asyncio.run(scenario()) == (b"one", b"one", True, True)
        with pytest.raises(StoreError, match="closed"):
            pool.submit(read, ACCOUNT, KEY, height).result(timeout=10)  # its connection went with the store
    finally:
        pool.shutdown()


def test_a_worker_reads_the_file_served_until_the_server_follows_a_replaced_one(
    store_copy: Path, chain: SampleChain, tmp_path: Path
) -> None:
    height = chain.blocks[-1].height
    _put_value(store_copy, height, b"old")
    replacement = tmp_path / "replacement.db"
    shutil.copyfile(store_copy, replacement)
    _put_value(replacement, height, b"new")
    served = open_store(store_copy, "serve")
    read = served.inline_contract_values()
    assert read is not None
    first, second = ThreadPoolExecutor(1), ThreadPoolExecutor(1)

    async def on(pool: ThreadPoolExecutor) -> bytes | None:
        return await asyncio.get_running_loop().run_in_executor(pool, read, ACCOUNT, KEY, height)

    async def scenario() -> list[bytes | None]:
        try:
            served.version()
            seen = [await served.contract_value(ACCOUNT, KEY, height), await on(first)]
            os.replace(replacement, store_copy)
            # not followed yet: the first worker's connection is to the file served, and the
            # second, opening one now, would open the new file: it reads through the loop
            seen += [await on(first), await on(second)]
            await asyncio.sleep(FILE_CHECK_SECONDS + 0.05)
            served.version()  # follows the new file
            seen += [await served.contract_value(ACCOUNT, KEY, height), await on(first), await on(second)]
            return seen
        finally:
            await served.close()

    try:
        assert asyncio.run(scenario()) == [b"old"] * 4 + [b"new"] * 3
    finally:
        first.shutdown()
        second.shutdown()


def test_a_workers_next_call_reads_what_was_committed_before_it(store_copy: Path, chain: SampleChain) -> None:
    """Within a call a worker's reads share one snapshot; the next call's reads begin another, so
    they see what was committed before the call was handed over (its block resolved on the loop),
    even while the previous call's read is still open (here the loop never runs to end it)."""
    height = chain.blocks[-1].height
    pool = ThreadPoolExecutor(1)
    with open_store(store_copy, "write") as writer:  # the store in WAL mode: readers stay open across commits
        with writer.batch() as batch:
            batch.put_contract_data(ACCOUNT, KEY, height - 1, b"v1")
        served = open_store(store_copy, "serve")

        async def scenario() -> list[bytes | None]:
            try:
                served.version()
                await served.contract_value(ACCOUNT, KEY, height)  # the loop is known
                first = served.inline_contract_values()
                assert first is not None
                seen = [pool.submit(first, ACCOUNT, KEY, height).result(timeout=10)]
                with writer.batch() as batch:
                    batch.put_contract_data(ACCOUNT, KEY, height, b"v2")
                seen.append(pool.submit(first, ACCOUNT, KEY, height).result(timeout=10))
                second = served.inline_contract_values()
                assert second is not None
                seen.append(pool.submit(second, ACCOUNT, KEY, height).result(timeout=10))
                return seen
            finally:
                await served.close()

        try:
            assert asyncio.run(scenario()) == [b"v1", b"v1", b"v2"]
        finally:
            pool.shutdown()
