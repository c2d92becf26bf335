"""SQLite implementation of the chain store.

One file per chain. Readers open it read-only (`mode=ro`), writers use WAL so a server can
keep reading while an import runs. Every lookup is one query on a primary key or index that
reads a row or two, so lookup cost does not grow with the chain.

Tables:
- `nearrpc_schema(version)`: one row, the table layout version (`SCHEMA_VERSION`).
- `meta(key, value)`: chain_id and genesis_height (from the genesis config) and the row
  counts of the three data tables, kept up to date by the writer.
- `config(name, json)`: the genesis_config and client_config results.
- `blocks`: one row per block (forks too), keyed by hash; a partial unique index on height
  over the canonical rows answers lookups by height.
- `epochs`: per epoch id, its protocol version and epoch-level config values, and optionally
  the whole protocol config a node answered for it (`protocol_config_json`, recorded imports).
  Stores written before that column existed get it from `open_writer` (a nullable column, so
  builds without it keep reading them); readers of stores without it see None.
- `account_states`: (account_id, height) -> account view, NULL when deleted at that height.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from service.store import checks
from service.store.base import (
    SCHEMA_VERSION,
    ChainReader,
    StoredBlock,
    StoredEpoch,
    StoreError,
    StoreInfo,
    StoreIntegrityError,
    StoreNotFoundError,
    StoreSchemaError,
    WriteBatch,
)

StorePath = str | os.PathLike[str]

_DDL: Final = (
    "CREATE TABLE nearrpc_schema (version INTEGER NOT NULL)",
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE config (name TEXT PRIMARY KEY, json BLOB NOT NULL) WITHOUT ROWID",
    """CREATE TABLE blocks (
        hash TEXT PRIMARY KEY,
        height INTEGER NOT NULL,
        prev_hash TEXT NOT NULL,
        epoch_id TEXT NOT NULL,
        last_final_block TEXT NOT NULL,
        last_ds_final_block TEXT NOT NULL,
        canonical INTEGER NOT NULL CHECK (canonical IN (0, 1)),
        view_json BLOB NOT NULL
    )""",
    "CREATE UNIQUE INDEX blocks_canonical_height ON blocks (height) WHERE canonical = 1",
    """CREATE TABLE epochs (
        epoch_id TEXT PRIMARY KEY,
        protocol_version INTEGER NOT NULL,
        config_json BLOB NOT NULL,
        protocol_config_json BLOB
    ) WITHOUT ROWID""",
    """CREATE TABLE account_states (
        account_id TEXT NOT NULL,
        height INTEGER NOT NULL,
        view_json BLOB,
        PRIMARY KEY (account_id, height)
    ) WITHOUT ROWID""",
)

_BLOCK_COLUMNS: Final = "height, hash, prev_hash, epoch_id, last_final_block, last_ds_final_block, view_json"

# The lookups readers run, by name. Tests check with EXPLAIN QUERY PLAN that each one is
# answered from a primary key or index.
LOOKUP_QUERIES: Final[dict[str, str]] = {
    "head": f"SELECT {_BLOCK_COLUMNS} FROM blocks WHERE canonical = 1 ORDER BY height DESC LIMIT 1",
    "earliest": f"SELECT {_BLOCK_COLUMNS} FROM blocks WHERE canonical = 1 ORDER BY height ASC LIMIT 1",
    "block_by_height": f"SELECT {_BLOCK_COLUMNS} FROM blocks WHERE height = ? AND canonical = 1",
    "block_by_hash": f"SELECT {_BLOCK_COLUMNS} FROM blocks WHERE hash = ?",
    "epoch": "SELECT epoch_id, protocol_version, config_json, protocol_config_json FROM epochs WHERE epoch_id = ?",
    "account": "SELECT view_json FROM account_states WHERE account_id = ? AND height <= ? ORDER BY height DESC LIMIT 1",
    "config": "SELECT json FROM config WHERE name = ?",
    "meta": "SELECT value FROM meta WHERE key = ?",
}

# The epoch lookup on a store written before `epochs.protocol_config_json` existed.
_EPOCH_WITHOUT_RECORDED_CONFIG: Final = (
    "SELECT epoch_id, protocol_version, config_json, NULL FROM epochs WHERE epoch_id = ?"
)

_GENESIS_CONFIG = "genesis_config"
_CLIENT_CONFIG = "client_config"

# Row counts kept in `meta` by the writer, so `info()` (polled by /health) never counts rows.
_COUNTERS: Final = {"blocks": "block_count", "epochs": "epoch_count", "account_states": "account_state_count"}
_EXISTS: Final = {
    "blocks": "SELECT 1 FROM blocks WHERE hash = ?",
    "epochs": "SELECT 1 FROM epochs WHERE epoch_id = ?",
    "account_states": "SELECT 1 FROM account_states WHERE account_id = ? AND height = ?",
}


def _uri(path: Path, mode: str) -> str:
    # Path.as_uri percent-encodes whatever needs it (spaces, '?', '#').
    return f"{path.resolve().as_uri()}?mode={mode}"


def _check_schema(conn: sqlite3.Connection, path: Path) -> None:
    try:
        rows = conn.execute("SELECT version FROM nearrpc_schema").fetchall()
    except sqlite3.DatabaseError as exc:  # no such table, or not an SQLite file at all
        raise StoreSchemaError(f"{path} is not a nearrpc store (no schema version table: {exc})") from exc
    if len(rows) != 1:
        raise StoreSchemaError(f"{path}: the schema version table has {len(rows)} rows, not 1")
    version = rows[0][0]
    if version != SCHEMA_VERSION:
        raise StoreSchemaError(
            f"{path}: store schema version {version!r}; this build reads version "
            f"{SCHEMA_VERSION}. Rebuild the store (or import the data again) with this build."
        )


def _has_recorded_config_column(conn: sqlite3.Connection) -> bool:
    return any(row[1] == "protocol_config_json" for row in conn.execute("PRAGMA table_info(epochs)"))


def _block(row: Any) -> StoredBlock | None:
    if row is None:
        return None
    height, block_hash, prev_hash, epoch_id, last_final, last_ds_final, view_json = row
    return StoredBlock(
        height=height,
        hash=block_hash,
        prev_hash=prev_hash,
        epoch_id=epoch_id,
        last_final_block=last_final,
        last_ds_final_block=last_ds_final,
        view_json=bytes(view_json),
    )


class SqliteChainReader:
    """`ChainReader` over an SQLite connection."""

    def __init__(self, conn: sqlite3.Connection, path: Path, *, owns_connection: bool) -> None:
        self._conn = conn
        self._path = path
        self._owns_connection = owns_connection
        self._epoch_query = (
            LOOKUP_QUERIES["epoch"] if _has_recorded_config_column(conn) else _EPOCH_WITHOUT_RECORDED_CONFIG
        )

    @property
    def path(self) -> Path:
        return self._path

    def _one(self, name: str, *params: object) -> Any:
        try:
            return self._conn.execute(LOOKUP_QUERIES[name], params).fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"{self._path}: {name} lookup failed: {exc}") from exc

    def _meta(self, key: str) -> str | None:
        row = self._one("meta", key)
        return None if row is None else str(row[0])

    def _config(self, name: str) -> bytes:
        row = self._one("config", name)
        if row is None:
            raise StoreError(f"{self._path}: the store holds no {name}")
        return bytes(row[0])

    def chain_id(self) -> str:
        chain_id = self._meta("chain_id")
        if chain_id is None:
            raise StoreError(f"{self._path}: the store holds no genesis config")
        return chain_id

    def genesis_height(self) -> int | None:
        value = self._meta("genesis_height")
        return None if value is None else int(value)

    def genesis_config_json(self) -> bytes:
        return self._config(_GENESIS_CONFIG)

    def client_config_json(self) -> bytes:
        return self._config(_CLIENT_CONFIG)

    def head(self) -> StoredBlock | None:
        return _block(self._one("head"))

    def block_by_height(self, height: int) -> StoredBlock | None:
        if height < 0 or height >= 1 << 63:  # outside SQLite's integer range: never stored
            return None
        return _block(self._one("block_by_height", height))

    def block_by_hash(self, block_hash: str) -> StoredBlock | None:
        return _block(self._one("block_by_hash", block_hash))

    def genesis_block(self) -> StoredBlock | None:
        height = self.genesis_height()
        return None if height is None else self.block_by_height(height)

    def earliest_block(self) -> StoredBlock | None:
        return _block(self._one("earliest"))

    def epoch(self, epoch_id: str) -> StoredEpoch | None:
        try:
            row = self._conn.execute(self._epoch_query, (epoch_id,)).fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"{self._path}: epoch lookup failed: {exc}") from exc
        if row is None:
            return None
        recorded = None if row[3] is None else bytes(row[3])
        return StoredEpoch(row[0], row[1], bytes(row[2]), protocol_config_json=recorded)

    def account_json(self, account_id: str, height: int) -> bytes | None:
        if height < 0:
            return None
        height = min(height, (1 << 63) - 1)
        row = self._one("account", account_id, height)
        if row is None or row[0] is None:
            return None
        return bytes(row[0])

    def info(self) -> StoreInfo:
        def count(table: str) -> int:
            return int(self._meta(_COUNTERS[table]) or 0)

        earliest = self.earliest_block()
        head = self.head()
        return StoreInfo(
            schema_version=SCHEMA_VERSION,
            chain_id=self._meta("chain_id"),
            genesis_height=self.genesis_height(),
            earliest_height=None if earliest is None else earliest.height,
            latest_height=None if head is None else head.height,
            block_count=count("blocks"),
            epoch_count=count("epochs"),
            account_state_count=count("account_states"),
        )

    def close(self) -> None:
        if self._owns_connection:
            self._conn.close()


class SqliteWriteBatch:
    """The writes of one transaction (`WriteBatch`)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._open = True
        self._added = dict.fromkeys(_COUNTERS, 0)

    def _execute(self, sql: str, params: tuple[object, ...]) -> None:
        if not self._open:
            raise StoreError("this batch has ended; open a new one with writer.batch()")
        self._conn.execute(sql, params)

    def _note_row(self, table: str, *key: object) -> None:
        """Count the row about to be written if it is a new one (not a replacement)."""
        if self._conn.execute(_EXISTS[table], key).fetchone() is None:
            self._added[table] += 1

    def _meta(self, key: str) -> str | None:
        row = self._conn.execute(LOOKUP_QUERIES["meta"], (key,)).fetchone()
        return None if row is None else str(row[0])

    def put_genesis_config(self, genesis_config_json: bytes) -> None:
        data, chain_id, genesis_height = checks.check_genesis_config(genesis_config_json)
        stored_chain = self._meta("chain_id")
        if stored_chain is not None and stored_chain != chain_id:
            raise StoreIntegrityError(
                f"the store holds chain {stored_chain!r}; refusing a genesis config of chain {chain_id!r}"
            )
        self._execute(
            "INSERT INTO config (name, json) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET json = excluded.json",
            (_GENESIS_CONFIG, data),
        )
        for key, value in (("chain_id", chain_id), ("genesis_height", str(genesis_height))):
            self._execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def put_client_config(self, client_config_json: bytes) -> None:
        data = checks.check_client_config(client_config_json)
        self._execute(
            "INSERT INTO config (name, json) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET json = excluded.json",
            (_CLIENT_CONFIG, data),
        )

    def put_block(self, block: StoredBlock, *, canonical: bool = True) -> None:
        data = checks.check_block(block)
        if canonical:
            # A new canonical block at a height demotes the one it replaces to a fork block.
            self._execute(
                "UPDATE blocks SET canonical = 0 WHERE height = ? AND canonical = 1 AND hash != ?",
                (block.height, block.hash),
            )
        self._note_row("blocks", block.hash)
        self._execute(
            "INSERT INTO blocks (hash, height, prev_hash, epoch_id, last_final_block, "
            "last_ds_final_block, canonical, view_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (hash) DO UPDATE SET height = excluded.height, "
            "prev_hash = excluded.prev_hash, epoch_id = excluded.epoch_id, "
            "last_final_block = excluded.last_final_block, "
            "last_ds_final_block = excluded.last_ds_final_block, "
            "canonical = excluded.canonical, view_json = excluded.view_json",
            (
                block.hash,
                block.height,
                block.prev_hash,
                block.epoch_id,
                block.last_final_block,
                block.last_ds_final_block,
                int(canonical),
                data,
            ),
        )

    def put_epoch(self, epoch: StoredEpoch) -> None:
        data = checks.check_epoch(epoch)
        recorded = checks.check_recorded_protocol_config(epoch)
        self._note_row("epochs", epoch.epoch_id)
        self._execute(
            "INSERT INTO epochs (epoch_id, protocol_version, config_json, protocol_config_json) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (epoch_id) DO UPDATE SET protocol_version = excluded.protocol_version, "
            "config_json = excluded.config_json, protocol_config_json = excluded.protocol_config_json",
            (epoch.epoch_id, epoch.protocol_version, data, recorded),
        )

    def put_account_state(self, account_id: str, height: int, view_json: bytes | None) -> None:
        data = checks.check_account_state(account_id, height, view_json)
        self._note_row("account_states", account_id, height)
        self._execute(
            "INSERT INTO account_states (account_id, height, view_json) VALUES (?, ?, ?) "
            "ON CONFLICT (account_id, height) DO UPDATE SET view_json = excluded.view_json",
            (account_id, height, data),
        )

    def end(self) -> None:
        """Close the batch for further puts and add its new rows to the stored counts."""
        if self._open:
            self._open = False
            for table, added in self._added.items():
                if added:
                    self._conn.execute(
                        "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + ? AS TEXT) WHERE key = ?",
                        (added, _COUNTERS[table]),
                    )

    def discard(self) -> None:
        """Close the batch without touching the counts (it is being rolled back)."""
        self._open = False


