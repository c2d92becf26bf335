"""A transaction followed from its inclusion to its last receipt, then kept as the
EXPERIMENTAL_tx_status result the read methods serve (`StoredTransaction`).

nearcore gathers a transaction's outcome (chain/chain/src/chain.rs
`get_final_transaction_result`, `get_recursive_transaction_results`): its receipts' outcomes in
depth-first order from the transaction's own outcome (each outcome, then those of the receipts
it created, in their order), and the final status by following the outcome chain
(core/primitives/src/views.rs `FinalExecutionStatus`): a failure or a value ends it, a
`SuccessReceiptId` continues at that receipt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from nearrpc.store import StoredTransaction


@dataclass(slots=True)
class InFlight:
    """A transaction included in a block, some of whose receipts have not executed yet."""

    tx_hash: str
    signer_id: str
    shard_id: int
    height: int  # of the block that included it
    block_hash: str
    view: Mapping[str, Any]  # SignedTransactionView
    outcome: Mapping[str, Any]  # its conversion's ExecutionOutcomeWithIdView
    awaiting: set[str] = field(default_factory=set)  # receipt ids not executed yet
    outcomes: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # receipt id → outcome
    receipts: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # receipt id → ReceiptView

    def copy(self) -> InFlight:
        return InFlight(self.tx_hash, self.signer_id, self.shard_id, self.height, self.block_hash, self.view,
                        self.outcome, set(self.awaiting), dict(self.outcomes), dict(self.receipts))  # fmt: skip

    def start(self) -> None:
        self.awaiting.update(self.outcome["outcome"]["receipt_ids"])

    def executed(self, receipt_id: str, view: Mapping[str, Any], outcome: Mapping[str, Any]) -> list[str]:
        """Note a receipt executed; the receipt ids it created (which this transaction now awaits)."""
        self.awaiting.discard(receipt_id)
        self.outcomes[receipt_id] = outcome
        self.receipts[receipt_id] = view
        created = list(outcome["outcome"]["receipt_ids"])
        self.awaiting.update(created)
        return created

    @property
    def done(self) -> bool:
        return not self.awaiting

    def _in_order(self) -> list[str]:
        ordered: list[str] = []
        pending = list(reversed(self.outcome["outcome"]["receipt_ids"]))
        while pending:
            receipt_id = pending.pop()
            outcome = self.outcomes.get(receipt_id)
            if outcome is None or receipt_id in ordered:
                continue
            ordered.append(receipt_id)
            pending.extend(reversed(outcome["outcome"]["receipt_ids"]))
        return ordered

    def _final_status(self) -> Any:
        status = self.outcome["outcome"]["status"]
        for _ in range(len(self.outcomes) + 1):  # an outcome chain is no longer than its receipts
            if not isinstance(status, Mapping) or "SuccessReceiptId" not in status:
                break
            next_outcome = self.outcomes.get(status["SuccessReceiptId"])
            if next_outcome is None:
                break
            status = next_outcome["outcome"]["status"]
        if isinstance(status, Mapping) and "SuccessReceiptId" in status:
            return "Started"
        return status

    def stored(self) -> StoredTransaction:
        """Its EXPERIMENTAL_tx_status result (the read path computes final_execution_status)."""
        order = self._in_order()
        view = {
            "status": self._final_status(),
            "transaction": self.view,
            "transaction_outcome": self.outcome,
            "receipts_outcome": [self.outcomes[receipt_id] for receipt_id in order],
            "receipts": [self.receipts[receipt_id] for receipt_id in order],
            "final_execution_status": "EXECUTED_OPTIMISTIC",
        }
        return StoredTransaction(
            self.tx_hash, self.signer_id, self.block_hash, self.height, self.shard_id, orjson.dumps(view)
        )
