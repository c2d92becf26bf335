"""The walk an explorer makes, over JSON-RPC: each block, its new chunks (`chunk_mask`), each
chunk's transactions, each transaction's status (`tx` and `EXPERIMENTAL_tx_status`, in both
forms) and each receipt (`EXPERIMENTAL_receipt`), checking at every step that what one answer
names the next answers the same way: hashes, heights, signer, receipt ids and outcomes.

Every answer is kept as the bytes the server sent, so two walks (a server and a fork of it, a
fork and its replay) can be compared byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import base58
import httpx
import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

# the statuses of a transaction whose receipts have all run
EXECUTED_STATUSES = ("EXECUTED_OPTIMISTIC", "EXECUTED", "FINAL")


class WalkError(AssertionError):
    """A step of the walk found an answer that does not fit what the step before named."""


@dataclass
class Walk:
    """What a walk met, and every answer as sent: (method, params as JSON) -> (status, body)."""

    answers: dict[tuple[str, str], tuple[int, bytes]] = field(default_factory=dict)
    blocks: list[str] = field(default_factory=list)  # block hashes, in the order walked
    chunks: list[str] = field(default_factory=list)  # new chunks' hashes
    old_chunks: list[str] = field(default_factory=list)  # (block, shard) without a new chunk: the shard's last
    transactions: list[tuple[str, str]] = field(default_factory=list)  # (hash, signer)
    receipts: list[str] = field(default_factory=list)  # every receipt id an outcome names, once


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise WalkError(what)


class _Rpc:
    def __init__(self, client: httpx.Client, url: str, walk: Walk) -> None:
        self._client, self._url, self._walk = client, url, walk

    def result(self, method: str, params: Any) -> Any:
        body = orjson.dumps({"jsonrpc": "2.0", "id": "walk", "method": method, "params": params})
        reply = self._client.post(self._url, content=body, headers={"content-type": "application/json"})
        self._walk.answers[(method, orjson.dumps(params).decode())] = (reply.status_code, reply.content)
        answer = orjson.loads(reply.content)
        _expect(reply.status_code == 200 and "result" in answer, f"{method} {params}: {reply.content[:400]!r}")
        return answer["result"]


def verify_signature(transaction: dict[str, Any]) -> None:
    """The transaction's ed25519 signature verifies over its hash (nearcore signs the hash)."""
    scheme, _, key = str(transaction["public_key"]).partition(":")
    kind, _, signature = str(transaction["signature"]).partition(":")
    _expect(scheme == kind == "ed25519", f"transaction {transaction['hash']}: key {scheme}, signature {kind}")
    public = Ed25519PublicKey.from_public_bytes(base58.b58decode(key))
    try:
        public.verify(base58.b58decode(signature), base58.b58decode(transaction["hash"]))
    except InvalidSignature:
        raise WalkError(f"transaction {transaction['hash']}: the signature does not verify over its hash") from None


def _reachable(status: dict[str, Any]) -> list[str]:
    """The receipt ids the transaction's outcome leads to, following each outcome's receipt_ids."""
    outcomes = {o["id"]: o["outcome"] for o in status["receipts_outcome"]}
    order: list[str] = []
    pending = list(status["transaction_outcome"]["outcome"]["receipt_ids"])
    while pending:
        receipt_id = pending.pop(0)
        if receipt_id in order:
            continue
        order.append(receipt_id)
        _expect(receipt_id in outcomes, f"receipt {receipt_id} is named but has no outcome in receipts_outcome")
        pending += outcomes[receipt_id]["receipt_ids"]
    return order


