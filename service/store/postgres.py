"""PostgreSQL implementation of the chain store: one database per chain.

The tables are those of the SQLite store (see sqlite.py) with PostgreSQL types: text keys in
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
    STORE_KINDS,
    ChainReader,
    StoreCheck,
    StoredBlock,
    StoredEpoch,
    StoreError,
    StoreInfo,
    StoreIntegrityError,
    StoreNotFoundError,
    StoreOptions,
    StoreSchemaError,
    StoreVersion,
    WriteBatch,
)
from nearrpc.store.pg_connect import connect, describe_target, store_error

TABLES: Final = ("nearrpc_schema", "meta", "config", "blocks", "epochs", "account_states")

# A block's JSON (5.6 KB in the benchmark's store, mainnet's are alike) is kept inline and
# uncompressed, as SQLite keeps it: PostgreSQL's pglz cost 70 µs a block when written (half of a
# `store copy`) and again when read; the price is disk, 7.9 against 4.3 KB a block. (`SET
# STORAGE` in an ALTER TABLE: PostgreSQL before 16 refuses it inside CREATE TABLE.)
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
)

_BLOCK_COLUMNS: Final = "height, hash, prev_hash, epoch_id, last_final_block, last_ds_final_block, view_json"
_MAX_BIGINT: Final = (1 << 63) - 1

# The lookups readers run, by name (the async serving reader runs the same text). Tests check
# with EXPLAIN that each one is answered from a primary key or index.
LOOKUP_QUERIES: Final[dict[str, str]] = {
    "head": f"SELECT {_BLOCK_COLUMNS} FROM blocks WHERE canonical ORDER BY height DESC LIMIT 1",
    "earliest": f"SELECT {_BLOCK_COLUMNS} FROM blocks WHERE canonical ORDER BY height ASC LIMIT 1",
    "block_by_height": f"SELECT {_BLOCK_COLUMNS} FROM blocks WHERE height = %s AND canonical",
    "block_by_hash": f"SELECT {_BLOCK_COLUMNS} FROM blocks WHERE hash = %s",
    "epoch": "SELECT epoch_id, protocol_version, config_json, protocol_config_json FROM epochs WHERE epoch_id = %s",
    "account": "SELECT view_json FROM account_states WHERE account_id = %s AND height <= %s "
    "ORDER BY height DESC LIMIT 1",
    "config": "SELECT json FROM config WHERE name = %s",
    "meta": "SELECT value FROM meta WHERE key = %s",
    "metas": "SELECT key, value FROM meta WHERE key = ANY(%s)",
    # epoch_start_height: a walk down the canonical heights from a block to the last block of
    # the previous epoch (at most one epoch's blocks), then the canonical block after it
    "previous_epoch_block": "SELECT height, hash FROM blocks WHERE canonical AND height < %s AND epoch_id <> %s "
    "ORDER BY height DESC LIMIT 1",
    "next_block": f"SELECT {_BLOCK_COLUMNS} FROM blocks WHERE canonical AND height > %s ORDER BY height ASC LIMIT 1",
}
# Distinct accounts with a stored state: reads the primary key's index once (for /metrics,
# which redoes it only when states were added).
ACCOUNT_COUNT: Final = "SELECT count(*) FROM (SELECT DISTINCT account_id FROM account_states) AS accounts"
STORE_TABLES: Final = ("nearrpc_schema", "meta", "config", "blocks", "epochs", "account_states")

GENESIS_CONFIG: Final = "genesis_config"
CLIENT_CONFIG: Final = "client_config"
IMPORT_PROGRESS: Final = "import_progress"
# Row counts and change counters kept in `meta` by the writer (as in the SQLite store).
COUNTERS: Final = {"blocks": "block_count", "epochs": "epoch_count", "account_states": "account_state_count"}
VERSION_KEYS: Final = {kind: f"version_{kind}" for kind in STORE_KINDS}
INFO_KEYS: Final = ["chain_id", "genesis_height", *COUNTERS.values()]

_UPSERT_META: Final = (
    "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)
_UPSERT_CONFIG: Final = (
    "INSERT INTO config (name, json) VALUES (%s, %s) ON CONFLICT (name) DO UPDATE SET json = excluded.json"
)
_ADD_TO_META: Final = "UPDATE meta SET value = (value::bigint + %s)::text WHERE key = %s"
# `xmax = 0` holds for a row this statement inserted, not for one it updated: new rows are counted
_INSERTED: Final = " RETURNING (xmax = 0)"
# Any constant: the advisory lock that makes writers of one database take turns.
_WRITER_LOCK: Final = 0x6E656172727063


def block_from_row(row: Any) -> StoredBlock | None:
    if row is None:
        return None
    height, block_hash, prev_hash, epoch_id, last_final, last_ds_final, view_json = row
    return StoredBlock(height, block_hash, prev_hash, epoch_id, last_final, last_ds_final, bytes(view_json))


def epoch_from_row(row: Any) -> StoredEpoch | None:
    if row is None:
        return None
    recorded = None if row[3] is None else bytes(row[3])
    return StoredEpoch(row[0], row[1], bytes(row[2]), protocol_config_json=recorded)


def height_in_range(height: int) -> bool:
    """Heights outside BIGINT are never stored (and would fail as parameters)."""
    return 0 <= height <= _MAX_BIGINT


def version_from_rows(rows: list[Any]) -> StoreVersion:
    counters = {key: int(value) for key, value in rows}
    return StoreVersion(**{kind: counters.get(key, 0) for kind, key in VERSION_KEYS.items()})


def info_from(meta: dict[str, str], earliest: StoredBlock | None, head: StoredBlock | None) -> StoreInfo:
    genesis_height = meta.get("genesis_height")
    return StoreInfo(
        schema_version=SCHEMA_VERSION,
        chain_id=meta.get("chain_id"),
        genesis_height=None if genesis_height is None else int(genesis_height),
        earliest_height=None if earliest is None else earliest.height,
        latest_height=None if head is None else head.height,
        block_count=int(meta.get("block_count", 0)),
        epoch_count=int(meta.get("epoch_count", 0)),
        account_state_count=int(meta.get("account_state_count", 0)),
    )


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
    if version != SCHEMA_VERSION:
        return StoreSchemaError(
            f"PostgreSQL {target} has store schema version {version!r}, this build reads version "
            f"{SCHEMA_VERSION}: copy its data into a new database with a build that reads it, or re-import"
        )
    return None


class PostgresChainReader:
    """`ChainReader` over one synchronous connection. A writer's reader first writes what the
    open batch has staged (`before_read`), so it sees the batch's own writes, as SQLite's does."""

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

    def _one(self, name: str, *params: object) -> Any:
        if self._before_read is not None:
            self._before_read()
        try:
            return self._conn.execute(LOOKUP_QUERIES[name], params, binary=True).fetchone()
        except psycopg.Error as exc:
            raise store_error(exc, self._location, f"{name} lookup") from None

    def _metas(self, keys: list[str]) -> dict[str, str]:
        if self._before_read is not None:
            self._before_read()
        try:
            rows = self._conn.execute(LOOKUP_QUERIES["metas"], (keys,)).fetchall()
        except psycopg.Error as exc:
            raise store_error(exc, self._location, "meta lookup") from None
        return {key: value for key, value in rows}

    def _meta(self, key: str) -> str | None:
        row = self._one("meta", key)
        return None if row is None else str(row[0])

    def _config(self, name: str) -> bytes | None:
        row = self._one("config", name)
        return None if row is None else bytes(row[0])

    def chain_id(self) -> str | None:
        return self._meta("chain_id")

    def genesis_config_json(self) -> bytes | None:
        return self._config(GENESIS_CONFIG)

    def client_config_json(self) -> bytes | None:
        return self._config(CLIENT_CONFIG)

    def head(self) -> StoredBlock | None:
        return block_from_row(self._one("head"))

    def block_by_height(self, height: int) -> StoredBlock | None:
        return block_from_row(self._one("block_by_height", height)) if height_in_range(height) else None

    def block_by_hash(self, block_hash: str) -> StoredBlock | None:
        return block_from_row(self._one("block_by_hash", block_hash))

    def genesis_block(self) -> StoredBlock | None:
        height = self._meta("genesis_height")
        return None if height is None else self.block_by_height(int(height))

    def earliest_block(self) -> StoredBlock | None:
        return block_from_row(self._one("earliest"))

    def epoch(self, epoch_id: str) -> StoredEpoch | None:
        return epoch_from_row(self._one("epoch", epoch_id))

    def account_json(self, account_id: str, height: int) -> bytes | None:
        if height < 0:
            return None
        row = self._one("account", account_id, min(height, _MAX_BIGINT))
        return None if row is None or row[0] is None else bytes(row[0])

    def info(self) -> StoreInfo:
        return info_from(self._metas(INFO_KEYS), self.earliest_block(), self.head())

    def account_count(self) -> int:
        row = self._run(ACCOUNT_COUNT, "counting accounts").fetchone()
        return int(row[0]) if row is not None else 0

    def epoch_start_height(self, block: StoredBlock) -> int | None:
        previous = self._one("previous_epoch_block", block.height, block.epoch_id)
        if previous is None:
            # nothing of another epoch below: known only when the store begins at genesis
            earliest = self.earliest_block()
            genesis_height = self._meta("genesis_height")
            if earliest is None or str(earliest.height) != genesis_height or earliest.epoch_id != block.epoch_id:
                return None
            return earliest.height
        first = block_from_row(self._one("next_block", previous[0]))
        # a gap in the stored heights could hide the epoch's real first block
        return first.height if first is not None and first.prev_hash == previous[1] else None

    def check(self, *, thorough: bool) -> StoreCheck:
        """PostgreSQL keeps its own pages consistent; here: the tables are there and (thorough)
        the row counts kept in `meta` are the tables' real counts."""
        problems: list[str] = []
        try:
            rows = self._run("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()", "check").fetchall()
        except StoreError as exc:
            return StoreCheck(thorough, {}, (str(exc),))
        tables = {str(row[0]) for row in rows}
        problems += [f"table {table} is missing" for table in STORE_TABLES if table not in tables]
        counts: dict[str, int] = {}
        for table, counter in COUNTERS.items():
            if table not in tables:
                continue
            try:
                stored = int(self._meta(counter) or 0)
                if thorough:
                    row = self._run(f"SELECT count(*) FROM {table}", "counting rows").fetchone()
                    counted = int(row[0]) if row is not None else 0
                    if counted != stored:
                        problems.append(f"meta counts {stored} rows of {table}, the table holds {counted}")
                    stored = counted
            except (StoreError, ValueError) as exc:
                problems.append(f"cannot count the rows of {table}: {exc}")
                continue
            counts[table] = stored
        return StoreCheck(thorough, counts, tuple(problems))

    def _run(self, sql: str, what: str) -> Any:
        if self._before_read is not None:
            self._before_read()
        try:
            return self._conn.execute(sql)
        except psycopg.Error as exc:
            raise store_error(exc, self._location, what) from None

    def import_progress(self) -> bytes | None:
        note = self._meta(IMPORT_PROGRESS)
        return None if note is None else note.encode()

    def version(self) -> StoreVersion:
        return version_from_rows(list(self._metas(list(VERSION_KEYS.values())).items()))

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

    def iter_blocks(self) -> Iterator[tuple[StoredBlock, bool]]:
        for row in self._scan(f"SELECT {_BLOCK_COLUMNS}, canonical FROM blocks"):
            block = block_from_row(row[:7])
            assert block is not None
            yield block, bool(row[7])

    def iter_epochs(self) -> Iterator[StoredEpoch]:
        for row in self._scan(
            "SELECT epoch_id, protocol_version, config_json, protocol_config_json FROM epochs"
        ):
            epoch = epoch_from_row(row)
            assert epoch is not None
            yield epoch

    def iter_account_states(self) -> Iterator[tuple[str, int, bytes | None]]:
        for account_id, height, view in self._scan(
            "SELECT account_id, height, view_json FROM account_states"
        ):
            yield account_id, height, None if view is None else bytes(view)

    def close(self) -> None:
        if self._owns_connection:
            self._conn.close()


