"""`ForkRecords`: chunks, transactions, receipts and validators through a fork.

- Chunks, transactions and receipts are immutable by hash: kept for good once checked
  (`ingest.chain_records`: the spec component, the hash asked for, the block that includes it),
  a transaction once its status is FINAL; an "unknown" answer for one is never kept (it may yet
  appear).
- An ended epoch's validators are kept for good; the head's epoch's hold while the head has not
  moved past the block they count.
"""

from __future__ import annotations

import time
from typing import Final

import orjson

from nearrpc.fork import marks
from nearrpc.fork.blocks import ForkBlocks
from nearrpc.fork.misses import says
from nearrpc.fork.upstream import UpstreamError, UpstreamUnreachable
from nearrpc.fork.writer import Writes
from nearrpc.ingest import chain_records
from nearrpc.store import StoredBlock, StoredChunk, StoredReceipt, StoredTransaction, StoredValidators, WriteBatch

# Blocks above an epoch's first read for the next epoch's id where the first names its own (genesis).
_GENESIS_LOOKAHEAD: Final = 8


def _unplaced(receipt_id: str, view: bytes) -> StoredReceipt:
    """A receipt known from its EXPERIMENTAL_receipt answer alone: where it was executed is not
    known (no block, height -1, shard -1, no outcome); it answers that method and nothing else."""
    return StoredReceipt(receipt_id, "", -1, -1, view, None)


