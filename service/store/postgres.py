"""PostgreSQL implementation of the chain store: one database per chain.

The tables are those of the SQLite store (see sqlite_schema.py) with PostgreSQL types: text keys in
the "C" collation (byte order, no locale work per comparison), BIGINT heights, BYTEA JSON kept
byte for byte. Readers use read-only autocommit sessions (each lookup is one statement on a
primary key or index); writers write each batch in one transaction, under a transaction-level
advisory lock so two writers queue instead of interleaving. A new store is created inside its
first batch's transaction (DDL is transactional here), so it appears with that commit or not
at all; `replace` drops and recreates the tables in the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from types import TracebackType
from typing import Any, Final

import psycopg

from nearrpc.store import checks
from nearrpc.store.base import (
    SCHEMA_VERSION,
    ChainReader,
    StoredBlock,
    StoredChunk,
    StoredEpoch,
    StoredReceipt,
    StoredTransaction,
    StoredValidators,
    StoreError,
    StoreIntegrityError,
    StoreNotFoundError,
    StoreOptions,
    StoreSchemaError,
    StoreVersion,
    WriteBatch,
)
from nearrpc.store.layout import (
    BLOCK_COLUMNS,
    CHUNK_COLUMNS,
    COUNTERS,
    EPOCH_COLUMNS,
    FETCHED_TABLE,
    OPTIONAL_TABLES,
    RECEIPT_COLUMNS,
    TABLES,
    TRANSACTION_COLUMNS,
    VALIDATORS_COLUMNS,
    VERSION_KEYS,
    VERSION_META_KEYS,
    version_from_rows,
)
from nearrpc.store.pg_connect import connect, describe_target, store_error
from nearrpc.store.sql import SqlChainReader, SqlWriteBatch

# A block's JSON (5.6 KB in the benchmark's store, mainnet's are alike) is kept inline and
# uncompressed, as SQLite keeps it: PostgreSQL's pglz cost 70 µs a block when written (half of a
# `store copy`) and again when read; the price is disk, 7.9 against 4.3 KB a block. (`SET
# STORAGE` in an ALTER TABLE: PostgreSQL before 16 refuses it inside CREATE TABLE.)
# The tables schema version 3 added (an upgrade from 2 creates them).
_SCHEMA_3_TABLES: Final = (
    """CREATE TABLE access_keys (
        account_id TEXT COLLATE "C" NOT NULL,
        public_key TEXT COLLATE "C" NOT NULL,
        height BIGINT NOT NULL,
        view_json BYTEA,
        PRIMARY KEY (account_id, public_key, height)
    )""",
    'CREATE TABLE contract_codes (code_hash TEXT COLLATE "C" PRIMARY KEY, code BYTEA NOT NULL)',
)
# The table schema version 4 added (an upgrade from 3 creates it). Its primary key answers a
# key's value at a height (one seek) and an account's keys from a prefix (one range scan);
# BYTEA compares byte by byte, no collation: nearcore's trie order.
_SCHEMA_4_TABLES: Final = (
    """CREATE TABLE contract_data (
        account_id TEXT COLLATE "C" NOT NULL,
        key BYTEA NOT NULL,
        height BIGINT NOT NULL,
        value BYTEA,
        PRIMARY KEY (account_id, key, height)
    )""",
)
# What schema version 5 added (an upgrade from 4 creates it): chunks, transactions and receipts
# by hash, each also by height (a block's own, in shard order), an epoch's validators, and the
# indexes that list the rows of account, key and contract state written at one height (the
# changes methods), in account order. Their JSON is kept inline and uncompressed, as a block's.
_SCHEMA_5_TABLES: Final = (
    """CREATE TABLE chunks (
        chunk_hash TEXT COLLATE "C" PRIMARY KEY,
        block_hash TEXT COLLATE "C" NOT NULL,
        height BIGINT NOT NULL,
        shard_id BIGINT NOT NULL,
        view_json BYTEA NOT NULL
    )""",
    "ALTER TABLE chunks ALTER COLUMN view_json SET STORAGE EXTERNAL",
    """CREATE TABLE transactions (
        tx_hash TEXT COLLATE "C" PRIMARY KEY,
        signer_id TEXT COLLATE "C" NOT NULL,
        block_hash TEXT COLLATE "C" NOT NULL,
        height BIGINT NOT NULL,
        shard_id BIGINT NOT NULL,
        view_json BYTEA NOT NULL
    )""",
    "ALTER TABLE transactions ALTER COLUMN view_json SET STORAGE EXTERNAL",
    "CREATE INDEX transactions_by_height ON transactions (height, shard_id, tx_hash)",
    """CREATE TABLE receipts (
        receipt_id TEXT COLLATE "C" PRIMARY KEY,
        block_hash TEXT COLLATE "C" NOT NULL,
        height BIGINT NOT NULL,
        shard_id BIGINT NOT NULL,
        view_json BYTEA NOT NULL,
        outcome_json BYTEA
    )""",
    "ALTER TABLE receipts ALTER COLUMN view_json SET STORAGE EXTERNAL",
    "CREATE INDEX receipts_by_height ON receipts (height, shard_id, receipt_id)",
    """CREATE TABLE validators (
        epoch_id TEXT COLLATE "C" PRIMARY KEY,
        height BIGINT NOT NULL,
        view_json BYTEA NOT NULL
    )""",
    "CREATE INDEX account_states_by_height ON account_states (height, account_id)",
    "CREATE INDEX access_keys_by_height ON access_keys (height, account_id, public_key)",
    "CREATE INDEX contract_data_by_height ON contract_data (height, account_id, key)",
)
# A B-tree entry holds at most about 2.7 KB: the storage keys this backend indexes stop at
# nearcore's max_length_storage_key of protocol 53 onwards (longer ones predate it).
MAX_INDEXED_KEY: Final = 2048
_DDL: Final = (
    "CREATE TABLE nearrpc_schema (version INTEGER NOT NULL)",
    'CREATE TABLE meta (key TEXT COLLATE "C" PRIMARY KEY, value TEXT NOT NULL)',
    'CREATE TABLE config (name TEXT COLLATE "C" PRIMARY KEY, json BYTEA NOT NULL)',
    """CREATE TABLE blocks (
        hash TEXT COLLATE "C" PRIMARY KEY,
        height BIGINT NOT NULL,
        prev_hash TEXT NOT NULL,
        epoch_id TEXT NOT NULL,
        last_final_block TEXT NOT NULL,
        last_ds_final_block TEXT NOT NULL,
        canonical BOOLEAN NOT NULL,
        view_json BYTEA NOT NULL
    ) WITH (toast_tuple_target = 8160)""",
    "ALTER TABLE blocks ALTER COLUMN view_json SET STORAGE EXTERNAL",
    "CREATE UNIQUE INDEX blocks_canonical_height ON blocks (height) WHERE canonical",
    """CREATE TABLE epochs (
        epoch_id TEXT COLLATE "C" PRIMARY KEY,
        protocol_version INTEGER NOT NULL,
        config_json BYTEA NOT NULL,
        protocol_config_json BYTEA
    )""",
    """CREATE TABLE account_states (
        account_id TEXT COLLATE "C" NOT NULL,
        height BIGINT NOT NULL,
        view_json BYTEA,
        PRIMARY KEY (account_id, height)
    )""",
    *_SCHEMA_3_TABLES,
    *_SCHEMA_4_TABLES,
    *_SCHEMA_5_TABLES,
    f'CREATE TABLE {FETCHED_TABLE} (key TEXT COLLATE "C" PRIMARY KEY)',
)

# What turns a store of an older schema version into the next one (`upgrade_store`): only
# additions, so nothing stored changes.
_UPGRADES: Final = {2: _SCHEMA_3_TABLES, 3: _SCHEMA_4_TABLES, 4: _SCHEMA_5_TABLES}

# The lookups readers run, by name (the async serving reader runs the same text). Tests check
# with EXPLAIN that each one is answered from a primary key or index.
LOOKUP_QUERIES: Final[dict[str, str]] = {
    "head": f"SELECT {BLOCK_COLUMNS} FROM blocks WHERE canonical ORDER BY height DESC LIMIT 1",
    "earliest": f"SELECT {BLOCK_COLUMNS} FROM blocks WHERE canonical ORDER BY height ASC LIMIT 1",
    "block_by_height": f"SELECT {BLOCK_COLUMNS} FROM blocks WHERE height = %s AND canonical",
    "block_by_hash": f"SELECT {BLOCK_COLUMNS} FROM blocks WHERE hash = %s",
    "block_json_by_height": "SELECT view_json FROM blocks WHERE height = %s AND canonical",
    "block_json_by_hash": "SELECT view_json FROM blocks WHERE hash = %s",
    "epoch": f"SELECT {EPOCH_COLUMNS} FROM epochs WHERE epoch_id = %s",
    "account": "SELECT view_json FROM account_states WHERE account_id = %s AND height <= %s "
    "ORDER BY height DESC LIMIT 1",
    "access_key": "SELECT view_json FROM access_keys WHERE account_id = %s AND public_key = %s AND height <= %s "
    "ORDER BY height DESC LIMIT 1",
    # every state of the account's keys up to the height (sql.latest_access_keys picks each one's last)
    "access_keys": "SELECT public_key, height, view_json FROM access_keys WHERE account_id = %s AND height <= %s",
    "contract_code": "SELECT code FROM contract_codes WHERE code_hash = %s",
    "contract_value": "SELECT value FROM contract_data WHERE account_id = %s AND key = %s AND height <= %s "
    "ORDER BY height DESC LIMIT 1",
    # the account's rows of the key range in primary-key order; a row is its key's latest at or
    # below the height when the next row has another key; the walk stops at the limit
    "contract_state": "SELECT key, value FROM (SELECT key, value, lead(key) OVER (ORDER BY key, height) AS next_key "
    "FROM contract_data WHERE account_id = %s AND key >= %s AND key < %s AND height <= %s) AS rows "
    "WHERE next_key IS DISTINCT FROM key AND value IS NOT NULL ORDER BY key LIMIT %s",
    "contract_state_open": "SELECT key, value FROM (SELECT key, value, lead(key) OVER (ORDER BY key, height) "
    "AS next_key FROM contract_data WHERE account_id = %s AND key >= %s AND height <= %s) AS rows "
    "WHERE next_key IS DISTINCT FROM key AND value IS NOT NULL ORDER BY key LIMIT %s",
    "chunk": f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE chunk_hash = %s",
    "transaction": f"SELECT {TRANSACTION_COLUMNS} FROM transactions WHERE tx_hash = %s",
    "receipt": f"SELECT {RECEIPT_COLUMNS} FROM receipts WHERE receipt_id = %s",
    "validators": f"SELECT {VALIDATORS_COLUMNS} FROM validators WHERE epoch_id = %s",
    "transactions_at": f"SELECT {TRANSACTION_COLUMNS} FROM transactions WHERE height = %s "
    "ORDER BY shard_id, tx_hash",
    "receipts_at": f"SELECT {RECEIPT_COLUMNS} FROM receipts WHERE height = %s ORDER BY shard_id, receipt_id",
    # the rows written at exactly one height, along the by-height indexes (account order)
    "account_changes": "SELECT account_id, view_json FROM account_states WHERE height = %s ORDER BY account_id",
    "access_key_changes": "SELECT account_id, public_key, view_json FROM access_keys WHERE height = %s "
    "ORDER BY account_id, public_key",
    "contract_data_changes": "SELECT account_id, key, value FROM contract_data WHERE height = %s "
    "ORDER BY account_id, key",
    "fetched": f"SELECT 1 FROM {FETCHED_TABLE} WHERE key = %s",
    "config": "SELECT json FROM config WHERE name = %s",
    "meta": "SELECT value FROM meta WHERE key = %s",
    "metas": "SELECT key, value FROM meta WHERE key = ANY(%s)",
    # epoch_start_height: a walk down the canonical heights from a block to the last block of
    # the previous epoch (at most one epoch's blocks), then the canonical block after it
    "previous_epoch_block": "SELECT height, hash FROM blocks WHERE canonical AND height < %s AND epoch_id <> %s "
    "ORDER BY height DESC LIMIT 1",
    "next_block": f"SELECT {BLOCK_COLUMNS} FROM blocks WHERE canonical AND height > %s ORDER BY height ASC LIMIT 1",
}

# The serving reader's lookups of many keys in one statement (pg_batch.py), one row per key found.
BATCH_QUERIES: Final[dict[str, str]] = {
    "blocks_by_height": f"SELECT {BLOCK_COLUMNS} FROM blocks WHERE height = ANY(%s::bigint[]) AND canonical",
    "blocks_by_hash": f"SELECT {BLOCK_COLUMNS} FROM blocks WHERE hash = ANY(%s::text[])",
    # each (account, height) asked: the account's latest state at or below the height
    "accounts": "SELECT asked.account_id, asked.height, state.view_json "
    "FROM unnest(%s::text[], %s::bigint[]) AS asked(account_id, height) "
    "CROSS JOIN LATERAL (SELECT view_json FROM account_states WHERE account_id = asked.account_id "
    "AND height <= asked.height ORDER BY height DESC LIMIT 1) AS state",
    # each (account, storage key, height) asked: the key's latest row at or below the height
    "contract_values": "SELECT asked.account_id, asked.key, asked.height, row.value "
    "FROM unnest(%s::text[], %s::bytea[], %s::bigint[]) AS asked(account_id, key, height) "
    "CROSS JOIN LATERAL (SELECT value FROM contract_data WHERE account_id = asked.account_id "
    "AND key = asked.key AND height <= asked.height ORDER BY height DESC LIMIT 1) AS row",
}

# `xmax = 0` holds for a row this statement inserted, not for one it updated: new rows are counted
_INSERTED: Final = " RETURNING (xmax = 0)"
# Any constant: the advisory lock that makes writers of one database take turns.
_WRITER_LOCK: Final = 0x6E656172727063


class ForeignTablesError(StoreSchemaError):
    """The database has tables of the store's names that are not a nearrpc store's."""


def schema_problem(conn: psycopg.Connection[Any], location: str) -> StoreError | None:
    """Why the database is not a store this build reads (None: it is one)."""
    present = {
        name
        for (name,) in conn.execute(
            "SELECT c.relname FROM pg_class c WHERE c.relname = ANY(%s) AND c.relkind = 'r' "
            "AND pg_catalog.pg_table_is_visible(c.oid)",
            (list(TABLES),),
        )
    }
    target = describe_target(location)
    if "nearrpc_schema" not in present:
        if present:
            return ForeignTablesError(
                f"PostgreSQL {target} holds tables {sorted(present)} but is not a nearrpc store: "
                "use a database of its own for the store"
            )
        return StoreNotFoundError(
            f"no nearrpc store in PostgreSQL {target} (create one with `nearrpc store init`, "
            "`nearrpc store copy` or an import)"
        )
    rows = conn.execute("SELECT version FROM nearrpc_schema").fetchall()
    if len(rows) != 1:
        return StoreSchemaError(f"PostgreSQL {target}: the schema version table has {len(rows)} rows, not 1")
    version = rows[0][0]
    if version in _UPGRADES:
        return StoreSchemaError(
            f"PostgreSQL {target} has store schema version {version}, this build reads version {SCHEMA_VERSION}: "
            f"upgrade it in place with `nearrpc store upgrade --store {target}` (it only adds tables)"
        )
    if version != SCHEMA_VERSION:
        return StoreSchemaError(
            f"PostgreSQL {target} has store schema version {version!r}, this build reads version "
            f"{SCHEMA_VERSION}: copy its data into a new database with a build that reads it, or re-import"
        )
    return None


class PostgresChainReader(SqlChainReader):
    """`ChainReader` over one synchronous connection. A writer's reader first writes what the
    open batch has staged (`before_read`), so it sees the batch's own writes, as SQLite's does."""

    PREV_HEIGHT_SQL = "(convert_from(c.view_json, 'UTF8')::jsonb #>> '{header,prev_height}')::bigint"
    DAMAGED_CONTRACT_DATA_SQL = (
        "SELECT account_id, height, CASE WHEN height < 0 THEN 'its height is negative' "
        "WHEN octet_length(key) > {max_key} THEN 'its key of ' || octet_length(key) || ' bytes is longer than "
        "max_length_storage_key ({max_key})' "
        "ELSE 'its value of ' || octet_length(value) || ' bytes is longer than max_length_storage_value "
        "({max_value})' END FROM contract_data "
        "WHERE height < 0 OR octet_length(key) > {max_key} OR octet_length(value) > {max_value}"
    )

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        location: str,
        *,
        owns_connection: bool,
        before_read: Callable[[], None] | None = None,
    ) -> None:
        self._conn = conn
        self._location = location
        self._owns_connection = owns_connection
        self._before_read = before_read

    def _run(self, sql: str, params: tuple[object, ...], what: str) -> Any:
        if self._before_read is not None:
            self._before_read()
        try:
            return self._conn.execute(sql, params, binary=True)
        except psycopg.Error as exc:
            raise store_error(exc, self._location, what) from None

    def _one(self, name: str, *params: object) -> Any:
        return self._run(LOOKUP_QUERIES[name], params, f"{name} lookup").fetchone()

    def _all(self, name: str, *params: object) -> list[Any]:
        return list(self._run(LOOKUP_QUERIES[name], params, f"{name} lookup").fetchall())

    def _metas(self, keys: list[str]) -> dict[str, str]:
        rows = self._run(LOOKUP_QUERIES["metas"], (keys,), "meta lookup").fetchall()
        return {key: value for key, value in rows}

    def _count(self, sql: str, what: str) -> int:
        row = self._run(sql, (), what).fetchone()
        return int(row[0]) if row is not None else 0

    def _tables(self) -> set[str]:
        rows = self._run("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()", (), "check")
        return {str(row[0]) for row in rows.fetchall()}

    def version(self) -> StoreVersion:
        return version_from_rows(list(self._metas(list(VERSION_META_KEYS)).items()))

    def _scan(self, sql: str) -> Iterator[Any]:
        """Rows streamed through a server-side cursor, in one snapshot."""
        if self._before_read is not None:
            self._before_read()
        try:
            with self._conn.transaction(), self._conn.cursor(name="nearrpc_scan", binary=True) as cursor:
                cursor.itersize = 500
                cursor.execute(sql)
                yield from cursor
        except psycopg.Error as exc:
            raise store_error(exc, self._location, "scan") from None

    def close(self) -> None:
        if self._owns_connection:
            self._conn.close()


# Blocks, account states and access keys are staged in memory and written this many at a time: COPY into a
# temporary table, then one set-based upsert (a few statements per chunk instead of one or two
# round trips per row), which also bounds what a batch holds in memory.
_CHUNK_ROWS: Final = 2000
_CHUNK_BYTES: Final = 32 << 20

_BLOCK_FIELDS: Final = "hash, height, prev_hash, epoch_id, last_final_block, last_ds_final_block, canonical, view_json"
_BLOCK_TYPES: Final = ["text", "int8", "text", "text", "text", "text", "bool", "bytea"]
_STATE_TYPES: Final = ["text", "int8", "bytea"]
_KEY_TYPES: Final = ["text", "text", "int8", "bytea"]
_DATA_TYPES: Final = ["text", "bytea", "int8", "bytea"]
_CHUNK_TYPES: Final = ["text", "text", "int8", "int8", "bytea"]
_TRANSACTION_TYPES: Final = ["text", "text", "text", "int8", "int8", "bytea"]
_RECEIPT_TYPES: Final = ["text", "text", "int8", "int8", "bytea", "bytea"]
_STAGING: Final = (
    "CREATE TEMPORARY TABLE IF NOT EXISTS nearrpc_staged_blocks (LIKE blocks INCLUDING STORAGE) ON COMMIT DROP",
    "CREATE TEMPORARY TABLE IF NOT EXISTS nearrpc_staged_states (LIKE account_states) ON COMMIT DROP",
    "CREATE TEMPORARY TABLE IF NOT EXISTS nearrpc_staged_keys (LIKE access_keys) ON COMMIT DROP",
    "CREATE TEMPORARY TABLE IF NOT EXISTS nearrpc_staged_data (LIKE contract_data) ON COMMIT DROP",
    "CREATE TEMPORARY TABLE IF NOT EXISTS nearrpc_staged_chunks (LIKE chunks) ON COMMIT DROP",
    "CREATE TEMPORARY TABLE IF NOT EXISTS nearrpc_staged_transactions (LIKE transactions) ON COMMIT DROP",
    "CREATE TEMPORARY TABLE IF NOT EXISTS nearrpc_staged_receipts (LIKE receipts) ON COMMIT DROP",
)
_FLUSH_BLOCKS: Final = (
    # a new canonical block at a height demotes the one it replaces to a fork block
    "UPDATE blocks b SET canonical = false FROM nearrpc_staged_blocks s "
    "WHERE s.canonical AND b.height = s.height AND b.canonical AND b.hash <> s.hash",
    f"WITH upserted AS (INSERT INTO blocks ({_BLOCK_FIELDS}) SELECT {_BLOCK_FIELDS} FROM nearrpc_staged_blocks "
    "ON CONFLICT (hash) DO UPDATE SET height = excluded.height, prev_hash = excluded.prev_hash, "
    "epoch_id = excluded.epoch_id, last_final_block = excluded.last_final_block, "
    "last_ds_final_block = excluded.last_ds_final_block, canonical = excluded.canonical, "
    "view_json = excluded.view_json RETURNING (xmax = 0) AS new) SELECT count(*) FILTER (WHERE new) FROM upserted",
)
# a staged block whose hash is stored at another height (one lookup per staged row, by key)
_MOVED_BLOCK: Final = (
    "SELECT s.hash, b.height, s.height FROM nearrpc_staged_blocks s JOIN blocks b ON b.hash = s.hash "
    "WHERE b.height <> s.height LIMIT 1"
)
_FLUSH_STATES: Final = (
    "WITH upserted AS (INSERT INTO account_states (account_id, height, view_json) "
    "SELECT account_id, height, view_json FROM nearrpc_staged_states "
    "ON CONFLICT (account_id, height) DO UPDATE SET view_json = excluded.view_json "
    "RETURNING (xmax = 0) AS new) SELECT count(*) FILTER (WHERE new) FROM upserted",
)

_FLUSH_KEYS: Final = (
    "WITH upserted AS (INSERT INTO access_keys (account_id, public_key, height, view_json) "
    "SELECT account_id, public_key, height, view_json FROM nearrpc_staged_keys "
    "ON CONFLICT (account_id, public_key, height) DO UPDATE SET view_json = excluded.view_json "
    "RETURNING (xmax = 0) AS new) SELECT count(*) FILTER (WHERE new) FROM upserted",
)

_FLUSH_DATA: Final = (
    "WITH upserted AS (INSERT INTO contract_data (account_id, key, height, value) "
    "SELECT account_id, key, height, value FROM nearrpc_staged_data "
    "ON CONFLICT (account_id, key, height) DO UPDATE SET value = excluded.value "
    "RETURNING (xmax = 0) AS new) SELECT count(*) FILTER (WHERE new) FROM upserted",
)



def _flush_upsert(table: str, columns: str, key: str) -> tuple[str]:
    """The upsert of a staging table's rows into `table` (replacing a row of the same `key`),
    selecting how many were new."""
    updates = ", ".join(f"{column} = excluded.{column}" for column in columns.split(", ") if column != key)
    return (
        f"WITH upserted AS (INSERT INTO {table} ({columns}) SELECT {columns} FROM nearrpc_staged_{table} "
        f"ON CONFLICT ({key}) DO UPDATE SET {updates} "
        "RETURNING (xmax = 0) AS new) SELECT count(*) FILTER (WHERE new) FROM upserted",
    )


_FLUSH_CHUNKS: Final = _flush_upsert("chunks", CHUNK_COLUMNS, "chunk_hash")
_FLUSH_TRANSACTIONS: Final = _flush_upsert("transactions", TRANSACTION_COLUMNS, "tx_hash")
_FLUSH_RECEIPTS: Final = _flush_upsert("receipts", RECEIPT_COLUMNS, "receipt_id")


class _Staged:
    """Rows of one table waiting to be written; a row whose key (or canonical height) is
    already waiting is written only after the chunk before it, so order is kept."""

    def __init__(self, table: str, staging: str, types: list[str], flush: tuple[str, ...]) -> None:
        self.table = table
        self.staging = staging
        self.types = types
        self.flush_statements = flush
        self.rows: list[tuple[object, ...]] = []
        self.keys: set[object] = set()
        self.size = 0  # bytes of the JSON staged, where a put counts them

    def clashes(self, keys: list[object]) -> bool:
        return any(key in self.keys for key in keys)

    def add(self, row: tuple[object, ...], keys: list[object]) -> None:
        self.rows.append(row)
        self.keys.update(keys)


class PostgresWriteBatch(SqlWriteBatch):
    """The writes of one transaction (`WriteBatch`). Blocks, account states and access keys are
    written in chunks (`_CHUNK_ROWS`), so an error in one may surface at a later put or at the end of the
    batch; it rolls the whole batch back either way."""

    UPSERT_META = (
        "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
    )
    UPSERT_CONFIG = (
        "INSERT INTO config (name, json) VALUES (%s, %s) ON CONFLICT (name) DO UPDATE SET json = excluded.json"
    )
    LOOKUP_META = LOOKUP_QUERIES["meta"]
    DELETE_META = "DELETE FROM meta WHERE key = %s"
    DELETE_BLOCK = "DELETE FROM blocks WHERE hash = %s RETURNING hash"
    MARK = "%s"
    CANONICAL = "canonical"
    ADD_TO_META = "UPDATE meta SET value = (value::bigint + %s)::text WHERE key = %s"
    CREATE_FETCHED = f'CREATE TABLE IF NOT EXISTS {FETCHED_TABLE} (key TEXT COLLATE "C" PRIMARY KEY)'
    INSERT_FETCHED = f"INSERT INTO {FETCHED_TABLE} (key) VALUES (%s) ON CONFLICT (key) DO NOTHING"

    def __init__(self, conn: psycopg.Connection[Any], location: str, *, validate: bool) -> None:
        super().__init__(validate=validate)
        self._conn = conn
        self._location = location
        self._staging_ready = False
        self._blocks = _Staged("blocks", "nearrpc_staged_blocks", _BLOCK_TYPES, _FLUSH_BLOCKS)
        self._states = _Staged("account_states", "nearrpc_staged_states", _STATE_TYPES, _FLUSH_STATES)
        self._keys = _Staged("access_keys", "nearrpc_staged_keys", _KEY_TYPES, _FLUSH_KEYS)
        self._data = _Staged("contract_data", "nearrpc_staged_data", _DATA_TYPES, _FLUSH_DATA)
        self._chunks = _Staged("chunks", "nearrpc_staged_chunks", _CHUNK_TYPES, _FLUSH_CHUNKS)
        self._transactions = _Staged(
            "transactions", "nearrpc_staged_transactions", _TRANSACTION_TYPES, _FLUSH_TRANSACTIONS
        )
        self._receipts = _Staged("receipts", "nearrpc_staged_receipts", _RECEIPT_TYPES, _FLUSH_RECEIPTS)
        self._staged = (self._blocks, self._states, self._keys, self._data, self._chunks, self._transactions,
                        self._receipts)  # fmt: skip
        self._data_bytes = 0  # of the contract state rows staged

    def _execute(self, sql: str, params: tuple[object, ...] = ()) -> Any:
        self._ensure_open()
        try:
            return self._conn.execute(sql, params, binary=True)
        except psycopg.Error as exc:
            raise store_error(exc, self._location, "write") from None

    def _upsert(self, table: str, sql: str, params: tuple[object, ...]) -> None:
        """Insert or replace a row; a new one is added to the table's stored count."""
        row = self._execute(sql + _INSERTED, params).fetchone()
        if row is not None and row[0]:
            self._added[table] += 1

    def _stage(self, staged: _Staged, row: tuple[object, ...], keys: list[object], size: int = 0) -> None:
        self._ensure_open()
        if staged.clashes(keys):
            self._flush(staged)
        staged.add(row, keys)
        staged.size += size
        # a chunk of rows is also bounded by the bytes it holds (a busy chunk's JSON runs to megabytes)
        if len(staged.rows) >= _CHUNK_ROWS or staged.size > _CHUNK_BYTES:
            self._flush(staged)

    def _flush(self, staged: _Staged) -> None:
        """COPY the waiting rows into the staging table and upsert them from there."""
        if not staged.rows:
            return
        try:
            if not self._staging_ready:
                for statement in _STAGING:
                    self._conn.execute(statement)
                self._staging_ready = True
            self._conn.execute(f"TRUNCATE {staged.staging}")
            with self._conn.cursor() as cursor:
                with cursor.copy(f"COPY {staged.staging} FROM STDIN (FORMAT BINARY)") as copy:
                    copy.set_types(staged.types)
                    for row in staged.rows:
                        copy.write_row(row)
                if staged is self._blocks:
                    moved = cursor.execute(_MOVED_BLOCK).fetchone()
                    if moved is not None:
                        raise checks.moved_block(*moved)
                for statement in staged.flush_statements:
                    cursor.execute(statement)
                counted = cursor.fetchone()
        except psycopg.Error as exc:
            raise store_error(exc, self._location, "write") from None
        finally:
            staged.rows.clear()
            staged.keys.clear()
            staged.size = 0
        self._added[staged.table] += int(counted[0]) if counted else 0

    def flush(self) -> None:
        for staged in self._staged:
            self._flush(staged)

    def _before_end(self) -> None:
        self.flush()

    def put_block(self, block: StoredBlock, *, canonical: bool = True) -> None:
        data = checks.check_block(block, validate=self._validate)
        self._touched.add("blocks")
        row = (block.hash, block.height, block.prev_hash, block.epoch_id, block.last_final_block,
               block.last_ds_final_block, canonical, data)  # fmt: skip
        # a hash, and a canonical height, may appear once per chunk
        self._stage(self._blocks, row, [block.hash, ("canonical", block.height)] if canonical else [block.hash])

    def put_epoch(self, epoch: StoredEpoch) -> None:
        data = checks.check_epoch(epoch, validate=self._validate)
        recorded = checks.check_recorded_protocol_config(epoch, validate=self._validate)
        self._touched.add("epochs")
        self._upsert(
            "epochs",
            "INSERT INTO epochs (epoch_id, protocol_version, config_json, protocol_config_json) "
            "VALUES (%s, %s, %s, %s) ON CONFLICT (epoch_id) DO UPDATE SET "
            "protocol_version = excluded.protocol_version, config_json = excluded.config_json, "
            "protocol_config_json = excluded.protocol_config_json",
            (epoch.epoch_id, epoch.protocol_version, data, recorded),
        )

    def put_account_state(self, account_id: str, height: int, view_json: bytes | None) -> None:
        data = checks.check_account_state(account_id, height, view_json, validate=self._validate)
        self._touched.add("accounts")
        self._stage(self._states, (account_id, height, data), [(account_id, height)])

    def put_access_key(self, account_id: str, public_key: str, height: int, view_json: bytes | None) -> None:
        key, data = checks.check_access_key(account_id, public_key, height, view_json, validate=self._validate)
        self._touched.add("access_keys")
        self._stage(self._keys, (account_id, key, height, data), [(account_id, key, height)])

    def put_contract_code(self, code_hash: str, code: bytes) -> None:
        checks.check_contract_code(code_hash, code)
        self._touched.add("codes")
        self._upsert(
            "contract_codes",
            "INSERT INTO contract_codes (code_hash, code) VALUES (%s, %s) "
            "ON CONFLICT (code_hash) DO UPDATE SET code = excluded.code",
            (code_hash, code),
        )

    def put_contract_data(self, account_id: str, key: bytes, height: int, value: bytes | None) -> None:
        checks.check_contract_data(account_id, key, height, value)
        if len(key) > MAX_INDEXED_KEY:
            raise StoreIntegrityError(
                f"contract state of {account_id} at {height}: a storage key of {len(key)} bytes is longer than a "
                f"PostgreSQL store indexes ({MAX_INDEXED_KEY} bytes, nearcore's max_length_storage_key since "
                "protocol 53); keep this chain's state in an SQLite store"
            )
        self._touched.add("contract_data")
        self._stage(self._data, (account_id, key, height, value), [(account_id, key, height)])
        # values run to 4 MiB each: a chunk is also bounded by what it holds
        self._data_bytes = 0 if not self._data.rows else self._data_bytes + len(key) + len(value or b"")
        if self._data_bytes > _CHUNK_BYTES:
            self._flush(self._data)
            self._data_bytes = 0

    def put_chunk(self, chunk: StoredChunk) -> None:
        data = checks.check_chunk(chunk, validate=self._validate)
        self._touched.add("chunks")
        row = (chunk.chunk_hash, chunk.block_hash, chunk.height, chunk.shard_id, data)
        self._stage(self._chunks, row, [chunk.chunk_hash], len(data))

    def put_transaction(self, transaction: StoredTransaction) -> None:
        data = checks.check_transaction(transaction, validate=self._validate)
        self._touched.add("transactions")
        row = (transaction.tx_hash, transaction.signer_id, transaction.block_hash, transaction.height,
               transaction.shard_id, data)  # fmt: skip
        self._stage(self._transactions, row, [transaction.tx_hash], len(data))

    def put_receipt(self, receipt: StoredReceipt) -> None:
        data, outcome = checks.check_receipt(receipt, validate=self._validate)
        self._touched.add("receipts")
        row = (receipt.receipt_id, receipt.block_hash, receipt.height, receipt.shard_id, data, outcome)
        self._stage(self._receipts, row, [receipt.receipt_id], len(data) + len(outcome or b""))

    def put_validators(self, validators: StoredValidators) -> None:
        data = checks.check_validators(validators, validate=self._validate)
        self._touched.add("validators")
        self._upsert(
            "validators",
            "INSERT INTO validators (epoch_id, height, view_json) VALUES (%s, %s, %s) "
            "ON CONFLICT (epoch_id) DO UPDATE SET height = excluded.height, view_json = excluded.view_json",
            (validators.epoch_id, validators.height, data),
        )

    def discard(self) -> None:
        super().discard()
        for staged in self._staged:
            staged.rows.clear()


