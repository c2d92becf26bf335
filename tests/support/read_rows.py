"""Hand-built, spec-valid chunks, transactions, receipts and validators over the sample chain's
blocks, written with the store's batch methods: what the tests of issue 30's reads serve until
the sample chain carries its own (branch txgen; then the tests move to those).

Three transfers from alice.localnet to bob.localnet, each with its receipt and refund, placed
so that each reaches another status under the sample chain's final block (108; head 110):
FINAL (included at 11, receipts at the next two heights), EXECUTED (included at 107, receipt
at 108, refund at the head) and EXECUTED_OPTIMISTIC (included at 109, both at the head). The
first sits in shard 2's chunk at 11, which block 12 carries again (shard 2 had no new chunk
there). Every epoch gets a validators record, as of its last block (the head's for the last).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import based58
import httpx
import orjson

from nearrpc.sample import build_sample_store, sample_chain
from nearrpc.store import StoredBlock, StoredChunk, StoredReceipt, StoredTransaction, StoredValidators, open_store
from tests.support.live_server import running_server

SIGNER = "alice.localnet"
RECEIVER = "bob.localnet"
SYSTEM = "system"
PUBLIC_KEY = "ed25519:" + based58.b58encode(hashlib.sha256(b"alice key").digest()).decode()
SIGNATURE = "ed25519:" + based58.b58encode(hashlib.sha256(b"sig").digest() * 2).decode()


def fake_hash(label: str) -> str:
    return based58.b58encode(hashlib.sha256(label.encode()).digest()).decode()


@dataclass(frozen=True)
class Transfer:
    """One transaction's rows and what the tests know of them."""

    tx_hash: str
    receipt_id: str
    refund_id: str
    tx_block: StoredBlock
    shard_id: int
    chunk_hash: str
    status: str  # the final_execution_status it has under the sample chain's final block


@dataclass(frozen=True)
class ReadRows:
    transfers: tuple[Transfer, ...]
    validators: tuple[StoredValidators, ...]
    blocks: tuple[StoredBlock, ...]

    def block_at(self, height: int) -> StoredBlock:
        return next(b for b in self.blocks if b.height == height)


def _outcome(block_hash: str, outcome_id: str, executor: str, receipt_ids: list[str], status: Any) -> dict[str, Any]:
    return {
        "block_hash": block_hash,
        "id": outcome_id,
        "outcome": {
            "executor_id": executor,
            "gas_burnt": 223182562500,
            "logs": [],
            "metadata": {"gas_profile": [], "version": 3},
            "receipt_ids": receipt_ids,
            "status": status,
            "tokens_burnt": "22318256250000000000",
        },
        "proof": [],
    }


def _receipt(receipt_id: str, predecessor: str, receiver: str, deposit: str) -> dict[str, Any]:
    return {
        "predecessor_id": predecessor,
        "priority": 0,
        "receipt": {
            "Action": {
                "actions": [{"Transfer": {"deposit": deposit}}],
                "gas_price": "103000000",
                "input_data_ids": [],
                "is_promise_yield": False,
                "output_data_receivers": [],
                "signer_id": SIGNER,
                "signer_public_key": PUBLIC_KEY,
            }
        },
        "receipt_id": receipt_id,
        "receiver_id": receiver,
    }


def _transaction(tx_hash: str, nonce: int) -> dict[str, Any]:
    return {
        "actions": [{"Transfer": {"deposit": "1000000000000000000000000"}}],
        "hash": tx_hash,
        "nonce": nonce,
        "priority_fee": 0,
        "public_key": PUBLIC_KEY,
        "receiver_id": RECEIVER,
        "signature": SIGNATURE,
        "signer_id": SIGNER,
    }


def _header(block: StoredBlock, shard_id: int) -> dict[str, Any]:
    header: dict[str, Any] = next(h for h in orjson.loads(block.view_json)["chunks"] if h["shard_id"] == shard_id)
    return header


