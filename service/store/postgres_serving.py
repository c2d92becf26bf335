"""The server's PostgreSQL reader: a pool of read-only connections and a watcher.

Lookups borrow a pooled connection (pg_pool.py: first come, first served) and run one
prepared statement each (psycopg prepares a statement on a connection after its fifth use);
the lookups of blocks and account states that arrive together share one (pg_batch.py).
A background task polls the store's change counters every `POLL_SECONDS` over a connection
of its own, which makes `version()` free per request (at
most `POLL_SECONDS` plus one round trip stale; a commit of this process, the sandbox's chain
writer's, hands its counters over at once: `committed`) and tells when the database is gone:

- when a poll fails, the pool is closed (lookups waiting in it for a connection fail at once)
  and, while the database stays unreachable, every lookup fails at once with
  StoreUnavailableError (the server answers INTERNAL_ERROR, /health 503) instead of queuing
  for `timeout` seconds, and `unreachable` says why (the endpoint reads it per request: no kept
  answer is served meanwhile);
- a lookup that fails on a broken connection wakes the watcher at once;
- when a poll succeeds again, a fresh pool is opened, so service resumes within one poll of
  the database's return.

Everything is created on first use, inside the event loop of the worker that serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any, Final

import psycopg

from nearrpc.store.base import (
    BlockJsonFromBlocks,
    StoredBlock,
    StoredChunk,
    StoredEpoch,
    StoredReceipt,
    StoredTransaction,
    StoredValidators,
    StoreInfo,
    StoreOptions,
    StoreUnavailableError,
    StoreVersion,
)
from nearrpc.store.layout import (
    ACCOUNT_COUNT,
    CLIENT_CONFIG,
    FETCHED_TABLE,
    GENESIS_CONFIG,
    GENESIS_HASH,
    INFO_KEYS,
    KEPT_ANSWER_PREFIX,
    MAX_HEIGHT,
    VERSION_META_KEYS,
    block_from_row,
    chunk_from_row,
    epoch_from_row,
    height_in_range,
    info_from,
    receipt_from_row,
    transaction_from_row,
    validators_from_row,
    version_from_rows,
)
from nearrpc.store.pg_batch import BatchedLookup
from nearrpc.store.pg_connect import connect_kwargs, describe_target, reason, store_error
from nearrpc.store.pg_pool import ConnectionPool
from nearrpc.store.postgres import BATCH_QUERIES, LOOKUP_QUERIES
from nearrpc.store.sql import (
    access_key_changes_from_rows,
    account_changes_from_rows,
    contract_data_changes_from_rows,
    contract_state_lookup,
    latest_access_keys,
    receipts_from_rows,
    transactions_from_rows,
)

POLL_SECONDS: Final = 0.2

log = logging.getLogger("nearrpc.store")


class PostgresServingReader(BlockJsonFromBlocks):  # a block's view through the batched lookups
    """`ServingReader` over PostgreSQL."""

    def __init__(self, location: str, options: StoreOptions) -> None:
        self._location = location
        self._options = options
        self._target = describe_target(location)
        self._pool: ConnectionPool | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._polled = asyncio.Event()  # set once the first poll has ended, either way
        self._wake = asyncio.Event()
        self._version: StoreVersion | None = None
        self._notices = 0  # commits told of (`committed`): a poll begun before one is not newer
        # why the last poll failed, one line; None while the database answers (store.Reachability:
        # the endpoint reads it per request and answers INTERNAL_ERROR at once while it is set)
        self.unreachable: str | None = None
        self._retired: set[asyncio.Task[None]] = set()
        # the lookups real traffic spreads over many keys, each batched (pg_batch.py)
        self._blocks_by_height = BatchedLookup[int, StoredBlock](self._fetch_blocks_by_height)
        self._blocks_by_hash = BatchedLookup[str, StoredBlock](self._fetch_blocks_by_hash)
        self._accounts = BatchedLookup[tuple[str, int], bytes](self._fetch_accounts)
        self._contract_values = BatchedLookup[tuple[str, bytes, int], bytes](self._fetch_contract_values)
        self._has_fetched_table = False

    # -- pool and watcher

    async def _start(self) -> None:
        if self._watcher is None:
            self._watcher = asyncio.get_running_loop().create_task(self._watch())
        await self._polled.wait()

    async def _poll(self, conn: psycopg.AsyncConnection[Any] | None) -> psycopg.AsyncConnection[Any]:
        """Read the change counters (connecting first when needed); a failed poll closes the
        connection, so the next one starts afresh."""
        notices = self._notices
        if conn is None:
            conn = await psycopg.AsyncConnection.connect(
                self._location, **connect_kwargs(self._options, read_only=True)
            )
        try:
            cursor = await conn.execute(LOOKUP_QUERIES["metas"], (list(VERSION_META_KEYS),))
            polled = version_from_rows(await cursor.fetchall())
            if notices == self._notices:  # else a commit told of meanwhile is as new or newer
                self._version = polled
        except BaseException:
            with contextlib.suppress(Exception):
                await conn.close()
            raise
        return conn

    async def _watch(self) -> None:
        conn: psycopg.AsyncConnection[Any] | None = None
        try:
            while True:
                conn = await self._watch_once(conn)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), POLL_SECONDS)
                self._wake.clear()
        finally:
            if conn is not None:
                await conn.close()

    async def _watch_once(self, conn: psycopg.AsyncConnection[Any] | None) -> psycopg.AsyncConnection[Any] | None:
        """One poll; the watcher's connection afterwards (None when it broke)."""
        try:
            conn = await asyncio.wait_for(self._poll(conn), self._options.timeout)
        except (psycopg.Error, OSError, TimeoutError) as exc:
            why = reason(exc, self._location) or type(exc).__name__
            if self.unreachable is None:
                log.error("PostgreSQL %s is unreachable: %s", self._target, why)
            self.unreachable = f"PostgreSQL {self._target} is unreachable: {why}"
            self._retire_pool()
            conn = None
        else:
            if self.unreachable is not None:
                log.warning("PostgreSQL %s answers again; opening a new connection pool", self._target)
                self.unreachable = None
            if self._pool is None:
                self._pool = ConnectionPool(self._location, self._options)
                self._pool.fill()
        self._polled.set()
        return conn

    def _retire_pool(self) -> None:
        """Close the pool in the background: lookups waiting in it fail now, not after `timeout`."""
        old, self._pool = self._pool, None
        if old is not None:
            task = asyncio.get_running_loop().create_task(old.close())
            self._retired.add(task)
            task.add_done_callback(self._retired.discard)

    # -- lookups

    async def _fetch(self, name: str, *params: object, many: bool = False) -> Any:
        return await self._fetch_sql(LOOKUP_QUERIES[name], f"{name} lookup", *params, many=many)

    async def _fetch_sql(self, sql: str, what: str, *params: object, many: bool = False) -> Any:
        if not self._polled.is_set():
            await self._start()
        pool = self._pool
        if self.unreachable is not None or pool is None:
            raise StoreUnavailableError(self.unreachable or f"PostgreSQL {self._target} is unreachable: no pool")
        conn = await pool.acquire()
        broken = True  # until the lookup ends normally or with an error that leaves it usable
        try:
            cursor = await conn.execute(sql, params, binary=True)
            rows = await (cursor.fetchall() if many else cursor.fetchone())
            broken = False
            return rows
        except psycopg.Error as exc:
            broken = isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)
            if broken:
                self._wake.set()  # let the watcher look now rather than at its next poll
            raise store_error(exc, self._location, what) from None
        finally:
            pool.release(conn, broken=broken)

    async def _fetch_blocks_by_height(self, heights: Sequence[int]) -> dict[int, StoredBlock]:
        rows = await self._fetch_sql(BATCH_QUERIES["blocks_by_height"], "block_by_height lookup", heights, many=True)
        return {block.height: block for block in map(block_from_row, rows) if block is not None}

    async def _fetch_blocks_by_hash(self, hashes: Sequence[str]) -> dict[str, StoredBlock]:
        rows = await self._fetch_sql(BATCH_QUERIES["blocks_by_hash"], "block_by_hash lookup", hashes, many=True)
        return {block.hash: block for block in map(block_from_row, rows) if block is not None}

    async def _fetch_accounts(self, asked: Sequence[tuple[str, int]]) -> dict[tuple[str, int], bytes]:
        accounts, heights = [account for account, _ in asked], [height for _, height in asked]
        rows = await self._fetch_sql(BATCH_QUERIES["accounts"], "account lookup", accounts, heights, many=True)
        return {(account, height): bytes(view) for account, height, view in rows if view is not None}

    async def _fetch_contract_values(
        self, asked: Sequence[tuple[str, bytes, int]]
    ) -> dict[tuple[str, bytes, int], bytes]:
        columns = [list(column) for column in zip(*asked, strict=True)]
        rows = await self._fetch_sql(BATCH_QUERIES["contract_values"], "contract_value lookup", *columns, many=True)
        found = ((account, bytes(key), height, value) for account, key, height, value in rows)
        return {(account, key, height): bytes(value) for account, key, height, value in found if value is not None}

    async def _metas(self, keys: list[str]) -> dict[str, str]:
        return {key: value for key, value in await self._fetch("metas", keys, many=True)}

    async def _config(self, name: str) -> bytes | None:
        row = await self._fetch("config", name)
        return None if row is None else bytes(row[0])

    async def genesis_config_json(self) -> bytes | None:
        return await self._config(GENESIS_CONFIG)

    async def client_config_json(self) -> bytes | None:
        return await self._config(CLIENT_CONFIG)

    async def head(self) -> StoredBlock | None:
        return block_from_row(await self._fetch("head"))

    async def block_by_height(self, height: int) -> StoredBlock | None:
        return await self._blocks_by_height.load(height) if height_in_range(height) else None

    async def block_by_hash(self, block_hash: str) -> StoredBlock | None:
        return await self._blocks_by_hash.load(block_hash)


    async def genesis_block(self) -> StoredBlock | None:
        row = await self._fetch("meta", "genesis_height")
        return None if row is None else await self.block_by_height(int(row[0]))

    async def earliest_block(self) -> StoredBlock | None:
        return block_from_row(await self._fetch("earliest"))

    async def epoch(self, epoch_id: str) -> StoredEpoch | None:
        return epoch_from_row(await self._fetch("epoch", epoch_id))

    async def account_json(self, account_id: str, height: int) -> bytes | None:
        if height < 0:
            return None
        return await self._accounts.load((account_id, min(height, (1 << 63) - 1)))

    async def access_key_json(self, account_id: str, public_key: str, height: int) -> bytes | None:
        if height < 0:
            return None
        row = await self._fetch("access_key", account_id, public_key, min(height, MAX_HEIGHT))
        return None if row is None or row[0] is None else bytes(row[0])

    async def access_keys_json(self, account_id: str, height: int) -> list[tuple[str, bytes]]:
        rows = await self._fetch("access_keys", account_id, min(max(height, -1), MAX_HEIGHT), many=True)
        return latest_access_keys(rows)

    async def contract_code(self, code_hash: str) -> bytes | None:
        row = await self._fetch("contract_code", code_hash)
        return None if row is None else bytes(row[0])

    async def contract_value(self, account_id: str, key: bytes, height: int) -> bytes | None:
        if height < 0:
            return None
        return await self._contract_values.load((account_id, bytes(key), min(height, MAX_HEIGHT)))

    def inline_contract_values(self) -> None:
        return None  # a lookup waits on the database

    async def contract_state(
        self, account_id: str, prefix: bytes, height: int, limit: int
    ) -> list[tuple[bytes, bytes]]:
        if height < 0 or limit <= 0:
            return []
        name, *params = contract_state_lookup(account_id, prefix, height, limit)
        return [(bytes(key), bytes(value)) for key, value in await self._fetch(name, *params, many=True)]

    async def chunk(self, chunk_hash: str) -> StoredChunk | None:
        return chunk_from_row(await self._fetch("chunk", chunk_hash))

    async def transaction(self, tx_hash: str, signer_id: str) -> StoredTransaction | None:
        return transaction_from_row(await self._fetch("transaction", tx_hash))  # by hash alone (ChainReader)

    async def receipt(self, receipt_id: str) -> StoredReceipt | None:
        return receipt_from_row(await self._fetch("receipt", receipt_id))

    async def validators(self, epoch_id: str) -> StoredValidators | None:
        return validators_from_row(await self._fetch("validators", epoch_id))

    async def _at_height(self, name: str, height: int) -> list[Any]:
        return await self._fetch(name, height, many=True) if height_in_range(height) else []

    async def receipts_executed_at(self, height: int) -> list[StoredReceipt]:
        return receipts_from_rows(await self._at_height("receipts_at", height))

    async def transactions_at(self, height: int) -> list[StoredTransaction]:
        return transactions_from_rows(await self._at_height("transactions_at", height))

    async def account_changes(self, height: int) -> list[tuple[str, bytes | None]]:
        return account_changes_from_rows(await self._at_height("account_changes", height))

    async def access_key_changes(self, height: int) -> list[tuple[str, str, bytes | None]]:
        return access_key_changes_from_rows(await self._at_height("access_key_changes", height))

    async def contract_data_changes(self, height: int) -> list[tuple[str, bytes, bytes | None]]:
        return contract_data_changes_from_rows(await self._at_height("contract_data_changes", height))

    async def fetched(self, key: str) -> bool:
        if not self._has_fetched_table:  # the optional table: once seen, it stays
            found = await self._fetch_sql(f"SELECT to_regclass('{FETCHED_TABLE}') IS NOT NULL", "table lookup")
            self._has_fetched_table = bool(found[0])
        return self._has_fetched_table and await self._fetch("fetched", key) is not None

    async def kept_answer(self, key: str) -> bytes | None:
        row = await self._fetch("meta", KEPT_ANSWER_PREFIX + key)
        return None if row is None else str(row[0]).encode()

    async def genesis_hash(self) -> str | None:
        row = await self._fetch("meta", GENESIS_HASH)
        return None if row is None else str(row[0])

    async def info(self) -> StoreInfo:
        return info_from(await self._metas(INFO_KEYS), await self.earliest_block(), await self.head())

    async def account_count(self) -> int:
        row = await self._fetch_sql(ACCOUNT_COUNT, "counting accounts")
        return int(row[0]) if row is not None else 0

    async def epoch_start_height(self, block: StoredBlock) -> int | None:
        previous = await self._fetch("previous_epoch_block", block.height, block.epoch_id)
        if previous is None:
            earliest = await self.earliest_block()
            genesis = await self._fetch("meta", "genesis_height")
            if earliest is None or genesis is None or earliest.height != int(genesis[0]):
                return None
            return earliest.height if earliest.epoch_id == block.epoch_id else None
        first = block_from_row(await self._fetch("next_block", previous[0]))
        return first.height if first is not None and first.prev_hash == previous[1] else None

    def version(self) -> StoreVersion:
        """The counters of the watcher's last poll (at most POLL_SECONDS old), or of a commit told
        of since (`committed`); before the first poll, and while the database is down,
        StoreUnavailableError."""
        if self._watcher is None:
            self._watcher = asyncio.get_running_loop().create_task(self._watch())
        if self.unreachable is not None or self._version is None:
            raise StoreUnavailableError(self.unreachable or f"PostgreSQL {self._target} is unreachable: not polled yet")
        return self._version

    def committed(self, version: StoreVersion) -> None:
        """`CommitListener`: the counters of a commit this process made are the database's now
        (the store has one writer), so they are answered at once rather than after the next poll;
        the lookups read the database itself, which holds the commit already."""
        self._notices += 1
        self._version = version

    async def close(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
        for task in list(self._retired):
            with contextlib.suppress(Exception):
                await task

