"""A new block and its chunks, built on its parent's stored `block` result.

The block copies its parent's header and chunk headers, so whatever members the store's blocks
carry (of the protocol version they were recorded at) stay, and changes what a new block changes,
as the sample chain's generator builds its blocks (service/sample/generator.py; hashes and
signatures as crypto.py computes them, tx_root by nearcore's merkle tree):
- height +1, prev_height, prev_hash, block_ordinal +1, a timestamp, random_value;
- finality as nearcore's doomslug gives it with one producer and no skipped height
  (chain/chain/src/doomslug.rs): the parent is doomslug-final (`last_ds_final_block`) and the
  parent's doomslug-final block is final (`last_final_block`);
- a chunk per shard, every block (a single producer never misses one), whose execution results
  (gas_used, balance_burnt, outcome_root) are those of the previous block's application of that
  shard, as nearcore's chunk headers carry them (`prev_gas_used`, `prev_balance_burnt`,
  `prev_outcome_root`); its tx_root is over the borsh bytes of the transactions it includes;
- the gas price of the next block from this block's chunks (nearcore's
  `Block::compute_next_gas_price`: price * (1 + rate * (used / limit - 1/2)), clamped to the
  genesis min and max), and the total supply less the balance burnt those chunks report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nearrpc.nearcore.views import ZERO_HASH
from nearrpc.sample import crypto, merkle

# The key the sandbox signs its blocks, chunks and approvals with (a label of crypto.py's
# deterministic keys): signatures of the right shape, checked by no one.
SIGNER_LABEL = "nearrpc-sandbox-producer"


@dataclass(frozen=True, slots=True)
class ShardResults:
    """What applying a shard's chunk gave, reported by the next chunk of that shard."""

    gas_used: int = 0
    balance_burnt: int = 0
    outcome_root: str = ZERO_HASH


