"""SQLite implementation of the chain store: one file per chain.

Readers open it read-only (`mode=ro`); writers use WAL while they write, so a server can keep
reading during an import, and fold it back into the file when they close, so the store is one
file again that can be served from a read-only folder. A store left in WAL mode (a writer
closed while a server was reading it) has no writes outside the file once its writer closed;
in a read-only folder, where SQLite cannot create the WAL index beside it, it is opened
`immutable` instead. A new store is built in a hidden file
beside its path and renamed into place with its first committed batch. Every lookup is one
query on a primary key or index that reads a row or two, so its cost does not grow with the
chain.

The tables, what each holds, and the SQL text of the named lookups: `sqlite_schema.py`. The
server's reader, which follows a file replaced at its path: `sqlite_serving.py`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Final

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
    StoreLocationError,
    StoreNotFoundError,
    StoreSchemaError,
    StoreVersion,
    WriteBatch,
)
from nearrpc.store.file_creation import CreationLock, publish
from nearrpc.store.layout import COUNTERS, FETCHED_TABLE, VERSION_KEYS, version_from_rows
from nearrpc.store.sql import MAX_PROBLEMS, SqlChainReader, SqlWriteBatch
from nearrpc.store.sqlite_schema import DDL, LOOKUP_QUERIES, UPGRADES, check_schema, schema_version

# An SQLite store is its file plus, at times, these companions.
_SIDE_FILES: Final = ("-wal", "-shm", "-journal")

# Where a put looks first: whether its row is new (to count it), and for a block the height
# its hash is stored at (a hash never moves to another height).
_STORED_BLOCK_HEIGHT: Final = "SELECT height FROM blocks WHERE hash = ?"
_EXISTS: Final = {
    "epochs": "SELECT 1 FROM epochs WHERE epoch_id = ?",
    "account_states": "SELECT 1 FROM account_states WHERE account_id = ? AND height = ?",
    "access_keys": "SELECT 1 FROM access_keys WHERE account_id = ? AND public_key = ? AND height = ?",
    "contract_codes": "SELECT 1 FROM contract_codes WHERE code_hash = ?",
    "contract_data": "SELECT 1 FROM contract_data WHERE account_id = ? AND key = ? AND height = ?",
    "chunks": "SELECT 1 FROM chunks WHERE chunk_hash = ?",
    "transactions": "SELECT 1 FROM transactions WHERE tx_hash = ?",
    "receipts": "SELECT 1 FROM receipts WHERE receipt_id = ?",
    "validators": "SELECT 1 FROM validators WHERE epoch_id = ?",
}


def _uri(path: Path, mode: str, *, immutable: bool = False) -> str:
    # Path.as_uri percent-encodes whatever needs it (spaces, '?', '#').
    return f"{path.resolve().as_uri()}?mode={mode}" + ("&immutable=1" if immutable else "")




class _Connection:
    """The connection a writer and the readers it hands out share; the writer replaces it
    when a new store moves into place."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn


