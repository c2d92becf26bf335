"""The status a transaction has reached (nearcore's get_tx_execution_status), for outcomes a stored
chain gives no example of: not executed yet, receipts pending, a block off the canonical chain.
The live tests (test_chunk_tx_receipt.py) cover FINAL, EXECUTED and EXECUTED_OPTIMISTIC."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from nearrpc.methods.transactions import execution_status
from nearrpc.store import ServingReader, StoredBlock


def _block(height: int, name: str | None = None) -> StoredBlock:
    block_hash = name or f"block{height}"
    return StoredBlock(height, block_hash, f"block{height - 1}", "epoch", "final", "final", b"{}")


class Chain:
    """Canonical blocks 1..10, and a block `fork9` off the chain at height 9."""

    def __init__(self) -> None:
        self.canonical = {h: _block(h) for h in range(1, 11)}
        self.by_hash = {b.hash: b for b in self.canonical.values()} | {"fork9": _block(9, "fork9")}

    async def block_by_hash(self, block_hash: str) -> StoredBlock | None:
        return self.by_hash.get(block_hash)

    async def block_by_height(self, height: int) -> StoredBlock | None:
        return self.canonical.get(height)


FINAL = _block(8)  # the final block: 1..8 final, 9 and 10 not yet


def _outcome(block: str, receipt_ids: list[str], status: Any = None) -> dict[str, Any]:
    return {"block_hash": block, "outcome": {"receipt_ids": receipt_ids, "status": status or {"SuccessValue": ""}}}


def _status(tx_block: str, receipts: list[tuple[str, str, list[str], Any]], tx_status: Any = None) -> str:
    """receipts: (id, block, the receipts it creates, status); the transaction creates the first."""
    outcome = {
        "transaction_outcome": _outcome(tx_block, [receipts[0][0]] if receipts else [], tx_status),
        "receipts_outcome": [{"id": rid, **_outcome(block, made, status)} for rid, block, made, status in receipts],
    }
    return asyncio.run(execution_status(cast(ServingReader, Chain()), outcome, FINAL))


@pytest.mark.parametrize(
    ("tx_block", "receipts", "tx_status", "expected"),
    [
        ("block5", [], "Unknown", "NONE"),
        # the transaction's block is not final yet
        ("block9", [("r", "block10", ["refund"], "Unknown")], None, "INCLUDED"),
        ("block9", [("r", "block10", ["refund"], None)], None, "EXECUTED_OPTIMISTIC"),  # the refund may wait
        ("fork9", [("r", "block10", [], None)], None, "EXECUTED_OPTIMISTIC"),
        # final: its receipt still pending, then its refund, then a receipt block not final
        ("block5", [("r", "block6", ["refund"], "Unknown")], None, "INCLUDED_FINAL"),
        ("block5", [("r", "block6", ["refund"], None)], None, "EXECUTED"),
        ("block5", [("r", "block6", ["refund"], None), ("refund", "block9", [], None)], None, "EXECUTED"),
        ("block5", [("r", "block6", ["refund"], None), ("refund", "fork9", [], None)], None, "EXECUTED"),
        ("block5", [("r", "block6", ["refund"], None), ("refund", "block8", [], None)], None, "FINAL"),
        ("block5", [("r", "block5", [], None)], None, "FINAL"),
    ],
)
def test_the_status_follows_nearcores_rule(
    tx_block: str, receipts: list[tuple[str, str, list[str], Any]], tx_status: Any, expected: str
) -> None:
    assert _status(tx_block, receipts, tx_status) == expected


def test_without_a_final_block_nothing_is_final() -> None:
    outcome = {"transaction_outcome": _outcome("block1", []), "receipts_outcome": []}
    assert asyncio.run(execution_status(cast(ServingReader, Chain()), outcome, None)) == "EXECUTED_OPTIMISTIC"
