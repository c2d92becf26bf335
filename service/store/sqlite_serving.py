"""The server's SQLite reader (`SqliteServingReader`): lookups inline on the event loop inside
short read transactions, the change counters read at most once a millisecond, and a store file
replaced at its path followed. A view call's storage reads on a worker thread run there, on the
thread's own connection (sqlite_threads.py)."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from nearrpc.store.base import (
    StoredBlock,
    StoredChunk,
    StoredEpoch,
    StoredReceipt,
    StoredTransaction,
    StoredValidators,
    StoreError,
    StoreInfo,
    StoreVersion,
)
from nearrpc.store.sqlite import SqliteChainReader, open_reader
from nearrpc.store.sqlite_threads import Replaced, ThreadReaders

log = logging.getLogger("nearrpc.store")

VERSION_CHECK_SECONDS: Final = 0.001  # how old a serving reader's change counters may be
FILE_CHECK_SECONDS: Final = 0.25  # how soon a serving reader notices its file was replaced
# the longest a worker waits for a read it hands the event loop (only while the file at the path
# is not the one served yet): a loop that stopped never answers
LOOP_READ_SECONDS: Final = 10.0


class SqliteServingReader:
    """`ServingReader` over an SQLite reader. SQLite lookups take microseconds and never wait on
    a network, so they run inline on the event loop (a thread hop would cost more).
    `version()` reads SQLite's data_version at most once per VERSION_CHECK_SECONDS: the pragma
    costs about 4 us, a tenth of a whole request, and the server asks before every request. An
    import's commit is thus seen by every request that starts a millisecond after it.

    A store file replaced while served (`nearrpc sample --force`, a copy moved into place, a
    restored backup) is another file at the same path, which data_version cannot see: at most
    once per FILE_CHECK_SECONDS the path's identity (device, inode) is compared with the open
    file's. A new file that opens as a store is served from then on, with a new generation in
    the version, so everything cached is dropped; one that does not (or a path left empty)
    leaves the open file served, and says why once in the log.

    Lookups run inside a read transaction that lasts at most VERSION_CHECK_SECONDS (ended by a
    timer, or by the next version check), so the statements of a busy millisecond share one lock
    and a writer waits at most that long for it, as it would for the version check anyway.
    """

    def __init__(self, reader: SqliteChainReader, path: Path, identity: tuple[int, int]) -> None:
        self._reader = reader
        self._reading = False  # a read transaction is open (see _in_read)
        self._path = path
        self._identity = identity
        self._generation = 0
        self._version_checked = -VERSION_CHECK_SECONDS
        self._version: StoreVersion | None = None
        self._read_version: StoreVersion | None = None  # the reader's counters it was made from
        self._file_checked = time.monotonic()
        self._not_followed: str | None = None  # why the file at the path is not served (logged once)
        self._loop: asyncio.AbstractEventLoop | None = None  # the event loop it serves on
        self._threads = ThreadReaders(path, file_identity)  # other threads' connections
        self._calls = 0  # view calls handed a reading function (inline_contract_values)

    def _follow_a_replaced_file(self) -> None:
        try:
            identity = file_identity(self._path)
        except OSError as exc:
            self._keep_serving(f"{self._path} cannot be read ({exc.strerror or exc})")
            return
        if identity == self._identity:
            return
        try:
            reader = open_reader(self._path)
            info = reader.info()
        except StoreError as exc:
            self._keep_serving(f"{self._path} was replaced by a file that cannot be served: {exc}")
            return
        self._end_read()
        previous, self._reader, self._identity = self._reader, reader, identity
        self._generation += 1
        self._threads.drop()
        self._version, self._not_followed = None, None
        previous.close()
        log.warning("%s was replaced; serving the new file (chain %s, schema %s)", self._path, info.chain_id,
                    info.schema_version)  # fmt: skip

    def _keep_serving(self, why: str) -> None:
        if why != self._not_followed:
            log.error("%s; still serving the store as it was when opened", why)
            self._not_followed = why

    def _in_read(self) -> SqliteChainReader:
        """The reader, inside a read transaction (started now if none is open)."""
        if not self._reading:
            self._reader.begin_read()
            self._reading = True
            loop = self._loop = asyncio.get_running_loop()
            loop.call_later(VERSION_CHECK_SECONDS, self._end_read)
        return self._reader

    def _end_read(self) -> None:
        if self._reading:
            self._reading = False
            try:
                self._reader.end_read()
            except StoreError as failure:  # the next lookup meets the cause and answers with it
                log.error("%s", failure)

    async def genesis_config_json(self) -> bytes | None:
        return self._in_read().genesis_config_json()

    async def client_config_json(self) -> bytes | None:
        return self._in_read().client_config_json()

    async def head(self) -> StoredBlock | None:
        return self._in_read().head()

    async def block_by_height(self, height: int) -> StoredBlock | None:
        return self._in_read().block_by_height(height)

    async def block_by_hash(self, block_hash: str) -> StoredBlock | None:
        return self._in_read().block_by_hash(block_hash)

    async def block_json_by_height(self, height: int) -> bytes | None:
        return self._in_read().block_json_by_height(height)

    async def block_json_by_hash(self, block_hash: str) -> bytes | None:
        return self._in_read().block_json_by_hash(block_hash)

    async def genesis_block(self) -> StoredBlock | None:
        return self._in_read().genesis_block()

    async def earliest_block(self) -> StoredBlock | None:
        return self._in_read().earliest_block()

    async def epoch(self, epoch_id: str) -> StoredEpoch | None:
        return self._in_read().epoch(epoch_id)

    async def account_json(self, account_id: str, height: int) -> bytes | None:
        return self._in_read().account_json(account_id, height)

    async def access_key_json(self, account_id: str, public_key: str, height: int) -> bytes | None:
        return self._in_read().access_key_json(account_id, public_key, height)

    async def access_keys_json(self, account_id: str, height: int) -> list[tuple[str, bytes]]:
        return self._in_read().access_keys_json(account_id, height)

    async def contract_code(self, code_hash: str) -> bytes | None:
        return self._in_read().contract_code(code_hash)

    async def contract_value(self, account_id: str, key: bytes, height: int) -> bytes | None:
        return self._in_read().contract_value(account_id, key, height)

    def inline_contract_values(self) -> Callable[[str, bytes, int], bytes | None]:
        # one per call: a worker's reads for it begin a read transaction of their own (sqlite_threads)
        self._calls += 1
        return functools.partial(self._contract_value_now, self._calls)

    def _contract_value_now(self, call: int, account_id: str, key: bytes, height: int) -> bytes | None:
        if asyncio._get_running_loop() is not None:
            return self._in_read().contract_value(account_id, key, height)
        # another thread (a view call's worker): its own connection, no trip to the loop
        value = self._threads.read(
            lambda reader: reader.contract_value(account_id, key, height),
            self._identity,
            self._generation,
            self._loop,
            call,
        )
        if not isinstance(value, Replaced):
            return value
        # the file at the path is not the one served yet (replaced, followed within
        # FILE_CHECK_SECONDS): the loop's connection reads it, the loop thread waits for nothing
        loop = self._loop
        if loop is None:
            raise StoreError(f"{self._path} was replaced before anything was read from it")
        read = asyncio.run_coroutine_threadsafe(self.contract_value(account_id, key, height), loop)
        try:
            return read.result(LOOP_READ_SECONDS)
        except TimeoutError:
            read.cancel()
            raise StoreError(f"{self._path}: a read on the event loop took over {LOOP_READ_SECONDS} s") from None

    async def contract_state(
        self, account_id: str, prefix: bytes, height: int, limit: int
    ) -> list[tuple[bytes, bytes]]:
        return self._in_read().contract_state(account_id, prefix, height, limit)

    async def chunk(self, chunk_hash: str) -> StoredChunk | None:
        return self._in_read().chunk(chunk_hash)

    async def transaction(self, tx_hash: str, signer_id: str) -> StoredTransaction | None:
        return self._in_read().transaction(tx_hash, signer_id)

    async def receipt(self, receipt_id: str) -> StoredReceipt | None:
        return self._in_read().receipt(receipt_id)

    async def validators(self, epoch_id: str) -> StoredValidators | None:
        return self._in_read().validators(epoch_id)

    async def receipts_executed_at(self, height: int) -> list[StoredReceipt]:
        return self._in_read().receipts_executed_at(height)

    async def transactions_at(self, height: int) -> list[StoredTransaction]:
        return self._in_read().transactions_at(height)

    async def account_changes(self, height: int) -> list[tuple[str, bytes | None]]:
        return self._in_read().account_changes(height)

    async def access_key_changes(self, height: int) -> list[tuple[str, str, bytes | None]]:
        return self._in_read().access_key_changes(height)

    async def contract_data_changes(self, height: int) -> list[tuple[str, bytes, bytes | None]]:
        return self._in_read().contract_data_changes(height)

    async def fetched(self, key: str) -> bool:
        return self._in_read().fetched(key)

    async def kept_answer(self, key: str) -> bytes | None:
        return self._in_read().kept_answer(key)

    async def genesis_hash(self) -> str | None:
        return self._in_read().genesis_hash()

    async def info(self) -> StoreInfo:
        return self._in_read().info()

    async def account_count(self) -> int:
        return self._in_read().account_count()

    async def epoch_start_height(self, block: StoredBlock) -> int | None:
        return self._in_read().epoch_start_height(block)

    def version(self) -> StoreVersion:
        now = time.monotonic()
        if now - self._file_checked >= FILE_CHECK_SECONDS:
            self._file_checked = now
            self._follow_a_replaced_file()
        if self._version is None or now - self._version_checked >= VERSION_CHECK_SECONDS:
            self._end_read()  # a new snapshot, in which data_version sees what was committed since
            read = self._reader.version()
            if read is not self._read_version or self._version is None:
                # the reader hands back the same counters until a commit; dataclasses.replace
                # costs microseconds, once a millisecond on a busy server
                self._read_version = read
                self._version = dataclasses.replace(read, generation=self._generation)
            self._version_checked = now
        return self._version

    def committed(self, version: StoreVersion) -> None:
        """`CommitListener`: the commit is in the file already; the open read transaction (an
        older snapshot) ends, and the next `version()` reads data_version again, whatever its
        age. The counters are SQLite's own to read (with the generation), not the writer's."""
        del version
        self._end_read()
        self._version_checked = float("-inf")

    async def close(self) -> None:
        self._end_read()
        self._threads.close()
        self._reader.close()


def file_identity(path: Path) -> tuple[int, int]:
    found = os.stat(path)
    return found.st_dev, found.st_ino


def open_serving_reader(path: Path) -> SqliteServingReader:
    """The server's reader of the store at `path`, which follows a file replaced there."""
    identity = file_identity(path) if path.is_file() else (0, 0)  # taken first: a later file is followed
    return SqliteServingReader(open_reader(path), path, identity)
