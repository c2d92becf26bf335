"""Checks every store implementation runs before it writes a value.

Each check parses the JSON, validates it against its component schema in the spec
(`nearrpc.spec.validate_component`), checks that the index fields agree with the JSON,
and returns the compact serialization that is stored and later served byte for byte.

`validate=False` (values copied from another nearrpc store, or written by a generator that
validates samples) skips only the schema validation of whole documents, the costly part (about
5 ms per block); parsing, index fields, epoch keys and account id syntax are always checked.
"""

from __future__ import annotations

import hashlib
from functools import cache
from typing import Any, Final

import based58
import orjson

from nearrpc.nearcore.account_id import account_id_problem
from nearrpc.nearcore.public_key import PublicKeyError, canonical_public_key
from nearrpc.nearcore.views import ACCOUNT_VIEW_BLOCK_MEMBERS, EPOCH_CONFIG_KEYS, ZERO_HASH
from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.spec import validate_component
from nearrpc.store.base import (
    BLOCK_INDEX_FIELDS,
    StoredBlock,
    StoredChunk,
    StoredEpoch,
    StoredReceipt,
    StoredTransaction,
    StoredValidators,
    StoreIntegrityError,
)
from nearrpc.store.layout import MAX_HEIGHT, height_in_range


def load_object(data: bytes, what: str) -> dict[str, Any]:
    """Parse JSON bytes that must hold an object."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise StoreIntegrityError(f"{what}: expected JSON bytes, got {type(data).__name__}")
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise StoreIntegrityError(f"{what}: not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise StoreIntegrityError(f"{what}: expected a JSON object, got {type(value).__name__}")
    return value


def compact(value: object) -> bytes:
    """Compact JSON with the key order of `value` kept."""
    return orjson.dumps(value)


def check_genesis_config(data: bytes, *, validate: bool = True) -> tuple[bytes, str, int]:
    """Return (stored bytes, chain id, genesis height)."""
    config = load_object(data, "genesis config")
    if validate:
        validate_component("GenesisConfig", config)
    elif not isinstance(config.get("chain_id"), str) or not isinstance(config.get("genesis_height"), int):
        raise StoreIntegrityError("genesis config: no chain_id string or genesis_height integer")
    _check_height("genesis config", int(config["genesis_height"]))
    return compact(config), str(config["chain_id"]), int(config["genesis_height"])


def check_client_config(data: bytes, *, validate: bool = True) -> bytes:
    config = load_object(data, "client config")
    if validate:
        validate_component("RpcClientConfigResponse", config)
    return compact(config)


def _check_height(what: str, height: int) -> None:
    """Both engines keep heights as signed 64-bit integers: refuse what they cannot hold rather
    than fail deep in the driver (or, in SQLite, store a float)."""
    if not height_in_range(height):
        raise StoreIntegrityError(f"{what}: height {height} is out of range (0 to {MAX_HEIGHT})")


def moved_block(block_hash: str, stored_height: int, height: int) -> StoreIntegrityError:
    """A block's hash fixes its height: the same hash at another height is refused, never a move."""
    return StoreIntegrityError(
        f"block {block_hash} is stored at height {stored_height}; refusing it at height {height} "
        "(a block's hash fixes its height)"
    )


def check_block(block: StoredBlock, *, validate: bool = True) -> bytes:
    _check_height(f"block {block.hash}", block.height)
    view = load_object(block.view_json, f"block {block.height}")
    if validate:
        validate_component("RpcBlockResponse", view)
    header = view.get("header")
    if not isinstance(header, dict) or not all(field in header for field in BLOCK_INDEX_FIELDS):
        raise StoreIntegrityError(f"block {block.hash}: no header with {list(BLOCK_INDEX_FIELDS)}")
    for field in BLOCK_INDEX_FIELDS:
        if getattr(block, field) != header[field]:
            raise StoreIntegrityError(
                f"block {block.hash}: {field}={getattr(block, field)!r} but header.{field}={header[field]!r}"
            )
    return compact(view)