def _transfer_rows(
    label: str, tx_block: StoredBlock, receipt_block: StoredBlock, refund_block: StoredBlock, shard_id: int
) -> tuple[dict[str, Any], StoredTransaction, list[StoredReceipt]]:
    tx_hash, receipt_id = fake_hash(f"{label} tx"), fake_hash(f"{label} receipt")
    refund_id = fake_hash(f"{label} refund")
    transaction = _transaction(tx_hash, int.from_bytes(hashlib.sha256(label.encode()).digest()[:4], "big"))
    receipt = _receipt(receipt_id, SIGNER, RECEIVER, "1000000000000000000000000")
    refund = _receipt(refund_id, SYSTEM, SIGNER, "12524843750000000000")
    receipt_outcome = _outcome(receipt_block.hash, receipt_id, RECEIVER, [refund_id], {"SuccessValue": ""})
    refund_outcome = _outcome(refund_block.hash, refund_id, SIGNER, [], {"SuccessValue": ""})
    view = {
        "final_execution_status": "FINAL",
        "receipts": [receipt, refund],
        "receipts_outcome": [receipt_outcome, refund_outcome],
        "status": {"SuccessValue": ""},
        "transaction": transaction,
        "transaction_outcome": _outcome(tx_block.hash, tx_hash, SIGNER, [receipt_id], {"SuccessReceiptId": receipt_id}),
    }
    stored = StoredTransaction(tx_hash, SIGNER, tx_block.hash, tx_block.height, shard_id, orjson.dumps(view))
    receipts = [
        StoredReceipt(receipt_id, receipt_block.hash, receipt_block.height, 0, orjson.dumps(receipt),
                      orjson.dumps(receipt_outcome)),
        StoredReceipt(refund_id, refund_block.hash, refund_block.height, 0, orjson.dumps(refund),
                      orjson.dumps(refund_outcome)),
    ]  # fmt: skip
    return transaction, stored, receipts


def _validators_view(genesis: dict[str, Any], epoch_height: int, start: int, produced: int) -> dict[str, Any]:
    # stakes as in genesis but node2's equal to node3's, so the order's tie-break shows
    stakes = {v["account_id"]: v["amount"] for v in genesis["validators"]}
    stakes["node2"] = stakes["node3"]
    current = [
        {
            "account_id": v["account_id"],
            "is_slashed": False,
            "num_expected_blocks": produced,
            "num_expected_chunks": produced,
            "num_produced_blocks": produced,
            "num_produced_chunks": produced,
            "public_key": v["public_key"],
            "shards": [index],
            "stake": stakes[v["account_id"]],
        }
        for index, v in enumerate(genesis["validators"])
    ]
    return {
        "current_fishermen": [],
        "current_proposals": [],
        "current_validators": current,
        "epoch_height": epoch_height,
        "epoch_start_height": start,
        "next_fishermen": [],
        "next_validators": [
            {"account_id": c["account_id"], "public_key": c["public_key"], "shards": c["shards"], "stake": c["stake"]}
            for c in current
        ],
        "prev_epoch_kickout": [],
        "validator_reward_paid_prev_epoch": {},
    }


def write_read_rows(store: Path | str) -> ReadRows:
    """Write the rows into a store that holds the sample chain; what was written."""
    chain = sample_chain()
    blocks = tuple(chain.blocks)
    by_height = {b.height: b for b in blocks}
    heights = sorted(by_height)
    after = {h: heights[i + 1] for i, h in enumerate(heights[:-1])}
    head = blocks[-1]
    plans = [  # label, tx height, receipt height, refund height, shard, status
        ("final", 11, after[11], after[after[11]], 2, "FINAL"),
        ("executed", 107, 108, head.height, 0, "EXECUTED"),
        ("optimistic", 109, head.height, head.height, 1, "EXECUTED_OPTIMISTIC"),
    ]
    transfers = []
    with open_store(store, "write") as writer, writer.batch() as batch:
        for label, tx_height, receipt_height, refund_height, shard_id, status in plans:
            tx_block = by_height[tx_height]
            transaction, stored, receipts = _transfer_rows(
                label, tx_block, by_height[receipt_height], by_height[refund_height], shard_id
            )
            header = _header(tx_block, shard_id)
            chunk = {"author": "node0", "header": header, "receipts": [], "transactions": [transaction]}
            batch.put_chunk(StoredChunk(header["chunk_hash"], tx_block.hash, tx_height, shard_id, orjson.dumps(chunk)))
            batch.put_transaction(stored)
            for receipt in receipts:
                batch.put_receipt(receipt)
            transfers.append(Transfer(stored.tx_hash, receipts[0].receipt_id, receipts[1].receipt_id, tx_block,
                                      shard_id, header["chunk_hash"], status))  # fmt: skip
        genesis = orjson.loads(chain.genesis_config_json)
        epochs: dict[str, list[StoredBlock]] = {}
        for block in blocks:
            epochs.setdefault(block.epoch_id, []).append(block)
        records = []
        for number, (epoch_id, members) in enumerate(epochs.items()):
            view = _validators_view(genesis, number, members[0].height, len(members))
            records.append(StoredValidators(epoch_id, members[-1].height, orjson.dumps(view)))
            batch.put_validators(records[-1])
    return ReadRows(tuple(transfers), tuple(records), blocks)


@contextmanager
def serving_read_rows(folder: Path) -> Iterator[tuple[httpx.Client, ReadRows]]:
    """A real server over a store in `folder` holding the sample chain plus these rows, and a
    client of it; what was written."""
    build_sample_store(folder / "store.sqlite")
    rows = write_read_rows(folder / "store.sqlite")
    with (
        running_server(folder / "store.sqlite", folder / "server.log") as live,
        httpx.Client(base_url=live.url) as http,
    ):
        yield http, rows
