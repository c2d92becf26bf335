"""The params forms of issue 30's reads, with nearcore's parsing rules (chain/jsonrpc/src/api).

- `chunk` (chunks.rs): a one-element array holds `[block_id, shard_id]` when its element is an
  array, else a chunk hash; anything else is the flattened, untagged ChunkReference:
  `{block_id, shard_id}` first, then `{chunk_id}`.
- `tx`, `EXPERIMENTAL_tx_status` (transactions.rs): a one-element array is a signed transaction,
  a two-element one `[tx_hash, sender_account_id]`; else the object, whose `wait_until`
  defaults to EXECUTED_OPTIMISTIC. Signed transactions (`[signed_tx]`, `signed_tx_base64`)
  are refused: this server has no decoder of them (spec/DEVIATIONS.md).
- `EXPERIMENTAL_receipt` (receipts.rs): `{receipt_id}`.
- `validators` (validator.rs): `[block_id or null]` (null: the latest epoch), else the first
  member naming an EpochReference variant: `epoch_id`, `block_id` or `latest` (null).
- `EXPERIMENTAL_validators_ordered`: a plain struct, so `{block_id?}` or the one-element array.

Each returns the value the generated model validates; refusals read like serde's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from nearrpc.http.params import _failed, _json_kind, checked_account_id, checked_block_id, is_block_hash
from nearrpc.methods.errors import RpcError, parse_error
from nearrpc.nearcore.echo import shown

MAX_U64: Final = 2**64 - 1
TX_EXECUTION_STATUSES: Final = ("NONE", "INCLUDED", "EXECUTED_OPTIMISTIC", "INCLUDED_FINAL", "EXECUTED", "FINAL")
_SIGNED_TX_REFUSED: Final = (
    "Failed parsing args: a signed transaction (signed_tx_base64) is not read by this server; "
    "ask by [tx_hash, sender_account_id] or {tx_hash, sender_account_id}"
)


def _hash(value: object) -> str:
    if not isinstance(value, str):
        raise _failed(f"invalid type: {_json_kind(value)}, expected a string")
    if not is_block_hash(value):
        raise _failed(f'invalid value: string "{shown(value)}", expected a base58 hash of 32 bytes')
    return value


def _u64(value: object) -> int:
    """A u64; an integral float (2.0) is the integer it equals, as JSON Schema (and `height_of`)
    reads it, though nearcore refuses it."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_U64:
        return value
    raise _failed(f"invalid type: {_json_kind(value)}, expected u64")


def _struct(params: object, name: str) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise _failed(f"invalid type: {_json_kind(params)}, expected struct {name}")
    return params


def _fits(check: Callable[[object], object], value: object) -> bool:
    try:
        check(value)
    except RpcError:
        return False
    return True


def chunk_params(params: object) -> object:
    if isinstance(params, list) and len(params) == 1:
        (member,) = params
        if isinstance(member, list):
            if len(member) != 2:
                raise _failed(f"invalid length {len(member)}, expected a tuple of size 2")
            return ((checked_block_id(member[0]), _u64(member[1])),)
        return (_hash(member),)
    fields = _struct(params, "RpcChunkRequest")
    # untagged: the first variant whose members all parse
    if "block_id" in fields and "shard_id" in fields:
        if _fits(checked_block_id, fields["block_id"]) and _fits(_u64, fields["shard_id"]):
            return {"block_id": checked_block_id(fields["block_id"]), "shard_id": _u64(fields["shard_id"])}
    if "chunk_id" in fields and _fits(_hash, fields["chunk_id"]):
        return {"chunk_id": fields["chunk_id"]}
    raise _failed("data did not match any variant of untagged enum ChunkReference")


def _wait_until(fields: dict[str, Any]) -> str:
    value = fields.get("wait_until", "EXECUTED_OPTIMISTIC")
    if not isinstance(value, str):
        raise _failed(f"invalid type: {_json_kind(value)}, expected variant identifier")
    if value not in TX_EXECUTION_STATUSES:
        expected = ", ".join(f"`{v}`" for v in TX_EXECUTION_STATUSES)
        raise _failed(f"unknown variant `{shown(value)}`, expected one of {expected}")
    return value


def tx_params(params: object) -> object:
    if isinstance(params, list) and len(params) == 1:
        raise parse_error(_SIGNED_TX_REFUSED)
    if isinstance(params, list) and len(params) == 2:
        return (_hash(params[0]), checked_account_id(params[1]))
    fields = _struct(params, "RpcTransactionStatusRequest")
    wait_until = _wait_until(fields)
    if "tx_hash" in fields and "sender_account_id" in fields:
        return {
            "tx_hash": _hash(fields["tx_hash"]),
            "sender_account_id": checked_account_id(fields["sender_account_id"]),
            "wait_until": wait_until,
        }
    if "signed_tx_base64" in fields:
        raise parse_error(_SIGNED_TX_REFUSED)
    raise _failed("data did not match any variant of untagged enum TransactionInfo")


def receipt_params(params: object) -> object:
    fields = _struct(params, "RpcReceiptRequest")
    if "receipt_id" not in fields:
        raise _failed("missing field `receipt_id`")
    return {"receipt_id": _hash(fields["receipt_id"])}


def _maybe_block_id(value: object) -> int | str | None:
    return None if value is None else checked_block_id(value)


def validators_params(params: object) -> object:
    if isinstance(params, list) and len(params) == 1:
        return (_maybe_block_id(params[0]),)
    fields = _struct(params, "RpcValidatorRequest")
    for key, value in fields.items():  # the first member that names a variant
        if key == "epoch_id":
            return {"epoch_id": _hash(value)}
        if key == "block_id":
            return {"block_id": checked_block_id(value)}
        if key == "latest":
            if value is not None:
                raise _failed(f"invalid type: {_json_kind(value)}, expected unit")
            return {"latest": None}
    raise _failed("no variant of enum EpochReference found in flattened data")


def validators_ordered_params(params: object) -> object:
    if isinstance(params, list):
        if len(params) != 1:
            raise _failed(f"invalid length {len(params)}, expected struct RpcValidatorsOrderedRequest with 1 element")
        return (_maybe_block_id(params[0]),)
    fields = _struct(params, "RpcValidatorsOrderedRequest")
    return {"block_id": _maybe_block_id(fields.get("block_id"))}


# by method name: what normalise() hands these methods' params to
READ_PARAMS: Final[dict[str, Callable[[object], object]]] = {
    "chunk": chunk_params,
    "tx": tx_params,
    "EXPERIMENTAL_tx_status": tx_params,
    "EXPERIMENTAL_receipt": receipt_params,
    "validators": validators_params,
    "EXPERIMENTAL_validators_ordered": validators_ordered_params,
}