def check_epoch(epoch: StoredEpoch, *, validate: bool = True) -> bytes:
    if epoch.protocol_version < 0:
        raise StoreIntegrityError(f"epoch {epoch.epoch_id}: negative protocol version")
    validate_component("CryptoHash", epoch.epoch_id)  # epochs are few: always
    config = load_object(epoch.config_json, f"epoch {epoch.epoch_id} config")
    unknown = sorted(set(config) - set(EPOCH_CONFIG_KEYS))
    if unknown:
        raise StoreIntegrityError(f"epoch {epoch.epoch_id} config: keys {unknown} are not epoch-level settings")
    # Every protocol config field is optional in the spec, so the subset validates as is.
    if validate:
        validate_component("RpcProtocolConfigResponse", config)
    return compact(config)


def check_recorded_protocol_config(epoch: StoredEpoch, *, validate: bool = True) -> bytes | None:
    """The epoch's verbatim protocol config, when it carries one: a whole result that agrees
    with the epoch's protocol version and config values."""
    if epoch.protocol_config_json is None:
        return None
    what = f"epoch {epoch.epoch_id} protocol config"
    config = load_object(epoch.protocol_config_json, what)
    if validate:
        validate_component("RpcProtocolConfigResponse", config)
    if config.get("protocol_version") != epoch.protocol_version:
        raise StoreIntegrityError(
            f"{what}: protocol_version={config.get('protocol_version')!r} but the epoch's "
            f"protocol version is {epoch.protocol_version}"
        )
    overrides = load_object(epoch.config_json, f"epoch {epoch.epoch_id} config")
    differing = sorted(key for key, value in overrides.items() if config.get(key) != value)
    if differing:
        raise StoreIntegrityError(f"{what}: {differing} differ from the epoch's config values")
    return compact(config)


def check_account_state(
    account_id: str, height: int, view_json: bytes | None, *, validate: bool = True
) -> bytes | None:
    if validate:
        validate_component("AccountId", account_id)
    elif not isinstance(account_id, str) or account_id_problem(account_id) is not None:
        raise StoreIntegrityError(f"account {account_id!r}: not a valid account id")
    _check_height(f"account {account_id}", height)
    if view_json is None:
        return None
    view = load_object(view_json, f"account {account_id} at {height}")
    present = [key for key in ACCOUNT_VIEW_BLOCK_MEMBERS if key in view]
    if present:
        raise StoreIntegrityError(
            f"account {account_id} at {height}: the stored view must not contain {present}; "
            "the handler adds them for the block it answers for"
        )
    # The response members are added only to validate the shape; their values do not matter.
    if validate:
        validate_component("RpcViewAccountResponse", {**view, "block_height": height, "block_hash": ZERO_HASH})
    return compact(view)


def check_access_key(
    account_id: str, public_key: str, height: int, view_json: bytes | None, *, validate: bool = True
) -> tuple[str, bytes | None]:
    """The key's canonical spelling and the compact view (None: deleted)."""
    if not isinstance(account_id, str) or account_id_problem(account_id) is not None:
        raise StoreIntegrityError(f"access key of {account_id!r}: not a valid account id")
    try:
        canonical = canonical_public_key(public_key)
    except PublicKeyError as problem:
        raise StoreIntegrityError(f"access key {public_key!r} of {account_id}: {problem}") from None
    _check_height(f"access key {canonical} of {account_id}", height)
    if view_json is None:
        return canonical, None
    view = load_object(view_json, f"access key {canonical} of {account_id} at {height}")
    if set(view) != {"nonce", "permission"}:
        raise StoreIntegrityError(f"access key {canonical} of {account_id}: a view has nonce and permission only")
    if validate:
        validate_component("AccessKeyView", view)
    return canonical, compact(view)


def check_contract_code(code_hash: str, code: bytes) -> None:
    """Code is stored under its own hash, base58(sha256(code)), as nearcore names it."""
    if not isinstance(code, bytes) or not code:
        raise StoreIntegrityError(f"contract code {code_hash}: no code")
    actual = based58.b58encode(hashlib.sha256(code).digest()).decode("ascii")
    if actual != code_hash:
        raise StoreIntegrityError(f"contract code stored as {code_hash} hashes to {actual}")


