"""The params of transactions and receipts (nearcore's chain/jsonrpc/src/api/transactions.rs,
receipts.rs).

- `tx`, `EXPERIMENTAL_tx_status`: a one-element array is a signed transaction, a two-element
  one `[tx_hash, sender_account_id]`; else the object, whose `wait_until` defaults to
  EXECUTED_OPTIMISTIC. Signed transactions (`[signed_tx]`, `signed_tx_base64`) are refused:
  this server has no decoder of them (spec/DEVIATIONS.md).
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
)

_SIGNED_TX_REFUSED: Final = (
    "Failed parsing args: a signed transaction (signed_tx_base64) is not read by this server; "
    "ask by [tx_hash, sender_account_id] or {tx_hash, sender_account_id}"
)


def _wait_until(fields: dict[str, Any]) -> str:
    value = fields.get("wait_until", "EXECUTED_OPTIMISTIC")
    check_variant(value, TX_EXECUTION_STATUSES)
    return str(value)


def tx_params(method: MethodSpec, params: object) -> object:
    if isinstance(params, list) and len(params) == 1:
        raise parse_error(_SIGNED_TX_REFUSED)
    if isinstance(params, list) and len(params) == 2:
        return (checked_hash(params[0]), checked_account_id(params[1]))
    fields = expect_object(params, method.params_schema)
    wait_until = _wait_until(fields)
    if "tx_hash" in fields and "sender_account_id" in fields:
        return {
            "tx_hash": checked_hash(fields["tx_hash"]),
            "sender_account_id": checked_account_id(fields["sender_account_id"]),
            "wait_until": wait_until,
        }
    if "signed_tx_base64" in fields:
        raise parse_error(_SIGNED_TX_REFUSED)
    raise failed("data did not match any variant of untagged enum TransactionInfo")


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
