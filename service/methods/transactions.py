"""`tx` and `EXPERIMENTAL_tx_status`: a stored transaction's outcome, at the status it has reached.

The store keeps each executed transaction's EXPERIMENTAL_tx_status result. What changes with
the chain is its `final_execution_status`, which nearcore computes when asked
(view_client_actor.rs `get_tx_execution_status`) from which of the blocks involved are final:
the transaction's block not final yet: EXECUTED_OPTIMISTIC (its non-refund receipts executed)
or INCLUDED; final: INCLUDED_FINAL until those receipts executed, EXECUTED until the refunds
did too, then FINAL once every receipt's block is final. A `wait_until` the transaction has
not reached is nearcore's TIMEOUT_ERROR, which nearcore answers after polling for ten seconds:
a store does not change while a request waits, so it is answered at once. A transaction the
store does not hold is UNKNOWN_TRANSACTION for `wait_until` NONE and otherwise the same
TIMEOUT_ERROR (nearcore polls until it appears). The sender only picks the shard a node asks;
a node that tracks every shard (and this store) finds the transaction by its hash whoever the
sender named.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import orjson

from nearrpc.generated import models
from nearrpc.methods import errors
from nearrpc.store import ServingReader, StoredBlock

# nearcore's TxExecutionStatus, from the least to the most a request can wait for
NONE, INCLUDED, EXECUTED_OPTIMISTIC = "NONE", "INCLUDED", "EXECUTED_OPTIMISTIC"
INCLUDED_FINAL, EXECUTED, FINAL = "INCLUDED_FINAL", "EXECUTED", "FINAL"
# jsonrpc lib.rs tx_execution_status_meets_expectations: the statuses each `wait_until` accepts
_MEETS: Final[dict[str, frozenset[str]]] = {
    NONE: frozenset({NONE, INCLUDED, EXECUTED_OPTIMISTIC, INCLUDED_FINAL, EXECUTED, FINAL}),
    INCLUDED: frozenset({INCLUDED, EXECUTED_OPTIMISTIC, INCLUDED_FINAL, EXECUTED, FINAL}),
    EXECUTED_OPTIMISTIC: frozenset({EXECUTED_OPTIMISTIC, EXECUTED, FINAL}),
    INCLUDED_FINAL: frozenset({INCLUDED_FINAL, EXECUTED, FINAL}),
    EXECUTED: frozenset({EXECUTED, FINAL}),
    FINAL: frozenset({FINAL}),
}
_UNKNOWN_STATUS: Final = "Unknown"  # an outcome not executed yet (ExecutionStatusView::Unknown)


@dataclass(frozen=True, slots=True)
class TransactionRequest:
    tx_hash: str
    sender_account_id: str
    wait_until: str


def transaction_request(params: models.RpcTransactionStatusRequest) -> TransactionRequest:
    """The object form or the legacy `[hash, sender]` (whose `wait_until` is the default)."""
    request: Any = params.root
    if isinstance(request, models.RpcTransactionStatusRequest1):
        return TransactionRequest(request.tx_hash.root, request.sender_account_id.root, request.wait_until.root)
    tx_hash, sender = request.root
    return TransactionRequest(tx_hash.root, sender.root, EXECUTED_OPTIMISTIC)


async def _final_and_canonical(reader: ServingReader, block_hashes: set[str], final: StoredBlock | None) -> bool:
    """Whether every block is on the canonical chain at or below the final block."""
    if final is None:
        return False
    for block_hash in block_hashes:
        block = await reader.block_by_hash(block_hash)
        if block is None or block.height > final.height:
            return False
        canonical = await reader.block_by_height(block.height)
        if canonical is None or canonical.hash != block_hash:
            return False
    return True


async def execution_status(reader: ServingReader, outcome: dict[str, Any], final: StoredBlock | None) -> str:
    """The status nearcore reports for this outcome while `final` is the final block."""
    transaction_outcome = outcome["transaction_outcome"]
    if transaction_outcome["outcome"]["status"] == _UNKNOWN_STATUS:
        return NONE
    receipts_outcome: list[dict[str, Any]] = outcome["receipts_outcome"]
    awaiting = set(transaction_outcome["outcome"]["receipt_ids"])
    # the last receipt an outcome creates is its refund
    awaiting_non_refund = set(transaction_outcome["outcome"]["receipt_ids"])
    for receipt in receipts_outcome:
        awaiting.update(receipt["outcome"]["receipt_ids"])
        awaiting_non_refund.update(receipt["outcome"]["receipt_ids"][:-1])
    executed = {receipt["id"] for receipt in receipts_outcome if receipt["outcome"]["status"] != _UNKNOWN_STATUS}
    executed_ignoring_refunds = awaiting_non_refund <= executed
    if not await _final_and_canonical(reader, {transaction_outcome["block_hash"]}, final):
        return EXECUTED_OPTIMISTIC if executed_ignoring_refunds else INCLUDED
    if not executed_ignoring_refunds:
        return INCLUDED_FINAL
    if not awaiting <= executed:
        return EXECUTED
    receipt_blocks = {receipt["block_hash"] for receipt in receipts_outcome}
    return FINAL if await _final_and_canonical(reader, receipt_blocks, final) else EXECUTED


async def transaction_answer(
    reader: ServingReader, request: TransactionRequest, final: StoredBlock | None, *, with_receipts: bool
) -> bytes:
    """The `tx` result (`with_receipts`: EXPERIMENTAL_tx_status's) of a stored transaction."""
    stored = await reader.transaction(request.tx_hash, request.sender_account_id)
    if stored is None:
        if request.wait_until == NONE:
            raise errors.unknown_transaction(request.tx_hash)
        raise errors.timeout_error()
    view: dict[str, Any] = orjson.loads(stored.view_json)
    status = await execution_status(reader, view, final)
    if status not in _MEETS[request.wait_until]:
        raise errors.timeout_error()
    view["final_execution_status"] = status  # in place: the stored member order stays
    if not with_receipts:
        view.pop("receipts", None)
    return orjson.dumps(view)