def _create_tables(conn: psycopg.Connection[Any], *, drop_first: bool) -> None:
    if drop_first:
        conn.execute(f"DROP TABLE IF EXISTS {', '.join((*TABLES, *OPTIONAL_TABLES))}")
    for statement in _DDL:
        conn.execute(statement)
    conn.execute("INSERT INTO nearrpc_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
    initial = [*COUNTERS.values(), *VERSION_KEYS.values()]
    with conn.cursor() as cursor:
        cursor.executemany("INSERT INTO meta (key, value) VALUES (%s, '0')", [(key,) for key in initial])


class PostgresChainWriter:
    """`ChainWriter` over one synchronous connection. A store created (or replaced) by this
    writer is created inside its first batch's transaction."""

    def __init__(self, location: str, options: StoreOptions, *, replace: bool) -> None:
        self._location = location
        self._lock_wait = options.timeout
        self._conn = connect(location, options, read_only=False)
        if not options.durable_commits:
            self._conn.execute("SET synchronous_commit TO off")  # commits do not wait for the log flush
        self._replace = replace
        self._in_batch = False
        self._batch: PostgresWriteBatch | None = None
        try:
            problem = schema_problem(self._conn, location)
        except psycopg.Error as exc:
            self._conn.close()
            raise store_error(exc, location, "reading the schema") from None
        replaceable = replace and not isinstance(problem, ForeignTablesError)
        if problem is not None and not (replaceable or isinstance(problem, StoreNotFoundError)):
            self._conn.close()
            raise problem

    @contextmanager
    def _transaction(self, validate: bool) -> Iterator[PostgresWriteBatch]:
        if self._in_batch:
            raise StoreError("a batch is already open on this writer")
        self._in_batch = True
        batch = PostgresWriteBatch(self._conn, self._location, validate=validate)
        try:
            with self._conn.transaction():
                self._prepare()
                self._batch = batch
                yield batch
                batch.end()
        except psycopg.Error as exc:
            raise store_error(exc, self._location, "commit") from None
        finally:
            self._batch = None
            batch.discard()
            self._in_batch = False
        self._replace = False

    def _prepare(self) -> None:
        """Take the writers' lock, then create (or replace) the tables when this batch must."""
        try:
            try:
                self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITER_LOCK,))
            except psycopg.errors.LockNotAvailable:
                raise StoreError(
                    f"PostgreSQL {describe_target(self._location)}: another writer is writing to this store; "
                    f"gave up waiting for it after {self._lock_wait:g} s (the store timeout)"
                ) from None
            problem = schema_problem(self._conn, self._location)  # again: another writer may have been first
            if isinstance(problem, ForeignTablesError):
                raise problem  # never drop tables that are not a store's
            if self._replace or isinstance(problem, StoreNotFoundError):
                _create_tables(self._conn, drop_first=self._replace)
            elif problem is not None:
                raise problem
        except psycopg.Error as exc:
            raise store_error(exc, self._location, "preparing the store") from None

    def batch(self, *, validate: bool = True) -> AbstractContextManager[WriteBatch]:
        return self._transaction(validate)

    def _flush_open_batch(self) -> None:
        if self._batch is not None:
            self._batch.flush()

    def reader(self) -> ChainReader:
        return PostgresChainReader(
            self._conn, self._location, owns_connection=False, before_read=self._flush_open_batch
        )

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> PostgresChainWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def open_reader(location: str, options: StoreOptions) -> PostgresChainReader:
    """A read-only session on an existing store."""
    conn = connect(location, options, read_only=True)
    try:
        problem = schema_problem(conn, location)
    except psycopg.Error as exc:
        conn.close()
        raise store_error(exc, location, "reading the schema") from None
    if problem is not None:
        conn.close()
        raise problem
    return PostgresChainReader(conn, location, owns_connection=True)