@dataclass(slots=True)
class ShardContent:
    """What a new chunk includes: transactions (borsh bytes, SignedTransactionView) and the
    receipts it carries in (ReceiptView)."""

    transactions: list[tuple[bytes, Mapping[str, Any]]] = field(default_factory=list)
    receipts: list[Mapping[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class GasPriceRule:
    """Genesis: min_gas_price, max_gas_price, gas_price_adjustment_rate."""

    min_price: int
    max_price: int
    rate: tuple[int, int]

    @classmethod
    def from_genesis(cls, genesis: Mapping[str, Any]) -> GasPriceRule:
        num, den = genesis["gas_price_adjustment_rate"]
        return cls(int(genesis["min_gas_price"]), int(genesis["max_gas_price"]), (int(num), int(den)))

    def next_price(self, price: int, gas_used: int, gas_limit: int) -> int:
        if gas_limit == 0:
            return price
        num, den = self.rate
        scaled = price * (2 * den * gas_limit + num * (2 * gas_used - gas_limit)) // (2 * den * gas_limit)
        return max(self.min_price, min(self.max_price, scaled))


@dataclass(frozen=True, slots=True)
class NewBlock:
    view: dict[str, Any]  # the `block` result
    chunk_views: list[dict[str, Any]]  # each shard's `chunk` result, in the block's chunk order


@dataclass(frozen=True, slots=True)
class BlockPlan:
    height: int
    timestamp_ns: int
    author: str
    epoch_id: str
    next_epoch_id: str
    new_epoch: bool
    contents: Sequence[ShardContent]  # per chunk of the parent, in its order
    results: Sequence[ShardResults]  # the previous application of each shard


def _chunk(parent_chunk: Mapping[str, Any], parent_hash: str, plan: BlockPlan, index: int) -> dict[str, Any]:
    content, results = plan.contents[index], plan.results[index]
    chunk = dict(parent_chunk)
    signed = [raw for raw, _ in content.transactions]
    tx_hashes = crypto.canonical_bytes([view["hash"] for _, view in content.transactions])
    receipt_ids = crypto.canonical_bytes([receipt["receipt_id"] for receipt in content.receipts])
    shard_id = chunk["shard_id"]
    chunk.update(
        chunk_hash="",
        prev_block_hash=parent_hash,
        outcome_root=results.outcome_root,
        prev_state_root=crypto.hash_of("state", parent_chunk["prev_state_root"], plan.height, tx_hashes),
        encoded_merkle_root=crypto.hash_of("encoded", shard_id, plan.height, tx_hashes),
        encoded_length=8 + sum(len(raw) for raw in signed),
        height_created=plan.height,
        height_included=plan.height,
        gas_used=results.gas_used,
        balance_burnt=str(results.balance_burnt),
        outgoing_receipts_root=crypto.hash_of("receipts", shard_id, receipt_ids),
        tx_root=merkle.merklize(signed)[0],
        validator_proposals=[],
        signature="",
    )
    if "congestion_info" in chunk:  # one producer keeps up: nothing delayed or buffered
        allowed = parent_chunk["congestion_info"].get("allowed_shard", 0)
        chunk["congestion_info"] = {
            "delayed_receipts_gas": "0", "buffered_receipts_gas": "0", "receipt_bytes": 0, "allowed_shard": allowed,
        }  # fmt: skip
    if "bandwidth_requests" in chunk:
        chunk["bandwidth_requests"] = {"V1": {"requests": []}}
    chunk["chunk_hash"] = crypto.chunk_hash(chunk)
    chunk["signature"] = crypto.signature(SIGNER_LABEL, chunk["chunk_hash"])
    return chunk


def next_block(parent: Mapping[str, Any], plan: BlockPlan, prices: GasPriceRule) -> NewBlock:
    """The block at `plan.height` on `parent` (its `block` result)."""
    before: Mapping[str, Any] = parent["header"]
    parent_hash = before["hash"]
    chunks = [_chunk(chunk, parent_hash, plan, index) for index, chunk in enumerate(parent["chunks"])]

    def root(label: str, key: str) -> str:
        return crypto.hash_of(label, crypto.canonical_bytes([c[key] for c in chunks]))

    used = sum(int(c["gas_used"]) for c in chunks)
    limit = sum(int(c["gas_limit"]) for c in chunks)
    burnt = sum(int(c["balance_burnt"]) for c in chunks)
    approval = crypto.sign(SIGNER_LABEL, crypto.approval_data(parent_hash, before["height"], plan.height))
    header = dict(before)
    header.update(
        height=plan.height,
        prev_height=before["height"],
        epoch_id=plan.epoch_id,
        next_epoch_id=plan.next_epoch_id,
        hash="",
        prev_hash=parent_hash,
        prev_state_root=root("state-roots", "prev_state_root"),
        block_body_hash=crypto.hash_of("body", crypto.canonical_bytes([c["chunk_hash"] for c in chunks]), plan.height),
        chunk_receipts_root=root("receipt-roots", "outgoing_receipts_root"),
        chunk_headers_root=root("chunk-headers", "chunk_hash"),
        chunk_tx_root=root("tx-roots", "tx_root"),
        outcome_root=root("outcome-roots", "outcome_root"),
        chunks_included=len(chunks),
        timestamp=plan.timestamp_ns,
        timestamp_nanosec=str(plan.timestamp_ns),
        random_value=crypto.hash_of("vrf", before["random_value"], plan.author, plan.height),
        validator_proposals=[],
        chunk_mask=[True] * len(chunks),
        gas_price=str(prices.next_price(int(before["gas_price"]), used, limit)),
        block_ordinal=int(before["block_ordinal"]) + 1,
        total_supply=str(int(before["total_supply"]) - burnt),
        last_final_block=before["last_ds_final_block"],
        last_ds_final_block=parent_hash,
        block_merkle_root=crypto.hash_of("block-merkle", before["block_merkle_root"], parent_hash),
        epoch_sync_data_hash=crypto.hash_of("epoch-sync", plan.epoch_id, plan.height) if plan.new_epoch else None,
        approvals=[approval] * max(len(before.get("approvals") or ()), 1),
        signature="",
    )
    if "chunk_endorsements" in header:
        header["chunk_endorsements"] = [[1] for _ in chunks]
    header["hash"] = crypto.block_hash(header)
    header["signature"] = crypto.signature(SIGNER_LABEL, header["hash"])
    view = {"author": plan.author, "header": header, "chunks": chunks}
    chunk_views = [
        {
            "author": plan.author,
            "header": chunk,
            "transactions": [dict(view) for _, view in plan.contents[index].transactions],
            "receipts": [dict(receipt) for receipt in plan.contents[index].receipts],
        }
        for index, chunk in enumerate(chunks)
    ]
    return NewBlock(view, chunk_views)
