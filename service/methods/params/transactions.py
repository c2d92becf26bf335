"""The params of transactions and receipts (nearcore's chain/jsonrpc/src/api/transactions.rs,
receipts.rs).

- `tx`, `EXPERIMENTAL_tx_status` (`RpcRequest for RpcTransactionStatusRequest`): a one-element
  array is a signed transaction's base64 (refused with "Failed to decode transaction: ..."), a
  two-element one `[tx_hash, sender_account_id]`; else the object, whose `wait_until` defaults to
  EXECUTED_OPTIMISTIC and whose flattened `TransactionInfo` is an untagged enum: the signed
  transaction (`signed_tx_base64`) first, then `{tx_hash, sender_account_id}`. A signed
  transaction is asked for by its hash and signer (jsonrpc-primitives types/transactions.rs,
  `TransactionInfo::to_tx_hash_and_account`), so every form reads into the hash form here and is
  answered alike. Its bytes are read by the sandbox runtime's decoder.
- `EXPERIMENTAL_receipt`: `{receipt_id}`.
"""

from __future__ import annotations

from typing import Any, Final

from nearrpc.generated.methods import MethodSpec
from nearrpc.methods.errors import parse_error
from nearrpc.methods.params.readers import (
    TX_EXECUTION_STATUSES,
    Reader,
    check_variant,
    checked_account_id,
    checked_hash,
    expect_object,
    failed,
    json_kind,
)
from nearrpc.sandbox.runtime.decode import (
    TransactionDecodeError,
    UnsupportedTransaction,
    decode_signed_transaction_base64,
)

_EXECUTED_OPTIMISTIC: Final = "EXECUTED_OPTIMISTIC"
_NO_VARIANT: Final = "data did not match any variant of untagged enum TransactionInfo"


def _wait_until(fields: dict[str, Any]) -> str:
    value = fields.get("wait_until", _EXECUTED_OPTIMISTIC)
    check_variant(value, TX_EXECUTION_STATUSES)
    return str(value)


def _asked(text: str, wait_until: str) -> dict[str, str]:
    """The hash form of a signed transaction, or TransactionDecodeError with the decoder's words."""
    signed = decode_signed_transaction_base64(text)
    return {"tx_hash": signed.hash, "sender_account_id": signed.transaction.signer_id, "wait_until": wait_until}


def _positional_signed(value: object) -> dict[str, str]:
    # api/transactions.rs `decode_signed_transaction`: its errors are the RpcParseError text itself
    if not isinstance(value, str):
        raise failed(f"invalid type: {json_kind(value)}, expected a string")
    try:
        return _asked(value, _EXECUTED_OPTIMISTIC)
    except TransactionDecodeError as problem:
        raise parse_error(problem.rpc_text) from None


def _member_signed(value: object, wait_until: str) -> dict[str, str] | None:
    """The untagged enum's first variant, or None when it does not match (serde then tries the
    next). A transaction nearcore reads but this decoder does not is refused in the decoder's
    words rather than as no variant: the words say what is missing (DEVIATIONS)."""
    if not isinstance(value, str):
        return None
    try:
        return _asked(value, wait_until)
    except UnsupportedTransaction as problem:
        raise parse_error(problem.rpc_text) from None
    except TransactionDecodeError:
        return None


def tx_params(method: MethodSpec, params: object) -> object:
    if isinstance(params, list) and len(params) == 1:
        return _positional_signed(params[0])
    if isinstance(params, list) and len(params) == 2:
        return (checked_hash(params[0]), checked_account_id(params[1]))
    fields = expect_object(params, method.params_schema)
    wait_until = _wait_until(fields)
    if "signed_tx_base64" in fields:
        asked = _member_signed(fields["signed_tx_base64"], wait_until)
        if asked is not None:
            return asked
    if "tx_hash" in fields and "sender_account_id" in fields:
        return {
            "tx_hash": checked_hash(fields["tx_hash"]),
            "sender_account_id": checked_account_id(fields["sender_account_id"]),
            "wait_until": wait_until,
        }
    raise failed(_NO_VARIANT)


def receipt_params(method: MethodSpec, params: object) -> object:
    fields = expect_object(params, method.params_schema)
    if "receipt_id" not in fields:
        raise failed("missing field `receipt_id`")
    return {"receipt_id": checked_hash(fields["receipt_id"])}


READERS: Final[dict[str, Reader]] = {
    "tx": tx_params,
    "EXPERIMENTAL_tx_status": tx_params,
    "EXPERIMENTAL_receipt": receipt_params,
}
