"""The table layout both SQL stores share (SQLite and PostgreSQL hold the same tables, columns
and `meta` keys; see `sqlite_schema.py` for what each table holds), and the conversions from their
rows to the store's records."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from nearrpc.store.base import (
    SCHEMA_VERSION,
    STORE_KINDS,
    StoredBlock,
    StoredChunk,
    StoredEpoch,
    StoredReceipt,
    StoredTransaction,
    StoredValidators,
    StoreInfo,
    StoreVersion,
)

# Every table of the layout; a check reports the ones missing.
TABLES: Final = (
    "nearrpc_schema", "meta", "config", "blocks", "epochs", "account_states", "access_keys", "contract_codes",
    "contract_data", "chunks", "transactions", "receipts", "validators",
)  # fmt: skip

# Tables a store gets when it first needs them (`WriteBatch.put_fetched`); builds before them
# serve the store without reading them, and a check does not miss them.
FETCHED_TABLE: Final = "fetched"
OPTIONAL_TABLES: Final = (FETCHED_TABLE,)

# The columns a block lookup selects, in the order `block_from_row` reads them.
BLOCK_COLUMNS: Final = "height, hash, prev_hash, epoch_id, last_final_block, last_ds_final_block, view_json"
EPOCH_COLUMNS: Final = "epoch_id, protocol_version, config_json, protocol_config_json"
CHUNK_COLUMNS: Final = "chunk_hash, block_hash, height, shard_id, view_json"
TRANSACTION_COLUMNS: Final = "tx_hash, signer_id, block_hash, height, shard_id, view_json"
RECEIPT_COLUMNS: Final = "receipt_id, block_hash, height, shard_id, view_json, outcome_json"
VALIDATORS_COLUMNS: Final = "epoch_id, height, view_json"

# Names in the `config` table.
GENESIS_CONFIG: Final = "genesis_config"
CLIENT_CONFIG: Final = "client_config"

# Keys in the `meta` table besides chain_id and genesis_height: a resumable import's note, the
# row counts the writer keeps (so `info()`, polled by /health, never counts rows) and a change
# counter per kind of data (`StoreVersion`).
IMPORT_PROGRESS: Final = "import_progress"
GENESIS_HASH: Final = "genesis_hash"  # kept by a store without its genesis block (a recording)
# a fork's upstream answers kept verbatim (`WriteBatch.put_kept_answer`): "kept-answer/<key>";
# no other meta key starts so, and the range below holds exactly them ("0" follows "/")
KEPT_ANSWER_PREFIX: Final = "kept-answer/"
KEPT_ANSWER_END: Final = "kept-answer0"
COUNTERS: Final = {
    "blocks": "block_count", "epochs": "epoch_count", "account_states": "account_state_count",
    "access_keys": "access_key_count", "contract_codes": "contract_code_count",
    "contract_data": "contract_data_count", "chunks": "chunk_count", "transactions": "transaction_count",
    "receipts": "receipt_count", "validators": "validators_count",
}  # fmt: skip
VERSION_KEYS: Final = {kind: f"version_{kind}" for kind in STORE_KINDS}
# StoreVersion.rewrites: absent from a store no batch ever took rows back from (read as 0).
REWRITES_KEY: Final = "version_rewrites"
# Every meta key the change counters are read from.
VERSION_META_KEYS: Final = (*VERSION_KEYS.values(), REWRITES_KEY)
INFO_KEYS: Final = ["chain_id", "genesis_height", *COUNTERS.values()]

# Distinct accounts with a stored state: one walk of the account_states primary key, not a
# lookup (for /metrics, which redoes it only when states were added).
ACCOUNT_COUNT: Final = "SELECT count(*) FROM (SELECT DISTINCT account_id FROM account_states) AS accounts"

# Heights are signed 64-bit integers in both engines; a lookup outside finds nothing.
MAX_HEIGHT: Final = (1 << 63) - 1


def height_in_range(height: int) -> bool:
    """Heights outside a signed 64-bit integer are never stored (and would fail as parameters)."""
    return 0 <= height <= MAX_HEIGHT


def block_from_row(row: Any) -> StoredBlock | None:
    """A block from a row of `BLOCK_COLUMNS`."""
    if row is None:
        return None
    height, block_hash, prev_hash, epoch_id, last_final, last_ds_final, view_json = row
    return StoredBlock(height, block_hash, prev_hash, epoch_id, last_final, last_ds_final, bytes(view_json))


def epoch_from_row(row: Any) -> StoredEpoch | None:
    """An epoch from a row of `EPOCH_COLUMNS`."""
    if row is None:
        return None
    recorded = None if row[3] is None else bytes(row[3])
    return StoredEpoch(row[0], row[1], bytes(row[2]), protocol_config_json=recorded)


def chunk_from_row(row: Any) -> StoredChunk | None:
    """A chunk from a row of `CHUNK_COLUMNS`."""
    if row is None:
        return None
    return StoredChunk(row[0], row[1], int(row[2]), int(row[3]), bytes(row[4]))


def transaction_from_row(row: Any) -> StoredTransaction | None:
    """A transaction from a row of `TRANSACTION_COLUMNS`."""
    if row is None:
        return None
    return StoredTransaction(row[0], row[1], row[2], int(row[3]), int(row[4]), bytes(row[5]))


def receipt_from_row(row: Any) -> StoredReceipt | None:
    """A receipt from a row of `RECEIPT_COLUMNS`."""
    if row is None:
        return None
    outcome = None if row[5] is None else bytes(row[5])
    return StoredReceipt(row[0], row[1], int(row[2]), int(row[3]), bytes(row[4]), outcome)


def validators_from_row(row: Any) -> StoredValidators | None:
    """An epoch's validators from a row of `VALIDATORS_COLUMNS`."""
    if row is None:
        return None
    return StoredValidators(row[0], int(row[1]), bytes(row[2]))


def version_from_rows(rows: list[Any]) -> StoreVersion:
    """The change counters from (key, value) rows of `meta`."""
    counters = {key: int(value) for key, value in rows}
    kinds = {kind: counters.get(key, 0) for kind, key in VERSION_KEYS.items()}
    return StoreVersion(**kinds, rewrites=counters.get(REWRITES_KEY, 0))


def info_from(meta: Mapping[str, str], earliest: StoredBlock | None, head: StoredBlock | None) -> StoreInfo:
    """The store's summary from the `INFO_KEYS` values of `meta` and its lowest and highest block."""
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
        access_key_count=int(meta.get("access_key_count", 0)),
        contract_code_count=int(meta.get("contract_code_count", 0)),
        contract_data_count=int(meta.get("contract_data_count", 0)),
        chunk_count=int(meta.get("chunk_count", 0)),
        transaction_count=int(meta.get("transaction_count", 0)),
        receipt_count=int(meta.get("receipt_count", 0)),
        validators_count=int(meta.get("validators_count", 0)),
    )


def prefix_end(prefix: bytes) -> bytes | None:
    """The least byte string above every key that starts with `prefix` (both engines compare
    keys byte by byte, a shorter key first); None when there is none (an empty prefix, or one
    of 0xff bytes only): the range is then open above."""
    stripped = prefix.rstrip(b"\xff")
    return stripped[:-1] + bytes((stripped[-1] + 1,)) if stripped else None