# Blocks and account states are staged in memory and written this many at a time: COPY into a
# temporary table, then one set-based upsert (a few statements per chunk instead of one or two
# round trips per row), which also bounds what a batch holds in memory.
_CHUNK_ROWS: Final = 2000

_BLOCK_FIELDS: Final = "hash, height, prev_hash, epoch_id, last_final_block, last_ds_final_block, canonical, view_json"
_BLOCK_TYPES: Final = ["text", "int8", "text", "text", "text", "text", "bool", "bytea"]
_STATE_TYPES: Final = ["text", "int8", "bytea"]
_STAGING: Final = (
    "CREATE TEMPORARY TABLE IF NOT EXISTS nearrpc_staged_blocks (LIKE blocks INCLUDING STORAGE) ON COMMIT DROP",
    "CREATE TEMPORARY TABLE IF NOT EXISTS nearrpc_staged_states (LIKE account_states) ON COMMIT DROP",
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
_FLUSH_STATES: Final = (
    "WITH upserted AS (INSERT INTO account_states (account_id, height, view_json) "
    "SELECT account_id, height, view_json FROM nearrpc_staged_states "
    "ON CONFLICT (account_id, height) DO UPDATE SET view_json = excluded.view_json "
    "RETURNING (xmax = 0) AS new) SELECT count(*) FILTER (WHERE new) FROM upserted",
)


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

    def clashes(self, keys: list[object]) -> bool:
        return any(key in self.keys for key in keys)

    def add(self, row: tuple[object, ...], keys: list[object]) -> None:
        self.rows.append(row)
        self.keys.update(keys)


class PostgresWriteBatch:
    """The writes of one transaction (`WriteBatch`). Blocks and account states are written in
    chunks (`_CHUNK_ROWS`), so an error in one may surface at a later put or at the end of the
    batch; it rolls the whole batch back either way."""

    def __init__(self, conn: psycopg.Connection[Any], location: str, *, validate: bool) -> None:
        self._conn = conn
        self._location = location
        self._validate = validate
        self._open = True
        self._added = dict.fromkeys(COUNTERS, 0)
        self._touched: set[str] = set()
        self._staging_ready = False
        self._blocks = _Staged("blocks", "nearrpc_staged_blocks", _BLOCK_TYPES, _FLUSH_BLOCKS)
        self._states = _Staged("account_states", "nearrpc_staged_states", _STATE_TYPES, _FLUSH_STATES)

    def _execute(self, sql: str, params: tuple[object, ...] = ()) -> Any:
        if not self._open:
            raise StoreError("this batch has ended; open a new one with writer.batch()")
        try:
            return self._conn.execute(sql, params, binary=True)
        except psycopg.Error as exc:
            raise store_error(exc, self._location, "write") from None

    def _upsert(self, table: str, sql: str, params: tuple[object, ...]) -> None:
        """Insert or replace a row; a new one is added to the table's stored count."""
        row = self._execute(sql + _INSERTED, params).fetchone()
        if row is not None and row[0]:
            self._added[table] += 1

    def _stage(self, staged: _Staged, row: tuple[object, ...], keys: list[object]) -> None:
        if not self._open:
            raise StoreError("this batch has ended; open a new one with writer.batch()")
        if staged.clashes(keys):
            self._flush(staged)
        staged.add(row, keys)
        if len(staged.rows) >= _CHUNK_ROWS:
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
                for statement in staged.flush_statements:
                    cursor.execute(statement)
                counted = cursor.fetchone()
        except psycopg.Error as exc:
            raise store_error(exc, self._location, "write") from None
        finally:
            staged.rows.clear()
            staged.keys.clear()
        self._added[staged.table] += int(counted[0]) if counted else 0

    def flush(self) -> None:
        self._flush(self._blocks)
        self._flush(self._states)

    def _meta(self, key: str) -> str | None:
        row = self._execute(LOOKUP_QUERIES["meta"], (key,)).fetchone()
        return None if row is None else str(row[0])

    def put_genesis_config(self, genesis_config_json: bytes) -> None:
        data, chain_id, genesis_height = checks.check_genesis_config(genesis_config_json, validate=self._validate)
        stored_chain = self._meta("chain_id")
        if stored_chain is not None and stored_chain != chain_id:
            raise StoreIntegrityError(
                f"the store holds chain {stored_chain!r}; refusing a genesis config of chain {chain_id!r}"
            )
        self._touched.add("configs")
        self._execute(_UPSERT_CONFIG, (GENESIS_CONFIG, data))
        for key, value in (("chain_id", chain_id), ("genesis_height", str(genesis_height))):
            self._execute(_UPSERT_META, (key, value))

    def put_client_config(self, client_config_json: bytes) -> None:
        data = checks.check_client_config(client_config_json, validate=self._validate)
        self._touched.add("configs")
        self._execute(_UPSERT_CONFIG, (CLIENT_CONFIG, data))

    def put_block(self, block: StoredBlock, *, canonical: bool = True) -> None:
        data = checks.check_block(block, validate=self._validate)
        if not height_in_range(block.height):
            raise StoreIntegrityError(f"block {block.hash}: height {block.height} is out of range")
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
        if not height_in_range(height):
            raise StoreIntegrityError(f"account {account_id}: height {height} is out of range")
        self._touched.add("accounts")
        self._stage(self._states, (account_id, height, data), [(account_id, height)])

    def put_import_progress(self, note: bytes | None) -> None:
        if note is None:
            self._execute("DELETE FROM meta WHERE key = %s", (IMPORT_PROGRESS,))
        else:
            self._execute(_UPSERT_META, (IMPORT_PROGRESS, note.decode()))

    def end(self) -> None:
        """Write what waits, add the new rows to the stored counts, bump the change counter of
        every kind written."""
        self.flush()
        bumps = [(added, COUNTERS[table]) for table, added in self._added.items() if added]
        bumps += [(1, VERSION_KEYS[kind]) for kind in sorted(self._touched)]
        for amount, key in bumps:
            self._execute(_ADD_TO_META, (amount, key))
        self._open = False

    def discard(self) -> None:
        self._open = False
        self._blocks.rows.clear()
        self._states.rows.clear()


def _create_tables(conn: psycopg.Connection[Any], *, drop_first: bool) -> None:
    if drop_first:
        conn.execute(f"DROP TABLE IF EXISTS {', '.join(TABLES)}")
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
        self._conn = connect(location, options, read_only=False)
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
            self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITER_LOCK,))
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


def open_writer(location: str, options: StoreOptions, *, replace: bool = False) -> PostgresChainWriter:
    return PostgresChainWriter(location, options, replace=replace)
