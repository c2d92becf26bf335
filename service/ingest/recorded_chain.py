"""What `import rpc` records of a height's execution: its new chunks (`chunk` by hash), each
transaction they include with its outcome and receipts (`EXPERIMENTAL_tx_status`), and the
validators of each epoch its blocks belong to (`validators` by epoch id), every answer checked
by `chain_records` before it is kept.

Work per height is bounded by what the height holds: one `chunk` per new chunk (at most one per
shard), one `EXPERIMENTAL_tx_status` per transaction in them, and for the receipts of those
transactions at most one `block` per block they were executed in and one
`EXPERIMENTAL_protocol_config` per epoch of those blocks that is not recorded yet; one
`validators` per epoch per batch, and one `block` where its start height is not recorded.

A transaction is kept once final (`final_execution_status` FINAL): before, a node's answer for it
moves on, and a recording is replayed as it was taken; one not final yet is counted and left
out (a later recording of the same height keeps it). An epoch's validators are recorded as of
its last recorded block: an epoch that ended inside the range is kept as of its last block; a
later batch of the same epoch replaces the record, so the epoch still running at the end of the
range is held as of the range's last block; a record as of a later block (an earlier run over
higher heights) is left as it is.

A node that does not serve one of these methods (METHOD_NOT_FOUND: an older node, a server of
the five methods) is not asked it again; what it would have given is not recorded, and the
summary names the method.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import orjson

from nearrpc.ingest import chain_records
from nearrpc.ingest.blocks_import import stored_block
from nearrpc.ingest.errors import IngestError, located
from nearrpc.ingest.rpc_client import RpcClient
from nearrpc.spec import SchemaViolation
from nearrpc.store import (
    ChainReader,
    StoredBlock,
    StoredChunk,
    StoredReceipt,
    StoredTransaction,
    StoredValidators,
    StoreError,
    WriteBatch,
)

_REFUSALS = (SchemaViolation, StoreError, KeyError, TypeError, ValueError)


@dataclass
class Executed:
    """One batch's chunks, transactions, receipts and validators, checked."""

    chunks: list[StoredChunk] = field(default_factory=list)
    transactions: list[StoredTransaction] = field(default_factory=list)
    receipts: list[StoredReceipt] = field(default_factory=list)
    validators: list[StoredValidators] = field(default_factory=list)
    not_final: list[str] = field(default_factory=list)  # transactions left out: not final yet

    def write(self, batch: WriteBatch) -> None:
        for chunk in self.chunks:
            _put(f"height {chunk.height}: chunk {chunk.chunk_hash}", batch.put_chunk, chunk)
        for tx in self.transactions:
            _put(f"height {tx.height}: transaction {tx.tx_hash}", batch.put_transaction, tx)
        for receipt in self.receipts:
            _put(f"height {receipt.height}: receipt {receipt.receipt_id}", batch.put_receipt, receipt)
        for record in self.validators:
            _put(f"height {record.height}: validators of epoch {record.epoch_id}", batch.put_validators, record)


def _put(where: str, put: Any, record: object) -> None:
    try:
        put(record)
    except _REFUSALS as exc:
        raise located(where, exc) from None