class SqliteChainReader(SqlChainReader):
    """`ChainReader` over an SQLite connection."""

    PREV_HEIGHT_SQL = "json_extract(CAST(c.view_json AS TEXT), '$.header.prev_height')"
    # SQLite keeps any type in any column: a key stored as text would sort apart from the rest
    DAMAGED_CONTRACT_DATA_SQL = (
        "SELECT account_id, height, CASE "
        "WHEN typeof(key) <> 'blob' THEN 'its key is stored as ' || typeof(key) || ', not as bytes' "
        "WHEN typeof(value) NOT IN ('blob', 'null') THEN "
        "'its value is stored as ' || typeof(value) || ', not as bytes' "
        "WHEN typeof(height) <> 'integer' THEN 'its height is stored as ' || typeof(height) || ', not as an integer' "
        "WHEN height < 0 THEN 'its height is negative' "
        "WHEN length(key) > {max_key} THEN 'its key of ' || length(key) || ' bytes is longer than "
        "max_length_storage_key ({max_key})' "
        "ELSE 'its value of ' || length(value) || ' bytes is longer than max_length_storage_value ({max_value})' END "
        "FROM contract_data WHERE typeof(key) <> 'blob' OR typeof(value) NOT IN ('blob', 'null') "
        "OR typeof(height) <> 'integer' OR height < 0 OR length(key) > {max_key} OR length(value) > {max_value}"
    )

    def __init__(self, connection: _Connection, path: Path, *, owns_connection: bool) -> None:
        self._connection = connection
        self._path = path
        self._owns_connection = owns_connection
        self._version: StoreVersion | None = None
        self._data_version = -1

    def _one(self, name: str, *params: object) -> Any:
        try:
            return self._connection.conn.execute(LOOKUP_QUERIES[name], params).fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"{self._path}: {name} lookup failed: {exc}") from exc

    def _all(self, name: str, *params: object) -> list[Any]:
        try:
            return self._connection.conn.execute(LOOKUP_QUERIES[name], params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"{self._path}: {name} lookup failed: {exc}") from exc

    def _count(self, sql: str, what: str) -> int:
        try:
            (count,) = self._connection.conn.execute(sql).fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"{self._path}: {what} failed: {exc}") from exc
        return int(count)

    def _scan(self, sql: str) -> Iterator[Any]:
        try:
            yield from self._connection.conn.execute(sql)
        except sqlite3.Error as exc:
            raise StoreError(f"{self._path}: scan failed: {exc}") from exc

    def _tables(self) -> set[str]:
        try:
            rows = self._connection.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
            return {str(row[0]) for row in rows}
        except sqlite3.Error as exc:
            raise StoreError(f"listing the tables failed: {exc}") from exc

    def _storage_problems(self, *, thorough: bool) -> list[str]:
        """SQLite's own page check: the quick one reads every page once, the integrity check
        also checks every index."""
        pragma = "integrity_check" if thorough else "quick_check"
        try:
            rows = self._connection.conn.execute(f"PRAGMA {pragma}({MAX_PROBLEMS})").fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"{pragma} failed: {exc}") from exc
        # one row per problem, or one row of lines under a "*** in database main ***" heading
        lines = (line.strip() for row in rows for line in str(row[0]).splitlines())
        return [line for line in lines if line and line != "ok" and not line.startswith("***")]

    def version(self) -> StoreVersion:
        # SQLite's data_version changes when another connection commits: one cheap pragma per
        # call, and the counters are read again only then.
        try:
            data_version = self._connection.conn.execute("PRAGMA data_version").fetchone()[0]
            if self._version is None or data_version != self._data_version:
                self._version = version_from_rows(self._connection.conn.execute(LOOKUP_QUERIES["version"]).fetchall())
                self._data_version = data_version
        except sqlite3.Error as exc:
            raise StoreError(f"{self._path}: version lookup failed: {exc}") from exc
        return self._version

    def begin_read(self) -> None:
        """Start a read transaction: the lookups until `end_read()` share one snapshot and one
        file lock. Outside a transaction SQLite takes and drops the lock and reads the header
        page again for every statement: 8 of the 18 us of a random block lookup, measured."""
        try:
            self._connection.conn.execute("BEGIN")
        except sqlite3.Error as exc:
            raise StoreError(f"{self._path}: starting a read failed: {exc}") from exc

    def end_read(self) -> None:
        conn = self._connection.conn
        if conn.in_transaction:  # an engine error may have ended it already
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise StoreError(f"{self._path}: ending a read failed: {exc}") from exc

    def close(self) -> None:
        if self._owns_connection:
            self._connection.conn.close()