class _Walker:
    def __init__(self, rpc: _Rpc, walk: Walk) -> None:
        self.rpc, self.walk = rpc, walk
        self.heights: dict[str, int] = {}  # block hash -> height, of every block met

    def height_of(self, block_hash: str) -> int:
        if block_hash not in self.heights:
            self.heights[block_hash] = int(self.rpc.result("block", {"block_id": block_hash})["header"]["height"])
        return self.heights[block_hash]

    def block(self, height: int) -> None:
        block = self.rpc.result("block", {"block_id": height})
        header = block["header"]
        _expect(header["height"] == height, f"block {height} answered height {header['height']}")
        self.heights[header["hash"]] = height
        self.walk.blocks.append(header["hash"])
        for chunk_header, new in zip(block["chunks"], header["chunk_mask"], strict=True):
            if new:
                self.new_chunk(header, chunk_header)
            else:
                self.old_chunk(header, chunk_header)

    def new_chunk(self, block_header: dict[str, Any], chunk_header: dict[str, Any]) -> None:
        chunk_hash, shard_id, height = chunk_header["chunk_hash"], chunk_header["shard_id"], block_header["height"]
        by_hash = self.rpc.result("chunk", {"chunk_id": chunk_hash})
        by_block = self.rpc.result("chunk", {"block_id": block_header["hash"], "shard_id": shard_id})
        legacy = self.rpc.result("chunk", [chunk_hash])
        _expect(by_hash == by_block == legacy, f"chunk {chunk_hash}: by hash, by block and shard, [hash] differ")
        _expect(by_hash["header"] == chunk_header, f"chunk {chunk_hash}: its header differs from block {height}'s")
        _expect(chunk_header["height_included"] == height, f"new chunk {chunk_hash} included at another height")
        self.walk.chunks.append(chunk_hash)
        for receipt in by_hash["receipts"]:
            stored = self.rpc.result("EXPERIMENTAL_receipt", {"receipt_id": receipt["receipt_id"]})
            _expect(stored == receipt, f"chunk {chunk_hash}: receipt {receipt['receipt_id']} answers otherwise")
        for transaction in by_hash["transactions"]:
            self.transaction(transaction, block_header)

    def old_chunk(self, block_header: dict[str, Any], chunk_header: dict[str, Any]) -> None:
        """A shard without a new chunk: by block and shard, the shard's last chunk (nearcore
        answers the chunk the block's header names), included below this block."""
        shard_id = chunk_header["shard_id"]
        chunk = self.rpc.result("chunk", {"block_id": block_header["hash"], "shard_id": shard_id})
        _expect(
            chunk["header"]["chunk_hash"] == chunk_header["chunk_hash"],
            f"block {block_header['height']} shard {shard_id}: not the chunk its header names",
        )
        _expect(
            chunk["header"]["height_included"] < block_header["height"],
            f"block {block_header['height']} shard {shard_id}: a chunk not new is included at its height",
        )
        self.walk.old_chunks.append(chunk_header["chunk_hash"])

    def transaction(self, transaction: dict[str, Any], block_header: dict[str, Any]) -> None:
        tx_hash, signer = transaction["hash"], transaction["signer_id"]
        verify_signature(transaction)
        named = {"tx_hash": tx_hash, "sender_account_id": signer}
        answer = self.rpc.result("tx", named)
        _expect(self.rpc.result("tx", [tx_hash, signer]) == answer, f"tx {tx_hash}: [hash, signer] answers otherwise")
        status = self.rpc.result("EXPERIMENTAL_tx_status", named)
        legacy = self.rpc.result("EXPERIMENTAL_tx_status", [tx_hash, signer])
        _expect(legacy == status, f"EXPERIMENTAL_tx_status {tx_hash}: [hash, signer] answers otherwise")
        _expect(
            {k: v for k, v in status.items() if k != "receipts"} == answer,
            f"tx {tx_hash}: answers otherwise than EXPERIMENTAL_tx_status without its receipts",
        )
        _expect(answer["transaction"] == transaction, f"tx {tx_hash}: another transaction than the chunk's")
        executed = answer["final_execution_status"]
        _expect(executed in EXECUTED_STATUSES, f"tx {tx_hash}: final_execution_status {executed}")
        _expect(set(answer["status"]) <= {"SuccessValue", "Failure"}, f"tx {tx_hash}: status {answer['status']}")
        outcome = answer["transaction_outcome"]
        _expect(outcome["id"] == tx_hash, f"tx {tx_hash}: its outcome is of {outcome['id']}")
        _expect(outcome["block_hash"] == block_header["hash"], f"tx {tx_hash}: its outcome is in another block")
        _expect(outcome["outcome"]["executor_id"] == signer, f"tx {tx_hash}: executed by another than its signer")
        self.transaction_receipts(status, transaction, block_header["height"])
        self.walk.transactions.append((tx_hash, signer))

    def transaction_receipts(self, status: dict[str, Any], transaction: dict[str, Any], height: int) -> None:
        tx_hash = transaction["hash"]
        order = _reachable(status)
        _expect(
            sorted(order) == sorted(o["id"] for o in status["receipts_outcome"]),
            f"tx {tx_hash}: receipts_outcome holds outcomes its receipts do not lead to",
        )
        listed = {r["receipt_id"]: r for r in status["receipts"]}
        _expect(set(listed) <= set(order), f"tx {tx_hash}: receipts lists receipts its outcomes do not name")
        outcomes = {o["id"]: o for o in status["receipts_outcome"]}
        for index, receipt_id in enumerate(order):
            executed = outcomes[receipt_id]
            _expect(
                self.height_of(executed["block_hash"]) >= height,
                f"receipt {receipt_id}: executed below the block that included its transaction",
            )
            if receipt_id not in self.walk.receipts:
                self.walk.receipts.append(receipt_id)
            receipt = self.rpc.result("EXPERIMENTAL_receipt", {"receipt_id": receipt_id})
            _expect(receipt["receipt_id"] == receipt_id, f"receipt {receipt_id} answers {receipt['receipt_id']}")
            _expect(listed.get(receipt_id, receipt) == receipt, f"tx {tx_hash}: receipt {receipt_id} differs")
            _expect(
                executed["outcome"]["executor_id"] == receipt["receiver_id"],
                f"receipt {receipt_id}: executed by another than its receiver",
            )
            if index == 0:  # the transaction's own receipt: from its signer to its receiver
                _expect(
                    (receipt["predecessor_id"], receipt["receiver_id"])
                    == (transaction["signer_id"], transaction["receiver_id"]),
                    f"tx {tx_hash}: its first receipt is not from its signer to its receiver",
                )


def walk_chain(url: str, heights: Iterable[int], *, timeout: float = 30.0) -> Walk:
    """Walk the blocks at `heights` of the server at `url` (its JSON-RPC endpoint, `/`);
    raises WalkError at the first answer that does not fit."""
    walk = Walk()
    with httpx.Client(timeout=timeout) as client:
        walker = _Walker(_Rpc(client, url, walk), walk)
        for height in heights:
            walker.block(height)
    return walk