class SqliteChainWriter:
    """`ChainWriter` over an SQLite file in WAL mode."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self._path = path
        self._in_batch = False

    @property
    def path(self) -> Path:
        return self._path

    @contextmanager
    def _transaction(self) -> Iterator[SqliteWriteBatch]:
        if self._in_batch:
            raise StoreError("a batch is already open on this writer")
        self._in_batch = True
        batch = SqliteWriteBatch(self._conn)
        try:
            # IMMEDIATE takes the write lock now, so a concurrent writer fails at the start
            # of its batch instead of half way through.
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield batch
                batch.end()
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
        finally:
            batch.discard()
            self._in_batch = False

    def batch(self) -> AbstractContextManager[WriteBatch]:
        return self._transaction()

    def reader(self) -> ChainReader:
        return SqliteChainReader(self._conn, self._path, owns_connection=False)

    def use_rollback_journal(self) -> None:
        """Fold the WAL back into the file and switch it to a rollback journal, so the file
        can be opened read-only from a folder the reader cannot write to (no -wal/-shm)."""
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._conn.execute("PRAGMA journal_mode=DELETE")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SqliteChainWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _connect(path: Path, mode: str, *, check_same_thread: bool) -> sqlite3.Connection:
    try:
        return sqlite3.connect(
            _uri(path, mode),
            uri=True,
            isolation_level=None,  # transactions are explicit (BEGIN/COMMIT)
            check_same_thread=check_same_thread,
        )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open store {path}: {exc}") from exc


def open_reader(path: StorePath) -> SqliteChainReader:
    """Open an existing store read-only. Any write through this connection fails.

    The connection may be used from another thread than the one that opened it (the server
    opens it at startup and reads on its event loop thread), one thread at a time.
    """
    file = Path(path)
    if not file.is_file():
        raise StoreNotFoundError(f"no store at {file}")
    conn = _connect(file, "ro", check_same_thread=False)
    try:
        conn.execute("PRAGMA query_only = ON")
        _check_schema(conn, file)
    except BaseException:
        conn.close()
        raise
    return SqliteChainReader(conn, file, owns_connection=True)


def open_writer(path: StorePath) -> SqliteChainWriter:
    """Open an existing store for writing (WAL mode)."""
    file = Path(path)
    if not file.is_file():
        raise StoreNotFoundError(f"no store at {file}")
    conn = _connect(file, "rw", check_same_thread=True)
    try:
        _check_schema(conn, file)
        conn.execute("PRAGMA journal_mode=WAL")
        if not _has_recorded_config_column(conn):
            # Additive and nullable: no schema version change; older builds still read the store.
            conn.execute("ALTER TABLE epochs ADD COLUMN protocol_config_json BLOB")
    except BaseException:
        conn.close()
        raise
    return SqliteChainWriter(conn, file)


def create(path: StorePath) -> SqliteChainWriter:
    """Create a new, empty store and open it for writing. Refuses to touch an existing file."""
    file = Path(path)
    if file.exists():
        raise StoreError(f"refusing to create a store over the existing file {file}")
    conn = _connect(file, "rwc", check_same_thread=True)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("BEGIN IMMEDIATE")
        for statement in _DDL:
            conn.execute(statement)
        conn.execute("INSERT INTO nearrpc_schema (version) VALUES (?)", (SCHEMA_VERSION,))
        conn.executemany("INSERT INTO meta (key, value) VALUES (?, '0')", [(key,) for key in _COUNTERS.values()])
        conn.execute("COMMIT")
    except BaseException:
        conn.close()
        file.unlink(missing_ok=True)
        raise
    return SqliteChainWriter(conn, file)