class SqliteWriteBatch(SqlWriteBatch):
    """The writes of one transaction (`WriteBatch`), each row as it is put."""

    UPSERT_META = "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
    UPSERT_CONFIG = (
        "INSERT INTO config (name, json) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET json = excluded.json"
    )
    LOOKUP_META = LOOKUP_QUERIES["meta"]
    DELETE_META = "DELETE FROM meta WHERE key = ?"
    DELETE_BLOCK = "DELETE FROM blocks WHERE hash = ? RETURNING hash"
    MARK = "?"
    CANONICAL = "canonical = 1"
    ADD_TO_META = "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + ? AS TEXT) WHERE key = ?"
    CREATE_FETCHED = f"CREATE TABLE IF NOT EXISTS {FETCHED_TABLE} (key TEXT PRIMARY KEY) WITHOUT ROWID"
    INSERT_FETCHED = f"INSERT INTO {FETCHED_TABLE} (key) VALUES (?) ON CONFLICT (key) DO NOTHING"

    def __init__(self, conn: sqlite3.Connection, *, validate: bool = True) -> None:
        super().__init__(validate=validate)
        self._conn = conn

    def _execute(self, sql: str, params: tuple[object, ...]) -> Any:
        self._ensure_open()
        try:
            return self._conn.execute(sql, params)
        except sqlite3.Error as exc:
            raise StoreError(f"write failed: {exc}") from exc

    def _before_end(self) -> None:
        pass  # every row was written when it was put

    def _note_row(self, table: str, *key: object) -> None:
        """Count the row about to be written if it is a new one (not a replacement)."""
        if self._execute(_EXISTS[table], key).fetchone() is None:
            self._added[table] += 1

    def put_block(self, block: StoredBlock, *, canonical: bool = True) -> None:
        data = checks.check_block(block, validate=self._validate)
        stored = self._execute(_STORED_BLOCK_HEIGHT, (block.hash,)).fetchone()
        if stored is None:
            self._added["blocks"] += 1
        elif stored[0] != block.height:
            raise checks.moved_block(block.hash, stored[0], block.height)
        self._touched.add("blocks")
        if canonical:
            # A new canonical block at a height demotes the one it replaces to a fork block.
            self._execute(
                "UPDATE blocks SET canonical = 0 WHERE height = ? AND canonical = 1 AND hash != ?",
                (block.height, block.hash),
            )
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
        data = checks.check_epoch(epoch, validate=self._validate)
        recorded = checks.check_recorded_protocol_config(epoch, validate=self._validate)
        self._touched.add("epochs")
        self._note_row("epochs", epoch.epoch_id)
        self._execute(
            "INSERT INTO epochs (epoch_id, protocol_version, config_json, protocol_config_json) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (epoch_id) DO UPDATE SET protocol_version = excluded.protocol_version, "
            "config_json = excluded.config_json, protocol_config_json = excluded.protocol_config_json",
            (epoch.epoch_id, epoch.protocol_version, data, recorded),
        )

    def put_account_state(self, account_id: str, height: int, view_json: bytes | None) -> None:
        data = checks.check_account_state(account_id, height, view_json, validate=self._validate)
        self._touched.add("accounts")
        self._note_row("account_states", account_id, height)
        self._execute(
            "INSERT INTO account_states (account_id, height, view_json) VALUES (?, ?, ?) "
            "ON CONFLICT (account_id, height) DO UPDATE SET view_json = excluded.view_json",
            (account_id, height, data),
        )

    def put_access_key(self, account_id: str, public_key: str, height: int, view_json: bytes | None) -> None:
        key, data = checks.check_access_key(account_id, public_key, height, view_json, validate=self._validate)
        self._touched.add("access_keys")
        self._note_row("access_keys", account_id, key, height)
        self._execute(
            "INSERT INTO access_keys (account_id, public_key, height, view_json) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (account_id, public_key, height) DO UPDATE SET view_json = excluded.view_json",
            (account_id, key, height, data),
        )

    def put_contract_code(self, code_hash: str, code: bytes) -> None:
        checks.check_contract_code(code_hash, code)
        self._touched.add("codes")
        self._note_row("contract_codes", code_hash)
        self._execute(
            "INSERT INTO contract_codes (code_hash, code) VALUES (?, ?) ON CONFLICT (code_hash) DO NOTHING",
            (code_hash, code),
        )

    def put_contract_data(self, account_id: str, key: bytes, height: int, value: bytes | None) -> None:
        checks.check_contract_data(account_id, key, height, value)
        self._touched.add("contract_data")
        self._note_row("contract_data", account_id, key, height)
        self._execute(
            "INSERT INTO contract_data (account_id, key, height, value) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (account_id, key, height) DO UPDATE SET value = excluded.value",
            (account_id, key, height, value),
        )


    def put_chunk(self, chunk: StoredChunk) -> None:
        data = checks.check_chunk(chunk, validate=self._validate)
        self._touched.add("chunks")
        self._note_row("chunks", chunk.chunk_hash)
        self._execute(
            "INSERT INTO chunks (chunk_hash, block_hash, height, shard_id, view_json) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (chunk_hash) DO UPDATE SET block_hash = excluded.block_hash, height = excluded.height, "
            "shard_id = excluded.shard_id, view_json = excluded.view_json",
            (chunk.chunk_hash, chunk.block_hash, chunk.height, chunk.shard_id, data),
        )

    def put_transaction(self, transaction: StoredTransaction) -> None:
        data = checks.check_transaction(transaction, validate=self._validate)
        self._touched.add("transactions")
        self._note_row("transactions", transaction.tx_hash)
        self._execute(
            "INSERT INTO transactions (tx_hash, signer_id, block_hash, height, shard_id, view_json) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tx_hash) DO UPDATE SET signer_id = excluded.signer_id, "
            "block_hash = excluded.block_hash, height = excluded.height, shard_id = excluded.shard_id, "
            "view_json = excluded.view_json",
            (transaction.tx_hash, transaction.signer_id, transaction.block_hash, transaction.height,
             transaction.shard_id, data),
        )  # fmt: skip

    def put_receipt(self, receipt: StoredReceipt) -> None:
        data, outcome = checks.check_receipt(receipt, validate=self._validate)
        self._touched.add("receipts")
        self._note_row("receipts", receipt.receipt_id)
        self._execute(
            "INSERT INTO receipts (receipt_id, block_hash, height, shard_id, view_json, outcome_json) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (receipt_id) DO UPDATE SET block_hash = excluded.block_hash, "
            "height = excluded.height, shard_id = excluded.shard_id, view_json = excluded.view_json, "
            "outcome_json = excluded.outcome_json",
            (receipt.receipt_id, receipt.block_hash, receipt.height, receipt.shard_id, data, outcome),
        )

    def put_validators(self, validators: StoredValidators) -> None:
        data = checks.check_validators(validators, validate=self._validate)
        self._touched.add("validators")
        self._note_row("validators", validators.epoch_id)
        self._execute(
            "INSERT INTO validators (epoch_id, height, view_json) VALUES (?, ?, ?) "
            "ON CONFLICT (epoch_id) DO UPDATE SET height = excluded.height, view_json = excluded.view_json",
            (validators.epoch_id, validators.height, data),
        )


