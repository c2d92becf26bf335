"""Chunks, transactions, receipts and validators records for store tests, tied to the sample
chain's blocks: each chunk is the one a block's header lists (its real header), each
transaction and receipt names a stored block by hash and height. Their JSON has the shape of
nearcore's answers (valid against upstream 1.2.13's components); its hashes are made up (the
store checks what its index fields repeat, not how a hash was computed)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import based58
import orjson

from nearrpc.sample import SampleChain
from nearrpc.store import StoredBlock, StoredChunk, StoredReceipt, StoredTransaction, StoredValidators, WriteBatch

_KEY = "ed25519:Ak813qv31tuU52MLmPVE6vaFTG33sU6kNb28XzPiKSar"


def made_up_hash(seed: str) -> str:
    return based58.b58encode(hashlib.sha256(seed.encode()).digest()).decode()


@dataclass(frozen=True, slots=True)
class Records:
    chunks: tuple[StoredChunk, ...]
    transactions: tuple[StoredTransaction, ...]
    receipts: tuple[StoredReceipt, ...]
    validators: tuple[StoredValidators, ...]

    def put(self, batch: WriteBatch) -> None:
        for chunk in self.chunks:
            batch.put_chunk(chunk)
        for transaction in self.transactions:
            batch.put_transaction(transaction)
        for receipt in self.receipts:
            batch.put_receipt(receipt)
        for validators in self.validators:
            batch.put_validators(validators)


def outcome(block_hash: str, outcome_id: str) -> dict[str, object]:
    return {
        "proof": [], "block_hash": block_hash, "id": outcome_id,
        "outcome": {"logs": [], "receipt_ids": [], "gas_burnt": 2428000000000, "tokens_burnt": "242800000000000000000",
                    "executor_id": "alice.localnet", "status": {"SuccessValue": ""}, "metadata": {"version": 1}},
    }  # fmt: skip


def chunk_of(block: StoredBlock, shard: int) -> StoredChunk:
    header = orjson.loads(block.view_json)["chunks"][shard]
    view = {"author": "node0", "header": header, "transactions": [], "receipts": []}
    return StoredChunk(header["chunk_hash"], block.hash, header["height_included"], header["shard_id"],
                       orjson.dumps(view))  # fmt: skip


def transaction_at(block: StoredBlock, shard: int, signer: str, seed: str) -> StoredTransaction:
    tx_hash = made_up_hash(seed)
    transaction = {
        "signer_id": signer, "public_key": _KEY, "nonce": 1,
        "receiver_id": "bob.localnet", "actions": [{"Transfer": {"deposit": "1"}}],
        "signature": "ed25519:cMXqhRts4VfjCybTprTcgJFxk2fpU2LZnR9yUcKChbKFjVbmm9PwEuTDDhxnt8J9B1xz2k4kqzZRUkscoWDigZo",
        "hash": tx_hash, "priority_fee": 0,
    }  # fmt: skip
    view = {"final_execution_status": "FINAL", "status": {"SuccessValue": ""}, "transaction": transaction,
            "transaction_outcome": outcome(block.hash, tx_hash), "receipts_outcome": [], "receipts": []}  # fmt: skip
    return StoredTransaction(tx_hash, signer, block.hash, block.height, shard, orjson.dumps(view))


def receipt_at(block: StoredBlock, shard: int, seed: str, *, with_outcome: bool = True) -> StoredReceipt:
    receipt_id = made_up_hash(seed)
    view = {"predecessor_id": "alice.localnet", "receiver_id": "bob.localnet", "receipt_id": receipt_id,
            "receipt": {"Action": {"signer_id": "alice.localnet", "signer_public_key": _KEY, "gas_price": "100000000",
                                   "output_data_receivers": [], "input_data_ids": [],
                                   "actions": [{"Transfer": {"deposit": "1"}}]}},
            "priority": 0}  # fmt: skip
    found = orjson.dumps(outcome(block.hash, receipt_id)) if with_outcome else None
    return StoredReceipt(receipt_id, block.hash, block.height, shard, orjson.dumps(view), found)


def validators_of(epoch_id: str, start: int, height: int, stake: str = "1000") -> StoredValidators:
    validator = {"account_id": "node0", "public_key": _KEY, "is_slashed": False, "stake": stake, "shards": [0],
                 "num_produced_blocks": 3, "num_expected_blocks": 3}  # fmt: skip
    view = {"current_validators": [validator], "next_validators": [], "current_fishermen": [], "next_fishermen": [],
            "current_proposals": [], "prev_epoch_kickout": [], "epoch_start_height": start,
            "epoch_height": 1}  # fmt: skip
    return StoredValidators(epoch_id, height, orjson.dumps(view))


def sample_records(chain: SampleChain) -> Records:
    """Two blocks' chunks (every shard), three transactions and three receipts over two
    heights (one receipt without an outcome), and the validators of the first two epochs."""
    first, second = chain.blocks[5], chain.blocks[6]
    shards = len(orjson.loads(first.view_json)["chunks"])
    chunks = tuple(chunk_of(block, shard) for block in (first, second) for shard in range(shards))
    transactions = (
        transaction_at(first, 1, "alice.localnet", "tx-a"),
        transaction_at(first, 0, "bob.localnet", "tx-b"),
        transaction_at(second, 0, "alice.localnet", "tx-c"),
    )
    receipts = (
        receipt_at(second, 1, "receipt-a"),
        receipt_at(second, 0, "receipt-b", with_outcome=False),
        receipt_at(first, 0, "receipt-c"),
    )
    epochs = list(dict.fromkeys(block.epoch_id for block in chain.blocks))[:2]
    starts = [next(b.height for b in chain.blocks if b.epoch_id == epoch) for epoch in epochs]
    validators = tuple(validators_of(epoch, start, start + 3) for epoch, start in zip(epochs, starts, strict=True))
    return Records(chunks, transactions, receipts, validators)
