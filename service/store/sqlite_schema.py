"""The SQLite store's tables, by the schema version that added them, and the SQL text of its
named lookups; the check that a file holds this build's schema version.

Tables:
- `nearrpc_schema(version)`: one row, the table layout version (`SCHEMA_VERSION`).
- `meta(key, value)`: chain_id and genesis_height (from the genesis config), the row counts of
  the three data tables and a change counter per kind of data (`StoreVersion`), kept up to date
  by the writer, and a resumable import's progress note.
- `config(name, json)`: the genesis_config and client_config results.
- `blocks`: one row per block (forks too), keyed by hash; a partial unique index on height
  over the canonical rows answers lookups by height.
- `epochs`: per epoch id, its protocol version and epoch-level config values, and optionally
  the whole protocol config a node answered for it (`protocol_config_json`, recorded imports).
- `account_states`: (account_id, height) -> account view, NULL when deleted at that height.
- `access_keys`: (account_id, public_key, height) -> access key view (nonce, permission), NULL
  when deleted at that height; keys in their canonical spelling (`ed25519:...`).
- `contract_codes`: code hash -> contract code (wasm bytes).
- `contract_data`: (account_id, key, height) -> value of that storage key of the account's
  contract (bytes; NULL when removed at that height). Keys and values are BLOBs, which SQLite
  compares byte by byte (a shorter key first): nearcore's trie order.
- `chunks`: chunk hash -> the block that included it, its height and shard, the `chunk` result.
- `transactions`: transaction hash -> signer, the block whose chunk included it, its height and
  shard, its EXPERIMENTAL_tx_status result; indexed by height (in shard order).
- `receipts`: receipt id -> the block that executed it, its height and shard, its ReceiptView and
  its execution outcome (NULL when unknown); indexed by height (in shard order).
- `validators`: epoch id -> the `validators` result as of a height (replaced as the epoch goes on).
  Account states, access keys and contract state are also indexed by height (the changes methods
  list the rows written at one height).
- `fetched(key)`, optional: what a fork (`nearrpc serve --upstream`) fetched from its upstream
  where the other tables cannot show it (`WriteBatch.put_fetched`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

from nearrpc.store.base import SCHEMA_VERSION, StoreSchemaError
from nearrpc.store.layout import (
    BLOCK_COLUMNS,
    CHUNK_COLUMNS,
    EPOCH_COLUMNS,
    FETCHED_TABLE,
    RECEIPT_COLUMNS,
    TRANSACTION_COLUMNS,
    VALIDATORS_COLUMNS,
    VERSION_META_KEYS,
)

# The tables schema version 3 added (an upgrade from 2 creates them).
_SCHEMA_3_TABLES: Final = (
    """CREATE TABLE access_keys (
        account_id TEXT NOT NULL,
        public_key TEXT NOT NULL,
        height INTEGER NOT NULL,
        view_json BLOB,
        PRIMARY KEY (account_id, public_key, height)
    ) WITHOUT ROWID""",
    "CREATE TABLE contract_codes (code_hash TEXT PRIMARY KEY, code BLOB NOT NULL) WITHOUT ROWID",
)
# The table schema version 4 added (an upgrade from 3 creates it). Its primary key answers a
# key's value at a height (one seek) and an account's keys from a prefix (one range scan).
_SCHEMA_4_TABLES: Final = (
    """CREATE TABLE contract_data (
        account_id TEXT NOT NULL,
        key BLOB NOT NULL,
        height INTEGER NOT NULL,
        value BLOB,
        PRIMARY KEY (account_id, key, height)
    ) WITHOUT ROWID""",
)
# What schema version 5 added (an upgrade from 4 creates it): chunks, transactions and receipts
# by hash, each also by height (a block's own, in shard order), an epoch's validators, and the
# indexes that list the rows of account, key and contract state written at one height (the
# changes methods), in account order.
_SCHEMA_5_TABLES: Final = (
    """CREATE TABLE chunks (
        chunk_hash TEXT PRIMARY KEY,
        block_hash TEXT NOT NULL,
        height INTEGER NOT NULL,
        shard_id INTEGER NOT NULL,
        view_json BLOB NOT NULL
    )""",
    """CREATE TABLE transactions (
        tx_hash TEXT PRIMARY KEY,
        signer_id TEXT NOT NULL,
        block_hash TEXT NOT NULL,
        height INTEGER NOT NULL,
        shard_id INTEGER NOT NULL,
        view_json BLOB NOT NULL
    )""",
    "CREATE INDEX transactions_by_height ON transactions (height, shard_id, tx_hash)",
    """CREATE TABLE receipts (
        receipt_id TEXT PRIMARY KEY,
        block_hash TEXT NOT NULL,
        height INTEGER NOT NULL,
        shard_id INTEGER NOT NULL,
        view_json BLOB NOT NULL,
        outcome_json BLOB
    )""",
    "CREATE INDEX receipts_by_height ON receipts (height, shard_id, receipt_id)",
    """CREATE TABLE validators (
        epoch_id TEXT PRIMARY KEY,
        height INTEGER NOT NULL,
        view_json BLOB NOT NULL
    ) WITHOUT ROWID""",
    "CREATE INDEX account_states_by_height ON account_states (height, account_id)",
    "CREATE INDEX access_keys_by_height ON access_keys (height, account_id, public_key)",
    "CREATE INDEX contract_data_by_height ON contract_data (height, account_id, key)",
)
DDL: Final = (
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
    *_SCHEMA_3_TABLES,
    *_SCHEMA_4_TABLES,
    *_SCHEMA_5_TABLES,
    f"CREATE TABLE {FETCHED_TABLE} (key TEXT PRIMARY KEY) WITHOUT ROWID",
)
# What turns a store of an older schema version into the next one (`upgrade_store`): only
# additions, so nothing stored changes.
UPGRADES: Final = {2: _SCHEMA_3_TABLES, 3: _SCHEMA_4_TABLES, 4: _SCHEMA_5_TABLES}

# The lookups readers run, by name. Tests check with EXPLAIN QUERY PLAN that each one is
# answered from a primary key or index.
LOOKUP_QUERIES: Final[dict[str, str]] = {
    "head": f"SELECT {BLOCK_COLUMNS} FROM blocks WHERE canonical = 1 ORDER BY height DESC LIMIT 1",
    "earliest": f"SELECT {BLOCK_COLUMNS} FROM blocks WHERE canonical = 1 ORDER BY height ASC LIMIT 1",
    "block_by_height": f"SELECT {BLOCK_COLUMNS} FROM blocks WHERE height = ? AND canonical = 1",
    "block_by_hash": f"SELECT {BLOCK_COLUMNS} FROM blocks WHERE hash = ?",
    "block_json_by_height": "SELECT view_json FROM blocks WHERE height = ? AND canonical = 1",
    "block_json_by_hash": "SELECT view_json FROM blocks WHERE hash = ?",
    "epoch": f"SELECT {EPOCH_COLUMNS} FROM epochs WHERE epoch_id = ?",
    "account": "SELECT view_json FROM account_states WHERE account_id = ? AND height <= ? ORDER BY height DESC LIMIT 1",
    "access_key": "SELECT view_json FROM access_keys WHERE account_id = ? AND public_key = ? AND height <= ? "
    "ORDER BY height DESC LIMIT 1",
    # every state of the account's keys up to the height (sql.latest_access_keys picks each one's last)
    "access_keys": "SELECT public_key, height, view_json FROM access_keys WHERE account_id = ? AND height <= ?",
    "contract_code": "SELECT code FROM contract_codes WHERE code_hash = ?",
    "contract_value": "SELECT value FROM contract_data WHERE account_id = ? AND key = ? AND height <= ? "
    "ORDER BY height DESC LIMIT 1",
    # each key's latest row at or below the height (SQLite takes a bare column from the max()
    # row), walked in key order along the primary key by a co-routine that stops at the limit
    # (an ORDER BY outside the subquery would sort all of it first)
    "contract_state": "SELECT key, value FROM (SELECT key, value, max(height) FROM contract_data "
    "WHERE account_id = ? AND key >= ? AND key < ? AND height <= ? GROUP BY key ORDER BY key) "
    "WHERE value IS NOT NULL LIMIT ?",
    "contract_state_open": "SELECT key, value FROM (SELECT key, value, max(height) FROM contract_data "
    "WHERE account_id = ? AND key >= ? AND height <= ? GROUP BY key ORDER BY key) WHERE value IS NOT NULL LIMIT ?",
    "chunk": f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE chunk_hash = ?",
    "transaction": f"SELECT {TRANSACTION_COLUMNS} FROM transactions WHERE tx_hash = ?",
    "receipt": f"SELECT {RECEIPT_COLUMNS} FROM receipts WHERE receipt_id = ?",
    "validators": f"SELECT {VALIDATORS_COLUMNS} FROM validators WHERE epoch_id = ?",
    "transactions_at": f"SELECT {TRANSACTION_COLUMNS} FROM transactions WHERE height = ? ORDER BY shard_id, tx_hash",
    "receipts_at": f"SELECT {RECEIPT_COLUMNS} FROM receipts WHERE height = ? ORDER BY shard_id, receipt_id",
    # the rows written at exactly one height, along the by-height indexes (account order)
    "account_changes": "SELECT account_id, view_json FROM account_states WHERE height = ? ORDER BY account_id",
    "access_key_changes": "SELECT account_id, public_key, view_json FROM access_keys WHERE height = ? "
    "ORDER BY account_id, public_key",
    "contract_data_changes": "SELECT account_id, key, value FROM contract_data WHERE height = ? "
    "ORDER BY account_id, key",
    "fetched": f"SELECT 1 FROM {FETCHED_TABLE} WHERE key = ?",
    "config": "SELECT json FROM config WHERE name = ?",
    "meta": "SELECT value FROM meta WHERE key = ?",
    "version": f"SELECT key, value FROM meta WHERE key IN ({', '.join(repr(key) for key in VERSION_META_KEYS)})",
    # epoch_start_height: a walk down the canonical heights from a block to the last block of
    # the previous epoch (at most one epoch's blocks), then the canonical block after it
    "previous_epoch_block": "SELECT height, hash FROM blocks WHERE canonical = 1 AND height < ? AND epoch_id != ? "
    "ORDER BY height DESC LIMIT 1",
    "next_block": f"SELECT {BLOCK_COLUMNS} FROM blocks WHERE canonical = 1 AND height > ? ORDER BY height ASC LIMIT 1",
}


def schema_version(conn: sqlite3.Connection, path: Path) -> object:
    try:
        rows = conn.execute("SELECT version FROM nearrpc_schema").fetchall()
    except sqlite3.DatabaseError as exc:  # no such table, or not an SQLite file at all
        raise StoreSchemaError(f"{path} is not a nearrpc store (no schema version table: {exc})") from exc
    if len(rows) != 1:
        raise StoreSchemaError(f"{path}: the schema version table has {len(rows)} rows, not 1")
    version: object = rows[0][0]
    return version


def check_schema(conn: sqlite3.Connection, path: Path) -> None:
    version = schema_version(conn, path)
    if version in UPGRADES:
        raise StoreSchemaError(
            f"{path} has store schema version {version}, this build reads version {SCHEMA_VERSION}: upgrade it in "
            f"place with `nearrpc store upgrade --store {path}` (it only adds tables)"
        )
    if version != SCHEMA_VERSION:
        raise StoreSchemaError(
            f"{path} has store schema version {version!r}, this build reads version {SCHEMA_VERSION}: "
            f"rebuild it with this build (`nearrpc sample {path} --force` for the sample chain, "
            "or import its data into a new store)"
        )
