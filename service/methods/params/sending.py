"""The params of the writing methods (issue 45): the sends and nearcore's sandbox methods.

- `send_tx`, `broadcast_tx_commit`, `broadcast_tx_async` (chain/jsonrpc api/transactions.rs,
  `RpcRequest for RpcSendTransactionRequest`): a one-element array is `[signed_tx_base64]`
  (`wait_until` the default), decoded with "Failed to decode transaction: ..."; a two-element one
  is refused once both are strings ("too many params passed"); anything else is the struct
  `{signed_tx_base64, wait_until}` (default EXECUTED_OPTIMISTIC), whose SignedTransaction says
  "the value could not decoded from base64 due to: ..." (core/primitives transaction.rs). The
  borsh bytes are decoded by the sandbox's runtime, which the handlers ask.
- `sandbox_patch_state` (jsonrpc-primitives types/sandbox.rs): `{records: [StateRecord]}`, the
  records' own shapes left to the generated model; `sandbox_fast_forward`: `{delta_height}`, a
  u64 bounded here (each block is written); `sandbox_revert`: `{snapshot_id}`.
"""

from __future__ import annotations

from typing import Any, Final

from nearrpc.generated.methods import MethodSpec
from nearrpc.methods.errors import parse_error
from nearrpc.methods.params.readers import (
    TX_EXECUTION_STATUSES,
    Reader,
    check_variant,
    expect_object,
    failed,
    json_kind,
)
from nearrpc.nearcore.base64_standard import Base64Error, decode_standard

_SEND_STRUCT: Final = "RpcSendTransactionRequest"
# nearcore's StateRecord variants, in its order: the receipts' ones are refused here (DEVIATIONS)
_STATE_RECORDS: Final = (
    "Account", "Data", "Contract", "AccessKey", "PostponedReceipt", "ReceivedData", "DelayedReceipt",
)  # fmt: skip
_PATCHABLE: Final = frozenset({"Account", "Data", "Contract", "AccessKey"})
MAX_PATCH_RECORDS: Final = 100_000  # records one patch may hold (sandbox.chain.patch's MAX_RECORDS)
MAX_FAST_FORWARD: Final = 10_000  # blocks a request may ask for (the spec's maximum; each is written)
_MAX_U64: Final = 2**64 - 1


def _string(value: object) -> str:
    if not isinstance(value, str):
        raise failed(f"invalid type: {json_kind(value)}, expected a string")
    return value


def _decoded_positional(value: object) -> str:
    text = _string(value)
    try:
        decode_standard(text)
    except Base64Error as problem:
        raise parse_error(f"Failed to decode transaction: {problem}") from None
    return text


def _decoded_member(value: object) -> str:
    text = _string(value)
    try:
        decode_standard(text)
    except Base64Error as problem:
        raise failed(f"the value could not decoded from base64 due to: {problem}") from None
    return text


def send_params(method: MethodSpec, params: object) -> object:
    """The signed transaction stays base64 text (the model's); a handler decodes it again."""
    if isinstance(params, list) and len(params) == 1:
        return (_decoded_positional(params[0]),)
    if isinstance(params, list) and len(params) == 2:
        _string(params[0])
        _string(params[1])
        raise parse_error("Unable to parse send request: too many params passed")
    if isinstance(params, list):  # a struct read from a sequence: its two members by position
        if not params:
            raise failed(f"invalid length 0, expected struct {_SEND_STRUCT} with 2 elements")
        _decoded_member(params[0])
        check_variant(params[1], TX_EXECUTION_STATUSES)
        raise failed(f"invalid length {len(params)}, expected fewer elements in array")
    fields = expect_object(params, _SEND_STRUCT)
    request: dict[str, Any] = {"wait_until": "EXECUTED_OPTIMISTIC"}
    for key, value in fields.items():  # serde's order: the members as they come
        if key == "signed_tx_base64":
            request[key] = _decoded_member(value)
        elif key == "wait_until":
            check_variant(value, TX_EXECUTION_STATUSES)
            request[key] = value
    if "signed_tx_base64" not in request:
        raise failed("missing field `signed_tx_base64`")
    return request


def _u64(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise failed(f"invalid type: {json_kind(value)}, expected u64")
    if not 0 <= value <= _MAX_U64:
        raise failed(f"invalid value: {json_kind(value)}, expected u64")
    return value


def patch_state_params(method: MethodSpec, params: object) -> object:
    fields = expect_object(params, method.params_schema)
    if "records" not in fields:
        raise failed("missing field `records`")
    records = fields["records"]
    if not isinstance(records, list):
        raise failed(f"invalid type: {json_kind(records)}, expected a sequence")
    if len(records) > MAX_PATCH_RECORDS:  # before each record is read against the spec
        raise failed(f"{len(records)} records in one patch; at most {MAX_PATCH_RECORDS:,}")
    for record in records:
        if isinstance(record, dict) and len(record) != 1:  # serde_json's refusal of an enum from a map
            raise failed("invalid value: map, expected map with a single key")
        if isinstance(record, dict):
            (kind,) = record
            if kind not in _STATE_RECORDS:
                expected = ", ".join(f"`{name}`" for name in _STATE_RECORDS)
                raise failed(f"unknown variant `{kind}`, expected one of {expected}")
            if kind not in _PATCHABLE:
                raise failed(f"a {kind} record is not taken by this sandbox (Account, AccessKey, Contract, Data)")
    return {"records": records}  # each record's members: the generated model's (StateRecord)


def fast_forward_params(method: MethodSpec, params: object) -> object:
    fields = expect_object(params, method.params_schema)
    if "delta_height" not in fields:
        raise failed("missing field `delta_height`")
    delta = _u64(fields["delta_height"])
    if delta > MAX_FAST_FORWARD:
        raise failed(f"delta_height {delta} is more blocks than one request may produce here ({MAX_FAST_FORWARD:,})")
    return {"delta_height": delta}


def revert_params(method: MethodSpec, params: object) -> object:
    fields = expect_object(params, method.params_schema)
    if "snapshot_id" not in fields:
        raise failed("missing field `snapshot_id`")
    return {"snapshot_id": _string(fields["snapshot_id"])}


READERS: Final[dict[str, Reader]] = {
    "send_tx": send_params,
    "broadcast_tx_commit": send_params,
    "broadcast_tx_async": send_params,
    "sandbox_patch_state": patch_state_params,
    "sandbox_fast_forward": fast_forward_params,
    "sandbox_revert": revert_params,
}
