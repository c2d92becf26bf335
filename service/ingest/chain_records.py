"""What a node answers for chunks, transactions, receipts and validators, checked before it is
kept: each answer validates against its spec component and names what was asked for, and its
place in the chain agrees with the blocks it names. The recorder (`import rpc`) and a fork
(`serve --upstream`) keep the same records from the same answers.

A check that fails raises ValueError (SchemaViolation is one): nothing of that answer is kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import orjson

from nearrpc.ingest import jsonio
from nearrpc.nearcore.shard_layout import account_shard_id
from nearrpc.spec import validate_component
from nearrpc.store import StoredBlock, StoredChunk, StoredReceipt, StoredTransaction, StoredValidators

# the upstream 1.2.13 document's result components of each method
CHUNK: Final = "RpcChunkResponse"
TRANSACTION: Final = "RpcTransactionResponse"
RECEIPT: Final = "RpcReceiptResponse"
VALIDATORS: Final = "RpcValidatorResponse"
OUTCOME: Final = "ExecutionOutcomeWithIdView"
# A transaction's outcome is kept for good once final: before, the status a node answers moves.
FINAL_STATUS: Final = "FINAL"
# Asked with this `wait_until`, a node answers a transaction's status at once, whatever it is
# (the default waits until it is executed, and a node that does not know it times out).
NO_WAIT: Final = "NONE"


def _same(what: str, got: object, wanted: object) -> None:
    if got != wanted:
        raise ValueError(f"{what} is {got!r}, not {wanted!r}")


def new_chunks(block: StoredBlock) -> list[tuple[str, int]]:
    """(chunk hash, shard id) of the chunks new in `block` (included at its height; a shard
    that missed its chunk lists its last one again, included lower)."""
    chunks = orjson.loads(block.view_json).get("chunks") or []
    return [(c["chunk_hash"], int(c["shard_id"])) for c in chunks if c.get("height_included") == block.height]


def chunk_record(answer: Any, chunk_hash: str, block: StoredBlock) -> StoredChunk:
    """The `chunk` result for `chunk_hash`, included by `block` (the block at its header's
    height_included, which must list it as new there)."""
    validate_component(CHUNK, answer)
    header = answer["header"]
    _same("the chunk's hash", header["chunk_hash"], chunk_hash)
    _same("the chunk's height_included", header["height_included"], block.height)
    listed = dict(new_chunks(block))
    if chunk_hash not in listed:
        raise ValueError(f"block {block.hash} at {block.height} does not include chunk {chunk_hash}")
    _same("the chunk's shard", int(header["shard_id"]), listed[chunk_hash])
    return StoredChunk(chunk_hash, block.hash, block.height, listed[chunk_hash], jsonio.compact(answer))


def transaction_hashes(chunk: StoredChunk) -> list[tuple[str, str]]:
    """(hash, signer) of the transactions a chunk includes."""
    return [(tx["hash"], tx["signer_id"]) for tx in orjson.loads(chunk.view_json)["transactions"]]


def checked_status(answer: Any, tx_hash: str, signer_id: str) -> dict[str, Any]:
    """An EXPERIMENTAL_tx_status result for exactly this transaction, with its outcome."""
    validate_component(TRANSACTION, answer)
    transaction = answer.get("transaction")
    outcome = answer.get("transaction_outcome")
    if not isinstance(transaction, dict) or not isinstance(outcome, dict):
        raise ValueError("the status holds no transaction and outcome (not executed yet)")
    _same("the transaction's hash", transaction.get("hash"), tx_hash)
    _same("the transaction's signer", transaction.get("signer_id"), signer_id)
    _same("the transaction outcome's id", outcome.get("id"), tx_hash)
    if not isinstance(outcome.get("block_hash"), str):
        raise ValueError("the transaction outcome names no block")
    return answer  # type: ignore[no-any-return]  # validated above


def transaction_record(status: dict[str, Any], chunk: StoredChunk) -> StoredTransaction:
    """A checked status (`checked_status`) of a transaction `chunk` includes, executed in the
    chunk's block."""
    tx_hash = status["transaction"]["hash"]
    if (tx_hash, status["transaction"]["signer_id"]) not in transaction_hashes(chunk):
        raise ValueError(f"chunk {chunk.chunk_hash} does not include transaction {tx_hash}")
    _same("the transaction outcome's block", status["transaction_outcome"]["block_hash"], chunk.block_hash)
    return StoredTransaction(tx_hash, status["transaction"]["signer_id"], chunk.block_hash, chunk.height,
                             chunk.shard_id, jsonio.compact(status))  # fmt: skip


def checked_receipt(answer: Any, receipt_id: str) -> bytes:
    """An EXPERIMENTAL_receipt result for exactly `receipt_id`, as compact JSON."""
    validate_component(RECEIPT, answer)
    _same("the receipt's id", answer["receipt_id"], receipt_id)
    return jsonio.compact(answer)


def status_receipts(
    status: dict[str, Any], blocks: Mapping[str, StoredBlock], layouts: Mapping[str, Mapping[str, Any]]
) -> list[StoredReceipt]:
    """The receipts a transaction's status lists (EXPERIMENTAL_tx_status's `receipts`), each with
    its outcome and the block it was executed in. `blocks`: by hash, the blocks the outcomes name
    (a receipt whose block is missing there is left out); `layouts`: by epoch id, the shard layout."""
    outcomes = {item["id"]: item for item in status.get("receipts_outcome") or []}
    records = []
    for view in status.get("receipts") or []:
        receipt_id = view["receipt_id"]
        outcome = outcomes.get(receipt_id)
        block = blocks.get(outcome["block_hash"]) if outcome is not None else None
        if outcome is None or block is None or block.epoch_id not in layouts:
            continue
        validate_component(RECEIPT, view)
        validate_component(OUTCOME, outcome)
        shard_id = account_shard_id(layouts[block.epoch_id], view["receiver_id"])
        records.append(StoredReceipt(receipt_id, block.hash, block.height, shard_id, jsonio.compact(view),
                                     jsonio.compact(outcome)))  # fmt: skip
    return records


def checked_validators(answer: Any) -> tuple[int, bytes]:
    """A `validators` result: its epoch's start height and the result as compact JSON (the
    caller checks the block there is of the epoch asked for)."""
    validate_component(VALIDATORS, answer)
    start = answer["epoch_start_height"]
    if isinstance(start, bool) or not isinstance(start, int):
        raise ValueError("the validators answer has no integer epoch_start_height")
    return start, jsonio.compact(answer)


def check_epoch_start(epoch_id: str, first: StoredBlock | None) -> StoredBlock:
    """The block at a validators answer's epoch_start_height, which must be of the epoch asked for."""
    if first is None or first.epoch_id != epoch_id:
        where = "no block" if first is None else f"block {first.hash} of epoch {first.epoch_id}"
        raise ValueError(f"at the answer's epoch_start_height is {where}, not a block of epoch {epoch_id}")
    return first


def validators_record(epoch_id: str, first: StoredBlock | None, last: StoredBlock, view: bytes) -> StoredValidators:
    """An epoch's validators as of `last`, the block at its start height being `first`."""
    check_epoch_start(epoch_id, first)
    _same("the epoch of the last block counted", last.epoch_id, epoch_id)
    return StoredValidators(epoch_id, last.height, view)