class ExecutionRecorder:
    def __init__(self, rpc: RpcClient) -> None:
        self._rpc = rpc
        self._layouts: dict[str, dict[str, Any]] = {}  # epoch id -> shard layout
        self._epoch_starts: set[str] = set()  # epochs whose start block was checked
        self.unserved: set[str] = set()  # methods the node answered METHOD_NOT_FOUND for

    def learn_layout(self, epoch_id: str, protocol_config: dict[str, Any]) -> None:
        """An epoch's shard layout from its protocol config, read by the recorder anyway."""
        layout = protocol_config.get("shard_layout")
        if isinstance(layout, dict):
            self._layouts[epoch_id] = layout

    async def _result(self, where: str, method: str, params: Any) -> Any:
        reply = await self._rpc.call(method, params)
        if reply.error is not None:
            raise IngestError(f"{where}: {method}: the node answered {reply.describe()}")
        return reply.result

    def _checked(self, where: str, check: Any, *args: Any) -> Any:
        try:
            return check(*args)
        except _REFUSALS as exc:
            raise located(where, exc) from None

    async def _served(self, method: str, params: Any, where: str) -> Any:
        """The result; None where the node does not serve `method`."""
        if method in self.unserved:
            return None
        reply = await self._rpc.call(method, params)
        if reply.cause == "METHOD_NOT_FOUND":
            self.unserved.add(method)
            return None
        if reply.error is not None:
            raise IngestError(f"{where}: {method}: the node answered {reply.describe()}")
        return reply.result

    async def _chunk(self, chunk_hash: str, block: StoredBlock) -> StoredChunk | None:
        where = f"height {block.height}: chunk {chunk_hash}"
        answer = await self._served("chunk", {"chunk_id": chunk_hash}, where)
        if answer is None:
            return None
        chunk: StoredChunk = self._checked(where, chain_records.chunk_record, answer, chunk_hash, block)
        return chunk

    async def _status(self, tx_hash: str, signer_id: str, chunk: StoredChunk) -> dict[str, Any] | None:
        where = f"height {chunk.height}: EXPERIMENTAL_tx_status {tx_hash}"
        params = {"tx_hash": tx_hash, "sender_account_id": signer_id, "wait_until": chain_records.NO_WAIT}
        answer = await self._served("EXPERIMENTAL_tx_status", params, where)
        if answer is None:
            return None
        status: dict[str, Any] = self._checked(where, chain_records.checked_status, answer, tx_hash, signer_id)
        return status

    async def _block_by_hash(self, block_hash: str, known: dict[str, StoredBlock], reader: ChainReader) -> StoredBlock:
        block = known.get(block_hash) or reader.block_by_hash(block_hash)
        if block is None:
            view = await self._result(f"block {block_hash}", "block", {"block_id": block_hash})
            block = self._checked(f"block {block_hash}", stored_block, view)
            if block.hash != block_hash:
                raise IngestError(f"block {block_hash}: the node answered block {block.hash}")
        known[block_hash] = block
        return block

    async def _layout(self, block: StoredBlock, reader: ChainReader) -> dict[str, Any]:
        layout = self._layouts.get(block.epoch_id)
        if layout is None:
            epoch = reader.epoch(block.epoch_id)
            config = orjson.loads(epoch.protocol_config_json or epoch.config_json) if epoch is not None else {}
            if "shard_layout" not in config:
                where = f"height {block.height}: EXPERIMENTAL_protocol_config"
                config = await self._result(where, "EXPERIMENTAL_protocol_config", {"block_id": block.hash})
            layout = config.get("shard_layout") if isinstance(config, dict) else None
            if not isinstance(layout, dict):
                raise IngestError(f"height {block.height}: no shard layout for epoch {block.epoch_id}")
            self._layouts[block.epoch_id] = layout
        return layout

    async def _receipts(self, statuses: list[dict[str, Any]], known: dict[str, StoredBlock],
                        reader: ChainReader) -> list[StoredReceipt]:  # fmt: skip
        hashes = {outcome["block_hash"] for status in statuses for outcome in status.get("receipts_outcome") or []}
        for block_hash in sorted(hashes):  # one at a time: each may need its epoch's layout first
            await self._layout(await self._block_by_hash(block_hash, known, reader), reader)
        receipts: list[StoredReceipt] = []
        for status in statuses:
            where = f"transaction {status['transaction']['hash']}: receipts"
            receipts += self._checked(where, chain_records.status_receipts, status, known, self._layouts)
        return receipts

    async def _validators(self, epoch_id: str, last: StoredBlock, known: dict[int, StoredBlock],
                          reader: ChainReader) -> StoredValidators | None:  # fmt: skip
        where = f"height {last.height}: validators of epoch {epoch_id}"
        answer = await self._served("validators", {"epoch_id": epoch_id}, where)
        if answer is None:
            return None
        start, view = self._checked(where, chain_records.checked_validators, answer)
        first = known.get(start) or reader.block_by_height(start)
        if first is None and epoch_id not in self._epoch_starts:
            found = await self._result(where, "block", {"block_id": start})
            first = self._checked(where, stored_block, found)
        elif first is None:
            first = last  # its start block was checked in an earlier batch
        record: StoredValidators = self._checked(where, chain_records.validators_record, epoch_id, first, last, view)
        self._epoch_starts.add(epoch_id)
        return record

    async def fetch(self, views: dict[int, dict[str, Any]], reader: ChainReader) -> Executed:
        """The execution of the blocks of one batch (height -> block view)."""
        executed = Executed()
        by_height = {height: self._checked(f"height {height}: block", stored_block, view)
                     for height, view in views.items()}  # fmt: skip
        wanted = [(block, chunk_hash) for block in by_height.values()
                  for chunk_hash, _ in chain_records.new_chunks(block)]  # fmt: skip
        chunks = await asyncio.gather(*(self._chunk(h, block) for block, h in wanted))
        executed.chunks = [chunk for chunk in chunks if chunk is not None]
        included = [(chunk, tx_hash, signer) for chunk in executed.chunks
                    for tx_hash, signer in chain_records.transaction_hashes(chunk)]  # fmt: skip
        statuses = await asyncio.gather(*(self._status(tx_hash, signer, chunk) for chunk, tx_hash, signer in included))
        final = []
        for (chunk, tx_hash, _), status in zip(included, statuses, strict=True):
            if status is None:
                continue
            if status.get("final_execution_status") != chain_records.FINAL_STATUS:
                executed.not_final.append(f"{tx_hash} at {chunk.height}")
                continue
            where = f"height {chunk.height}: transaction {tx_hash}"
            executed.transactions.append(self._checked(where, chain_records.transaction_record, status, chunk))
            final.append(status)
        known = {block.hash: block for block in by_height.values()}
        executed.receipts = await self._receipts(final, known, reader)
        last_of: dict[str, StoredBlock] = {}
        for height in sorted(by_height):
            last_of[by_height[height].epoch_id] = by_height[height]
        for epoch_id, last in list(last_of.items()):
            held = reader.validators(epoch_id)
            if held is not None and held.height >= last.height:
                del last_of[epoch_id]  # held as of a later block already (an overlapping run)
        records = await asyncio.gather(
            *(self._validators(epoch_id, last, by_height, reader) for epoch_id, last in last_of.items())
        )
        executed.validators = [record for record in records if record is not None]
        return executed
