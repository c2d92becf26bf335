"""What the checker learns for the reads of what happened (chunks, transactions, receipts): a
new chunk of the final block, and a transaction with its first receipt, walking back from the
final block by parent hash through each block's new chunks, a few blocks at most."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nearrpc.conform.facts import EndpointFacts, SeenChunk, SeenTransaction

# blocks from the final one down that the walk reads at most, looking for a transaction, and
# the chunks it asks for at most (a quiet chain with many shards would cost a request a shard)
TRANSACTION_SEARCH = 12
CHUNK_SEARCH = 16

# a request's result, or None for anything else (an error, no answer, the budget spent)
Ask = Callable[[str, object], Any]


def _new_chunks(header: dict[str, Any], chunks: list[Any]) -> list[SeenChunk]:
    mask, block_hash, height = header.get("chunk_mask"), header.get("hash"), header.get("height")
    if not isinstance(mask, list) or not isinstance(block_hash, str) or not isinstance(height, int):
        return []
    seen = []
    for chunk, new in zip(chunks, mask, strict=False):
        if new is True and isinstance(chunk, dict):
            chunk_hash, shard_id = chunk.get("chunk_hash"), chunk.get("shard_id")
            if isinstance(chunk_hash, str) and isinstance(shard_id, int):
                seen.append(SeenChunk(chunk_hash, block_hash, height, shard_id))
    return seen


def _first_receipt(status: Any) -> str | None:
    outcome = status.get("transaction_outcome") if isinstance(status, dict) else None
    ids = outcome.get("outcome", {}).get("receipt_ids") if isinstance(outcome, dict) else None
    return ids[0] if isinstance(ids, list) and ids and isinstance(ids[0], str) else None


def _transaction(chunk: Any, ask: Ask) -> SeenTransaction | None:
    transactions = chunk.get("transactions") if isinstance(chunk, dict) else None
    if not isinstance(transactions, list) or not transactions or not isinstance(transactions[0], dict):
        return None
    tx = transactions[0]
    tx_hash, signer, key = tx.get("hash"), tx.get("signer_id"), tx.get("public_key")
    if not (isinstance(tx_hash, str) and isinstance(signer, str) and isinstance(key, str)):
        return None
    status = ask("EXPERIMENTAL_tx_status", {"tx_hash": tx_hash, "sender_account_id": signer})
    return SeenTransaction(tx_hash, signer, key, _first_receipt(status))


def learn_chain_reads(facts: EndpointFacts, ask: Ask) -> None:
    """Fill `facts.chunk` and `facts.transaction` with what the walk finds (each may stay None)."""
    header, chunks, asked = facts.final_header, facts.final_chunks, 0
    for _ in range(TRANSACTION_SEARCH):
        if header is None:
            return
        for seen in _new_chunks(header, chunks):
            facts.chunk = facts.chunk or seen
            if asked == CHUNK_SEARCH:
                return
            asked += 1
            facts.transaction = _transaction(ask("chunk", {"chunk_id": seen.chunk_hash}), ask)
            if facts.transaction is not None:
                return
        parent = ask("block", {"block_id": header.get("prev_hash")}) if header.get("height") else None
        if not isinstance(parent, dict) or not isinstance(parent.get("header"), dict):
            return
        header, listed = parent["header"], parent.get("chunks")
        chunks = listed if isinstance(listed, list) else []
