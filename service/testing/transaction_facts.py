"""The facts about what happened on the chain a test server serves: its new chunks, the
transactions they included and the receipts those led to, each named as a client asks for it
(`chunk` by hash, `tx` by hash and signer, `EXPERIMENTAL_receipt` by id). Read from a store's
rows, or for a fork asked of the server (`served_transaction_facts`), derived the same way."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from nearrpc.store import ChainReader


class ChunkFact(NamedTuple):
    height: int  # of the block that included it (its height_included)
    shard_id: int
    chunk_hash: str


class TransactionFact(NamedTuple):
    tx_hash: str
    signer_id: str  # `tx`'s sender_account_id
    height: int  # of the block whose chunk included it


class ReceiptFact(NamedTuple):
    receipt_id: str
    receiver_id: str  # who executed it
    tx_hash: str  # the transaction it came from


class TransactionFacts(NamedTuple):
    chunks: tuple[ChunkFact, ...]
    transactions: tuple[TransactionFact, ...]
    receipts: tuple[ReceiptFact, ...]


def receipt_facts(tx_hash: str, status: dict[str, Any]) -> list[ReceiptFact]:
    """The receipts a transaction's status names, in its receipts_outcome order."""
    return [
        ReceiptFact(str(outcome["id"]), str(outcome["outcome"]["executor_id"]), tx_hash)
        for outcome in status.get("receipts_outcome", [])
    ]


def _ordered(chunks: Iterable[ChunkFact], transactions: Iterable[tuple[TransactionFact, dict[str, Any]]]) -> (
    TransactionFacts
):
    """Chunks by height and shard; transactions by height and hash, each followed in the
    receipts by the receipts it led to."""
    ordered = sorted(transactions, key=lambda pair: (pair[0].height, pair[0].tx_hash))
    receipts = [receipt for fact, status in ordered for receipt in receipt_facts(fact.tx_hash, status)]
    return TransactionFacts(tuple(sorted(chunks)), tuple(fact for fact, _ in ordered), tuple(receipts))


def stored_transaction_facts(reader: ChainReader, first_height: int) -> TransactionFacts:
    """The chunks and transactions the store holds from `first_height` up."""
    chunks = (ChunkFact(c.height, c.shard_id, c.chunk_hash) for c in reader.iter_chunks() if c.height >= first_height)
    transactions = (
        (TransactionFact(t.tx_hash, t.signer_id, t.height), json.loads(t.view_json))
        for t in reader.iter_transactions()
        if t.height >= first_height
    )
    return _ordered(chunks, transactions)


# A JSON-RPC call that must answer a result (the facts' _Rpc.found), and one that may answer
# None for the causes named (the facts' _Rpc.result).
Found = Callable[[str, object], dict[str, Any]]
Asked = Callable[..., dict[str, Any] | None]


# transactions a fork's facts name at most (each costs an EXPERIMENTAL_tx_status request)
SERVED_TRANSACTIONS = 10


def served_transaction_facts(found: Found, result: Asked, heights: Iterable[int], final_height: int) -> (
    TransactionFacts
):
    """The new chunks of the blocks at `heights`, as the server answers `block`, and the
    transactions of those at or below `final_height` (`SERVED_TRANSACTIONS` at most), as it
    answers `chunk` and `EXPERIMENTAL_tx_status` (a fork records each of these requests). Above
    the final block a status may still move on, so a fork answers it without keeping it: a
    replay could not name the same. A transaction whose receipts have not all run as of the
    server's head (a fork pinned just above it) answers TIMEOUT_ERROR, as nearcore's poll for it
    would end: it is left out."""
    chunks: list[ChunkFact] = []
    candidates: list[TransactionFact] = []
    for height in heights:
        block = found("block", {"block_id": height})
        for header, new in zip(block["chunks"], block["header"]["chunk_mask"], strict=True):
            if not new:
                continue
            chunks.append(ChunkFact(height, int(header["shard_id"]), str(header["chunk_hash"])))
            if height <= final_height:
                listed = found("chunk", {"chunk_id": header["chunk_hash"]})["transactions"]
                candidates += [TransactionFact(str(tx["hash"]), str(tx["signer_id"]), height) for tx in listed]
    transactions: list[tuple[TransactionFact, dict[str, Any]]] = []
    for fact in sorted(candidates, key=lambda fact: (fact.height, fact.tx_hash))[:SERVED_TRANSACTIONS]:
        named = {"tx_hash": fact.tx_hash, "sender_account_id": fact.signer_id}
        status = result("EXPERIMENTAL_tx_status", named, absent=("TIMEOUT_ERROR",))
        if status is not None:
            transactions.append((fact, status))
    return _ordered(chunks, transactions)