def check_block_hash(block_hash: str, what: str = "block hash") -> None:
    """A block hash (any CryptoHash: `what` names it) is the base58 text of 32 bytes (and a
    44-character text is never longer)."""
    try:
        fits = isinstance(block_hash, str) and len(block_hash) <= 44
        decoded = based58.b58decode(block_hash.encode("ascii")) if fits else b""
    except (ValueError, UnicodeEncodeError):
        decoded = b""
    if len(decoded) != 32:
        raise StoreIntegrityError(f"{str(block_hash)[:60]!r} is not a {what} (base58 of 32 bytes)")


@cache
def storage_limits() -> tuple[int, int]:
    """The longest storage key and value any protocol version lets a contract write
    (`max_length_storage_key`, `max_length_storage_value` of the runtime config). The largest
    over all versions: a key written before a version lowered the bound stays in the state."""
    params = RuntimeParamStore.load()
    limits = [params.nearcore_view(version, "mainnet")["wasm_config"] for version in params.stored_versions]
    return (
        max(int(view["limit_config"]["max_length_storage_key"]) for view in limits),  # type: ignore[index]
        max(int(view["limit_config"]["max_length_storage_value"]) for view in limits),  # type: ignore[index]
    )


def check_contract_data(account_id: str, key: bytes, height: int, value: bytes | None) -> None:
    """One storage key of a contract: bytes within nearcore's bounds, at a valid account."""
    if not isinstance(account_id, str) or account_id_problem(account_id) is not None:
        raise StoreIntegrityError(f"contract state of {account_id!r}: not a valid account id")
    if not isinstance(key, bytes):
        raise StoreIntegrityError(f"contract state of {account_id}: a storage key is bytes, got {type(key).__name__}")
    _check_height(f"contract state of {account_id}", height)
    max_key, max_value = storage_limits()
    if len(key) > max_key:
        raise StoreIntegrityError(
            f"contract state of {account_id} at {height}: a storage key of {len(key)} bytes is longer than "
            f"nearcore's max_length_storage_key ({max_key})"
        )
    if value is None:
        return
    if not isinstance(value, bytes):
        raise StoreIntegrityError(
            f"contract state of {account_id}: a storage value is bytes or None (removed), got {type(value).__name__}"
        )
    if len(value) > max_value:
        raise StoreIntegrityError(
            f"contract state of {account_id} at {height}: a storage value of {len(value)} bytes is longer than "
            f"nearcore's max_length_storage_value ({max_value})"
        )


# -- chunks, transactions, receipts, validators (schema 5) ----------------------------------------
# Each record's JSON is validated against the component of the answer it is (upstream 1.2.13's,
# synced into the spec), and its index fields repeat members of its JSON (where the JSON has them):
# a put refuses a record whose fields and JSON disagree, and `store check` finds a stored one that
# does (without the spec validation, as for every other kind).

_MAX_SHARD_ID: Final = (1 << 63) - 1  # both engines keep a shard id as a signed 64-bit integer


def _check_shard(what: str, shard_id: int) -> None:
    if not isinstance(shard_id, int) or isinstance(shard_id, bool) or not 0 <= shard_id <= _MAX_SHARD_ID:
        raise StoreIntegrityError(f"{what}: shard id {shard_id!r} is out of range (0 to {_MAX_SHARD_ID})")


def _member(view: dict[str, Any], path: tuple[str, ...], what: str) -> object:
    """The member at `path` of a stored JSON object; refused when a step is missing."""
    value: object = view
    for step in path:
        if not isinstance(value, dict) or step not in value:
            raise StoreIntegrityError(f"{what}: the JSON has no {'.'.join(path)}")
        value = value[step]
    return value


def _agrees(what: str, field: str, value: object, view: dict[str, Any], path: tuple[str, ...]) -> None:
    found = _member(view, path, what)
    if found != value:
        raise StoreIntegrityError(f"{what}: {field}={value!r} but {'.'.join(path)}={found!r}")