def _connect(path: Path, mode: str, *, check_same_thread: bool, immutable: bool = False) -> sqlite3.Connection:
    try:
        return sqlite3.connect(
            _uri(path, mode, immutable=immutable),
            uri=True,
            isolation_level=None,  # transactions are explicit (BEGIN/COMMIT)
            check_same_thread=check_same_thread,
        )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open store {path}: {exc}") from exc


def staging_path(path: Path) -> Path:
    """Where a new store is built before it is renamed into place."""
    return path.with_name(f".{path.name}.building")


def _remove_store_files(path: Path) -> None:
    for suffix in ("", *_SIDE_FILES):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _fsync(path: Path) -> None:
    """Flush a file (or a folder's entries, after a rename) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _open_for_writing(path: Path) -> sqlite3.Connection:
    conn = _connect(path, "rw", check_same_thread=True)
    try:
        check_schema(conn, path)
        conn.execute("PRAGMA journal_mode=WAL")
    except sqlite3.Error as exc:
        conn.close()
        raise StoreError(f"cannot write to store {path}: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _refuse_a_non_file(target: Path) -> None:
    """A store is a regular file: never put one in place of a folder, a device, a FIFO or a
    socket, nor over a symbolic link that leads nowhere (the link would be replaced)."""
    if target.is_symlink() and not target.exists():
        raise StoreLocationError(
            f"{target} is a symbolic link to a missing file; refusing to replace the link with a store"
        )
    _refuse_a_folder(target)


def _refuse_a_folder(target: Path) -> None:
    """A folder (or a device) at a store's path is refused as such, by readers too: "no store
    there" would lead to `nearrpc sample PATH`, which cannot write there either."""
    if target.exists() and not target.is_file():
        kind = "a folder" if target.is_dir() else "not a regular file"
        raise StoreLocationError(f"{target} is {kind}; a store is a file: name a file path")