def upgrade_store(location: str, options: StoreOptions) -> tuple[int, int]:
    """Bring the store at `location` to this build's schema in one transaction, under the
    writers' lock (the versions before and after); a current store is left as it is."""
    target = describe_target(location)
    conn = connect(location, options, read_only=False)
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITER_LOCK,))
            problem = schema_problem(conn, location)
            if problem is None:
                return SCHEMA_VERSION, SCHEMA_VERSION
            rows = conn.execute("SELECT version FROM nearrpc_schema").fetchall() if "version" in str(problem) else []
            version = rows[0][0] if len(rows) == 1 else None
            if version not in _UPGRADES:
                raise problem
            for statement in (s for step in range(version, SCHEMA_VERSION) for s in _UPGRADES[step]):
                conn.execute(statement)
            with conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO meta (key, value) VALUES (%s, '0') ON CONFLICT (key) DO NOTHING",
                    [(key,) for key in (*COUNTERS.values(), *VERSION_KEYS.values())],
                )
            conn.execute("UPDATE nearrpc_schema SET version = %s", (SCHEMA_VERSION,))
            return version, SCHEMA_VERSION
    except psycopg.Error as exc:
        raise store_error(exc, location, f"upgrading PostgreSQL {target}") from None
    finally:
        conn.close()


def open_writer(location: str, options: StoreOptions, *, replace: bool = False) -> PostgresChainWriter:
    return PostgresChainWriter(location, options, replace=replace)
