"""The sample chain's chunks, transactions, receipts and validators as the client tests expect
them answered: read off `nearrpc.sample`'s records (the bytes the store holds), never copied."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson

from nearrpc.sample import sample_chain
from nearrpc.store import StoredChunk, StoredTransaction, StoredValidators
from tests.support.sample_facts import sample_facts


def view(json_bytes: bytes) -> Any:
    return orjson.loads(json_bytes)


def tx_status(tx: StoredTransaction) -> dict[str, Any]:
    """EXPERIMENTAL_tx_status's result: the stored view."""
    status: dict[str, Any] = view(tx.view_json)
    return status


def tx_result(tx: StoredTransaction) -> dict[str, Any]:
    """`tx`'s result: the stored view without its receipts."""
    return {key: value for key, value in tx_status(tx).items() if key != "receipts"}


def receipt_ids(tx: StoredTransaction) -> list[str]:
    """The receipts the transaction led to, in its receipts_outcome order."""
    return [outcome["id"] for outcome in tx_status(tx)["receipts_outcome"]]


@dataclass(frozen=True)
class ChainRecords:
    chunks: tuple[StoredChunk, ...]
    transactions: tuple[StoredTransaction, ...]
    validators: tuple[StoredValidators, ...]

    def chunks_with_transactions(self) -> list[StoredChunk]:
        return [chunk for chunk in self.chunks if view(chunk.view_json)["transactions"]]

    def receipt_height(self, receipt_id: str) -> int:
        """The height of the block that executed the receipt."""
        return next(r.height for r in sample_chain().receipts if r.receipt_id == receipt_id)

    def receipt(self, receipt_id: str) -> dict[str, Any]:
        found = next(r for r in sample_chain().receipts if r.receipt_id == receipt_id)
        receipt: dict[str, Any] = view(found.view_json)
        return receipt

    def epoch_validators(self, epoch_id: str) -> dict[str, Any]:
        found: dict[str, Any] = view(next(v for v in self.validators if v.epoch_id == epoch_id).view_json)
        return found

    def current_validators(self) -> dict[str, Any]:
        """`validators` [null]: the head's epoch, as of the head."""
        return self.epoch_validators(sample_facts().epoch_at(sample_facts().head_height).epoch_id)

    def finished_epochs(self) -> list[tuple[str, int]]:
        """(epoch id, height of its last block) of every epoch that has ended below the head."""
        facts = sample_facts()
        return [(e.epoch_id, e.last_height) for e in facts.epochs[:-1]]


@cache
def chain_records() -> ChainRecords:
    chain = sample_chain()
    return ChainRecords(chain.chunks, chain.transactions, chain.validators)


@dataclass(frozen=True)
class Transfer:
    """A transfer and the account changes it made: its signer's at the block that included it
    (caused by the transaction), its receiver's at the block that executed its receipt."""

    tx_hash: str
    signer_id: str
    receiver_id: str
    height: int
    receipt_id: str
    receipt_height: int


def first_transfer() -> Transfer:
    tx = sample_facts().transaction(action="Transfer")
    receipt_id = tx.receipt_ids[0]
    return Transfer(tx.tx_hash, tx.signer_id, tx.receiver_id, tx.height, receipt_id,
                    chain_records().receipt_height(receipt_id))  # fmt: skip


def account_change(changes: list[dict[str, Any]], account_id: str, cause: dict[str, str]) -> dict[str, Any]:
    """The one account_update of `account_id` with `cause` among `changes`."""
    (found,) = [c for c in changes if c["type"] == "account_update" and c["change"]["account_id"] == account_id
                and c["cause"] == cause]  # fmt: skip
    change: dict[str, Any] = found["change"]
    return change