def _create(path: Path) -> sqlite3.Connection:
    """A new, empty store file with the current schema (rollback journal: one file)."""
    try:
        _remove_store_files(path)  # left by a build that was killed
    except OSError as exc:
        raise StoreError(f"cannot create store {path}: {exc.strerror or exc}") from exc
    conn = _connect(path, "rwc", check_same_thread=True)
    try:
        conn.execute("BEGIN IMMEDIATE")
        for statement in DDL:
            conn.execute(statement)
        conn.execute("INSERT INTO nearrpc_schema (version) VALUES (?)", (SCHEMA_VERSION,))
        initial = [*COUNTERS.values(), *VERSION_KEYS.values()]
        conn.executemany("INSERT INTO meta (key, value) VALUES (?, '0')", [(key,) for key in initial])
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        conn.close()
        _remove_store_files(path)
        raise StoreError(f"cannot create store {path}: {exc}") from exc
    return conn


class SqliteChainWriter:
    """`ChainWriter` over an SQLite file.

    Over an existing store it writes in place (WAL mode, so readers go on reading). For a new
    store (or `replace=True`) it writes to a staging file beside the target, which becomes the
    store (renamed over the target) once the first batch has committed.
    """

    def __init__(self, target: Path, *, replace: bool, wait_seconds: float, durable: bool = True) -> None:
        _refuse_a_non_file(target)
        self._target = target
        self._replace = replace
        self._durable = durable
        self._staging: Path | None = None
        self._creation: CreationLock | None = None
        if target.is_file() and not replace:
            conn = _open_for_writing(target)
        else:
            if not target.parent.is_dir():  # a typo in a path should not create folders
                raise StoreNotFoundError(f"cannot create store {target}: there is no folder {target.parent}")
            # another process may be creating this store: wait for it (file_creation.py)
            self._creation = CreationLock(target, wait_seconds)
            try:
                conn = self._open_after_waiting()
            except BaseException:
                self._release_creation()
                raise
        self._connection = _Connection(self._tuned(conn))
        self._in_batch = False
        self._closed = False

    def _tuned(self, conn: sqlite3.Connection) -> sqlite3.Connection:
        if not self._durable:
            # WAL with synchronous=NORMAL: a commit no longer waits for fsync (4-9 ms on this
            # machine's disk); the store stays consistent, a power cut may lose the last commits
            conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def _open_after_waiting(self) -> sqlite3.Connection:
        """The store the writer that held the lock created, or a new staging store."""
        if self._target.is_file() and not self._replace:
            self._release_creation()
            return _open_for_writing(self._target)
        self._staging = staging_path(self._target)
        return _create(self._staging)

    def _release_creation(self) -> None:
        if self._creation is not None:
            self._creation.release()
            self._creation = None

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._connection.conn

    @contextmanager
    def _transaction(self, validate: bool) -> Iterator[SqliteWriteBatch]:
        if self._in_batch:
            raise StoreError("a batch is already open on this writer")
        self._in_batch = True
        batch = SqliteWriteBatch(self._conn, validate=validate)
        try:
            # IMMEDIATE takes the write lock now, so a concurrent writer fails at the start
            # of its batch instead of half way through.
            self._begin()
            try:
                yield batch
                batch.end()
                self._commit()
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
        finally:
            batch.discard()
            self._in_batch = False
        if self._staging is not None:
            self._promote(self._staging)

    def _begin(self) -> None:
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write to store {self._target}: {exc}") from exc

    def _commit(self) -> None:
        try:
            self._conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot commit to store {self._target}: {exc}") from exc

    def _promote(self, staging: Path) -> None:
        """Move the staging store into place, then go on writing there."""
        self._conn.close()
        self._closed = True  # until the store in place is open: close() has nothing to fold back
        try:
            _fsync(staging)
            publish(staging, self._target, replace=self._replace)
            _fsync(self._target.parent)
        except OSError as exc:
            raise StoreError(f"cannot move the new store into place at {self._target}: {exc.strerror or exc}") from exc
        finally:
            self._staging = None
            _remove_store_files(staging)  # what is left of it when publishing failed
            self._release_creation()
        self._connection.conn = self._tuned(_open_for_writing(self._target))
        self._closed = False

    def batch(self, *, validate: bool = True) -> AbstractContextManager[WriteBatch]:
        return self._transaction(validate)

    def reader(self) -> ChainReader:
        return SqliteChainReader(self._connection, self._target, owns_connection=False)

    def close(self) -> None:
        if self._closed:
            return
        if self._staging is not None:  # nothing was committed: no store appears
            self._conn.close()
            _remove_store_files(self._staging)
            self._release_creation()
            return
        try:
            # One file again, readable from a folder the reader cannot write to (no -wal/-shm).
            # A reader that has the store open keeps it in WAL mode; that is fine too.
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._conn.execute("PRAGMA journal_mode=DELETE")
        except sqlite3.OperationalError:
            pass
        finally:
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