class ForkRecords(ForkBlocks):
    """The chain record lookups of `ForkReader`."""

    # -- chunks, transactions, receipts: immutable by hash, kept for good once checked. An
    # "unknown" answer is never kept: a chunk, a transaction or a receipt a node does not know
    # yet may appear on it (a client polls a transaction's status before it lands).

    async def _fetch_chunk(self, chunk_hash: str) -> tuple[StoredChunk | None, Writes | None]:
        what = f"chunk {chunk_hash}"
        reply = await self._call("chunk", {"chunk_id": chunk_hash})
        if says(reply, "UNKNOWN_CHUNK"):
            return None, None
        answer = self._answer(reply, what)
        included = self._parsed(lambda: int(answer["header"]["height_included"]), what)
        if self._above_the_pin(included):
            return None, None  # included above the pinned head: not in this fork
        block = await self.block_by_height(included)
        if block is None:
            raise UpstreamError(f"{self.upstream.address}: {what}: no block at its height_included {included}")
        chunk = self._parsed(lambda: chain_records.chunk_record(answer, chunk_hash, block), what)
        return chunk, lambda batch: batch.put_chunk(chunk)

    async def chunk(self, chunk_hash: str) -> StoredChunk | None:
        chunk = await self.local.chunk(chunk_hash)
        if chunk is not None:
            if self._stored_elsewhere(chunk.height):
                return None
            self._count("hit")
            return chunk
        chunk = await self._miss(f"chunk/{chunk_hash}", lambda: self._fetch_chunk(chunk_hash))
        return None if chunk is None or self._above_the_pin(chunk.height) else chunk

    async def _chunk_with(self, tx_hash: str, signer_id: str, block: StoredBlock) -> StoredChunk:
        """The new chunk of `block` that includes the transaction (each fetched through the fork)."""
        for chunk_hash, _ in self._parsed(lambda: chain_records.new_chunks(block), f"block {block.hash}"):
            chunk = await self.chunk(chunk_hash)
            if chunk is not None and (tx_hash, signer_id) in chain_records.transaction_hashes(chunk):
                return chunk
        raise UpstreamError(f"{self.upstream.address}: transaction {tx_hash}: no chunk of its block "
                            f"{block.hash} includes it: nothing is kept")  # fmt: skip

    async def _fetch_transaction(self, tx_hash: str, signer_id: str) -> tuple[StoredTransaction | None, Writes | None]:
        what = f"EXPERIMENTAL_tx_status {tx_hash} {signer_id}"
        params = {"tx_hash": tx_hash, "sender_account_id": signer_id, "wait_until": chain_records.NO_WAIT}
        reply = await self._call("EXPERIMENTAL_tx_status", params)
        if says(reply, "UNKNOWN_TRANSACTION", "TIMEOUT_ERROR") or (
            reply.error is None and isinstance(reply.result, dict) and "transaction_outcome" not in reply.result
        ):
            return None, None  # not known, or not executed yet, there: asked again next time
        status = self._parsed(lambda: chain_records.checked_status(self._answer(reply, what), tx_hash, signer_id), what)
        block = await self.block_by_hash(status["transaction_outcome"]["block_hash"])
        if block is None:
            raise UpstreamError(f"{self.upstream.address}: {what}: its outcome's block is unknown: nothing is kept")
        chunk = await self._chunk_with(tx_hash, signer_id, block)
        record = self._parsed(lambda: chain_records.transaction_record(status, chunk), what)
        if status.get("final_execution_status") != chain_records.FINAL_STATUS:
            return record, None  # its status moves on until final: answered, not kept
        return record, lambda batch: batch.put_transaction(record)

    async def transaction(self, tx_hash: str, signer_id: str) -> StoredTransaction | None:
        found = await self.local.transaction(tx_hash, signer_id)
        if found is not None:
            self._count("hit")
            return None if self._stored_elsewhere(found.height) else found
        key = f"tx/{tx_hash}/{signer_id}"
        try:
            found = await self._miss(key, lambda: self._fetch_transaction(tx_hash, signer_id))
        except UpstreamUnreachable:
            # replayed offline: not held, answered as nearcore answers a transaction it does not
            # hold (TIMEOUT_ERROR, UNKNOWN_TRANSACTION for wait_until NONE), as online
            return None
        return None if found is None or self._above_the_pin(found.height) else found

    async def _fetch_receipt(self, receipt_id: str) -> tuple[StoredReceipt | None, Writes | None]:
        what = f"EXPERIMENTAL_receipt {receipt_id}"
        reply = await self._call("EXPERIMENTAL_receipt", {"receipt_id": receipt_id})
        if says(reply, "UNKNOWN_RECEIPT"):
            return None, None
        view = self._parsed(lambda: chain_records.checked_receipt(self._answer(reply, what), receipt_id), what)
        return _unplaced(receipt_id, view), lambda batch: batch.put_kept_answer(marks.receipt(receipt_id), view)

    async def receipt(self, receipt_id: str) -> StoredReceipt | None:
        """A receipt row where the store holds one; else the upstream's EXPERIMENTAL_receipt
        answer, kept verbatim (it does not say in which block the receipt was executed)."""
        found = await self.local.receipt(receipt_id)
        if found is None:
            kept = await self.local.kept_answer(marks.receipt(receipt_id))
            if kept is None:
                return await self._miss(f"receipt/{receipt_id}", lambda: self._fetch_receipt(receipt_id))
            found = _unplaced(receipt_id, kept)
        self._count("hit")
        return found

    # -- validators: an ended epoch's are kept for good; the head's epoch's record holds while
    # the fork's head has not moved past the block it counts, and stands in while the upstream
    # does not answer (as the store's head does)

    async def _next_epoch_id(self, epoch_id: str, first: StoredBlock) -> str:
        """The id of the epoch after `epoch_id`, as its blocks' headers name it (the genesis block
        names its own epoch: the next blocks say)."""
        block: StoredBlock | None = first
        for height in range(first.height + 1, first.height + _GENESIS_LOOKAHEAD + 1):
            named = orjson.loads(block.view_json)["header"].get("next_epoch_id") if block is not None else None
            if isinstance(named, str) and named != epoch_id:
                return named
            block = await self.block_by_height(height)
        raise UpstreamError(f"{self.upstream.address}: epoch {epoch_id}: its blocks name no next epoch")

    async def _last_counted(self, epoch_id: str, first: StoredBlock) -> tuple[StoredBlock, bool] | None:
        """The last block an epoch's validators count, and whether the epoch has ended: the
        fork's head while it is in the epoch, else the epoch's last block (the parent of the next
        epoch's first). None when the epoch begins after the head."""
        head = await self.head()
        if head is None or head.height < first.height:
            return None
        if head.epoch_id == epoch_id:
            return head, False
        next_epoch = await self._next_epoch_id(epoch_id, first)
        what = f"validators of epoch {next_epoch}"
        reply = await self._call("validators", {"epoch_id": next_epoch})
        next_start, _ = self._parsed(lambda: chain_records.checked_validators(self._answer(reply, what)), what)
        following = await self.block_by_height(next_start)
        if following is None or following.epoch_id != next_epoch:
            raise UpstreamError(f"{self.upstream.address}: {what}: no block of it at its start height {next_start}")
        last = await self.block_by_hash(following.prev_hash)
        if last is None:
            raise UpstreamError(f"{self.upstream.address}: {what}: the parent of its first block is unknown")
        return last, True

    async def _fetch_validators(self, epoch_id: str) -> tuple[StoredValidators | None, Writes | None]:
        what = f"validators of epoch {epoch_id}"
        reply = await self._call("validators", {"epoch_id": epoch_id})
        if says(reply, "UNKNOWN_EPOCH"):
            return None, None
        start, view = self._parsed(lambda: chain_records.checked_validators(self._answer(reply, what)), what)
        if self._above_the_pin(start):
            return None, None  # it begins above the pinned head: not in this fork
        found = await self.block_by_height(start)
        first = self._parsed(lambda: chain_records.check_epoch_start(epoch_id, found), what)
        counted = await self._last_counted(epoch_id, first)
        if counted is None:
            return None, None  # it begins above the fork's head
        last, ended = counted
        record = self._parsed(lambda: chain_records.validators_record(epoch_id, first, last, view), what)

        def writes(batch: WriteBatch) -> None:
            batch.put_validators(record)
            if not ended:
                batch.put_fetched(marks.validators_current(epoch_id, record.height))

        return record, writes

    async def _validators_hold(self, kept: StoredValidators) -> bool:
        """Whether a kept record still answers: one kept as of the head (marked) until the head
        moves past it; any other (an ended epoch's, a recording's) for good."""
        if not await self.local.fetched(marks.validators_current(kept.epoch_id, kept.height)):
            return True
        head = await self.head()
        return head is None or (head.epoch_id == kept.epoch_id and head.height <= kept.height)

    async def validators(self, epoch_id: str) -> StoredValidators | None:
        kept = await self.local.validators(epoch_id)
        if kept is not None and (time.monotonic() < self._heads_down_until or await self._validators_hold(kept)):
            self._count("hit")
            return kept
        try:
            return await self._miss(f"validators/{epoch_id}", lambda: self._fetch_validators(epoch_id))
        except UpstreamError:
            if kept is None:
                raise
            return kept  # the upstream does not answer: the kept record stands in, as the store's head does