def check_chunk(chunk: StoredChunk, *, validate: bool = True) -> bytes:
    """A chunk's stored bytes: the `chunk` result, whose header names its hash, the height that
    included it and its shard."""
    what = f"chunk {str(chunk.chunk_hash)[:60]}"
    check_block_hash(chunk.chunk_hash, "chunk hash")
    check_block_hash(chunk.block_hash, "block hash")
    _check_height(what, chunk.height)
    _check_shard(what, chunk.shard_id)
    view = load_object(chunk.view_json, what)
    if validate:
        validate_component("RpcChunkResponse", view)
    _agrees(what, "chunk_hash", chunk.chunk_hash, view, ("header", "chunk_hash"))
    _agrees(what, "height", chunk.height, view, ("header", "height_included"))
    _agrees(what, "shard_id", chunk.shard_id, view, ("header", "shard_id"))
    return compact(view)


def check_transaction(transaction: StoredTransaction, *, validate: bool = True) -> bytes:
    """A transaction's stored bytes: its EXPERIMENTAL_tx_status result, whose transaction names
    its hash and signer and whose outcome the block that executed it."""
    what = f"transaction {str(transaction.tx_hash)[:60]}"
    check_block_hash(transaction.tx_hash, "transaction hash")
    check_block_hash(transaction.block_hash, "block hash")
    if not isinstance(transaction.signer_id, str) or account_id_problem(transaction.signer_id) is not None:
        raise StoreIntegrityError(f"{what}: signer {transaction.signer_id!r} is not a valid account id")
    _check_height(what, transaction.height)
    _check_shard(what, transaction.shard_id)
    view = load_object(transaction.view_json, what)
    if validate:
        validate_component("RpcTransactionResponse", view)
        # the stored form is EXPERIMENTAL_tx_status's, with receipts (`tx` answers it without them)
        validate_component("FinalExecutionOutcomeWithReceiptView", view)
    _agrees(what, "tx_hash", transaction.tx_hash, view, ("transaction", "hash"))
    _agrees(what, "signer_id", transaction.signer_id, view, ("transaction", "signer_id"))
    _agrees(what, "tx_hash", transaction.tx_hash, view, ("transaction_outcome", "id"))
    _agrees(what, "block_hash", transaction.block_hash, view, ("transaction_outcome", "block_hash"))
    return compact(view)


def check_receipt(receipt: StoredReceipt, *, validate: bool = True) -> tuple[bytes, bytes | None]:
    """A receipt's stored bytes and its outcome's: the ReceiptView names its id; the outcome
    (when known) the same id and the block that executed it."""
    what = f"receipt {str(receipt.receipt_id)[:60]}"
    check_block_hash(receipt.receipt_id, "receipt id")
    check_block_hash(receipt.block_hash, "block hash")
    _check_height(what, receipt.height)
    _check_shard(what, receipt.shard_id)
    view = load_object(receipt.view_json, what)
    if validate:
        validate_component("RpcReceiptResponse", view)
    _agrees(what, "receipt_id", receipt.receipt_id, view, ("receipt_id",))
    if receipt.outcome_json is None:
        return compact(view), None
    outcome = load_object(receipt.outcome_json, f"{what} outcome")
    if validate:
        validate_component("ExecutionOutcomeWithIdView", outcome)
    _agrees(f"{what} outcome", "receipt_id", receipt.receipt_id, outcome, ("id",))
    _agrees(f"{what} outcome", "block_hash", receipt.block_hash, outcome, ("block_hash",))
    return compact(view), compact(outcome)


def check_validators(validators: StoredValidators, *, validate: bool = True) -> bytes:
    """An epoch's validators record: the `validators` result as of a block at or after the
    epoch's start (the JSON names no epoch id; its start height is checked against `height`)."""
    what = f"validators of epoch {str(validators.epoch_id)[:60]}"
    check_block_hash(validators.epoch_id, "epoch id")
    _check_height(what, validators.height)
    view = load_object(validators.view_json, what)
    if validate:
        validate_component("RpcValidatorResponse", view)
    start = _member(view, ("epoch_start_height",), what)
    if not isinstance(start, int) or isinstance(start, bool) or start > validators.height:
        raise StoreIntegrityError(
            f"{what}: height={validators.height} but epoch_start_height={start!r} (the view counts blocks of the "
            "epoch up to its height)"
        )
    return compact(view)