def _read_only_connection(path: Path) -> sqlite3.Connection:
    """A read-only connection, `immutable` for a store in WAL mode in a folder SQLite cannot
    write its WAL index to (a read-only mount or folder)."""
    conn = _connect(path, "ro", check_same_thread=False)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.DatabaseError as exc:
        if exc.sqlite_errorcode != sqlite3.SQLITE_CANTOPEN:
            return conn  # not a store, or damaged: the schema check says which
        conn.close()
    wal = Path(f"{path}-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        # immutable would skip the writes in the WAL file: refuse rather than serve old data
        raise StoreError(
            f"cannot read {path}: it is in WAL mode with writes in {wal.name} that are not folded into it, "
            f"and SQLite cannot create {path.name}-shm in its folder; serve it from a writable folder once "
            "(or copy its -shm file beside it)"
        )
    return _connect(path, "ro", check_same_thread=False, immutable=True)


def open_reader(path: Path) -> SqliteChainReader:
    """Open an existing store read-only. Any write through this connection fails.

    The connection may be used from another thread than the one that opened it (the server
    opens it at startup and reads on its event loop thread), one thread at a time.
    """
    _refuse_a_folder(path)
    if not path.is_file():
        raise StoreNotFoundError(f"no store at {path}")
    conn = _read_only_connection(path)
    try:
        conn.execute("PRAGMA query_only = ON")
        check_schema(conn, path)
    except BaseException:
        conn.close()
        raise
    return SqliteChainReader(_Connection(conn), path, owns_connection=True)



def upgrade_store(path: Path) -> tuple[int, int]:
    """Bring the store at `path` to this build's schema in one transaction (the versions before
    and after); a store of the current version is left as it is."""
    _refuse_a_folder(path)
    if not path.is_file():
        raise StoreNotFoundError(f"no store at {path}")
    conn = _connect(path, "rw", check_same_thread=True)
    try:
        schema_version(conn, path)  # first: a file that is not a store says so before any lock
        conn.execute("BEGIN IMMEDIATE")
        version = schema_version(conn, path)
        if version == SCHEMA_VERSION:
            conn.execute("ROLLBACK")
            return SCHEMA_VERSION, SCHEMA_VERSION
        if not isinstance(version, int) or version not in UPGRADES:
            raise StoreSchemaError(f"{path} has store schema version {version!r}, which this build cannot upgrade")
        for statement in (s for step in range(version, SCHEMA_VERSION) for s in UPGRADES[step]):
            conn.execute(statement)
        keys = [*COUNTERS.values(), *VERSION_KEYS.values()]
        conn.executemany("INSERT INTO meta (key, value) VALUES (?, '0') ON CONFLICT (key) DO NOTHING",
                         [(key,) for key in keys])  # fmt: skip
        conn.execute("UPDATE nearrpc_schema SET version = ?", (SCHEMA_VERSION,))
        conn.execute("COMMIT")
        return version, SCHEMA_VERSION
    except sqlite3.Error as exc:
        raise StoreError(f"cannot upgrade store {path}: {exc}") from exc
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()


def open_writer(
    path: Path, *, replace: bool = False, wait_seconds: float = 5.0, durable: bool = True
) -> SqliteChainWriter:
    """A writer on the store at `path`; a new store there (or, with `replace`, one that
    replaces the current one) appears with the first committed batch. `wait_seconds`: how long
    to wait for another process that is creating the same store."""
    return SqliteChainWriter(path, replace=replace, wait_seconds=wait_seconds, durable=durable)
