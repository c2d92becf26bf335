"""The sandbox's block producer: everything it does runs on the chain writer's one thread (the
store writer's connection belongs to it), one call at a time, so no lock is needed.

A block: the queued transactions and the receipts the previous block sent out are applied by the
runtime on the state as of the parent block (`StoreStateView`), then the block, its chunks, the
receipts it executed, the transactions whose last receipt it executed and every state row it
changed are written in one batch, at its height. Applying happens once the block's hash is known
(receipt ids derive from it), as in nearcore, where a chunk's execution results travel in the
next chunk of its shard (`blocks.py`).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import based58
import orjson

from nearrpc.methods.protocol_config import compose_protocol_config
from nearrpc.nearcore.shard_layout import account_shard_id
from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.sample import execution, merkle
from nearrpc.sandbox.chain.blocks import BlockPlan, GasPriceRule, NewBlock, ShardContent, ShardResults, next_block
from nearrpc.sandbox.chain.changes import NO_RECORD, ChangesRecord
from nearrpc.sandbox.chain.patch import InvalidStateRecord, Patch, patched_account
from nearrpc.sandbox.chain.records import InFlight
from nearrpc.sandbox.chain.state import PinnedState, StoreStateView
from nearrpc.sandbox.chain.validity import block_hash_of, validity_refusal
from nearrpc.sandbox.chain.views import access_key_json, account_json
from nearrpc.sandbox.runtime.model import (
    BlockContext,
    BlockResult,
    Receipt,
    Runtime,
    StateChanges,
    TransactionApplied,
    TransactionRefused,
)
from nearrpc.spec import SchemaViolation
from nearrpc.store import (
    ChainWriter,
    StoredBlock,
    StoredChunk,
    StoredEpoch,
    StoredReceipt,
    StoredValidators,
    StoreError,
    StoreIntegrityError,
    WriteBatch,
    block_from_view,
    chosen_epoch_start,
    recorded_changes,
)

log = logging.getLogger("nearrpc.sandbox")

# Transactions one block takes at most; the rest wait for the next (nearcore's chunks are bounded
# by gas and size; a sandbox's batches are small, this only bounds one block's work).
MAX_BLOCK_TRANSACTIONS: Final = 1_000
# Transactions waiting for a block at most: ten blocks' worth (automine empties the queue with each
# block; a long --block-time would let a client fill memory). nearcore bounds its pool too
# (transaction_pool_size_limit) and drops what does not fit without a word.
MAX_QUEUED: Final = 10 * MAX_BLOCK_TRANSACTIONS
# The least a block's timestamp advances on its parent's (blocks come faster than the clock ticks).
_MIN_STEP_NS: Final = 1_000_000
_EMPTY_ROOT: Final = "11111111111111111111111111111111"  # a chunk without transactions: its tx_root
# A finished transaction's index: (height that included it, height that executed its last receipt).
Progress = tuple[int, int | None]


@dataclass(frozen=True, slots=True)
class _Queued:
    signed: bytes
    checked: TransactionApplied  # what check_transaction gave: hash, signer, shard, view


@dataclass(frozen=True, slots=True)
class _Snapshot:
    height: int
    results: tuple[ShardResults, ...]


@dataclass(frozen=True, slots=True)
class _Epoch:
    """What blocks of one epoch need: its protocol, rules and validators."""

    epoch_id: str
    record: StoredEpoch
    protocol_config: Mapping[str, Any]
    layout: Mapping[str, Any]
    length: int
    validators: StoredValidators | None
    authors: tuple[str, ...]
    epoch_height: int


class ChainProducer:
    def __init__(
        self,
        writer: ChainWriter,
        runtime: Runtime,
        runtime_params: RuntimeParamStore,
        *,
        clock: Callable[[], int] = time.time_ns,
        validate: bool = False,
        pinned: PinnedState | None = None,
    ) -> None:
        """`validate`: check every record against the spec as it is written (the tests do; a
        server writes what this module builds, which they check). `pinned`: a sandboxed fork's
        state below the chain (state.py)."""
        self._writer = writer
        self._pinned = pinned
        self._reader = writer.reader()
        self._runtime = runtime
        self._params = runtime_params
        self._clock = clock
        self._validate = validate
        genesis_json = self._reader.genesis_config_json()
        head = self._reader.head()
        if genesis_json is None or head is None:
            raise StoreError("the store holds no chain to build on (no genesis config or no block)")
        self._genesis: dict[str, Any] = orjson.loads(genesis_json)
        self._prices = GasPriceRule.from_genesis(self._genesis)
        self._validity_period = int(self._genesis["transaction_validity_period"])
        self._epochs: dict[str, _Epoch] = {}
        self._queue: list[_Queued] = []
        self._outgoing: list[Receipt] = []
        # receipts waiting for data and data waiting for its receipt (BlockResult.waiting): kept
        # between blocks as nearcore keeps them in the state, in no chunk
        self._waiting: list[Receipt] = []
        # the data receipts the block being made receives, with their receiver's shard: stored
        # (no outcome of their own) so EXPERIMENTAL_receipt answers them as nearcore does
        self._arrived: list[tuple[Mapping[str, Any], int]] = []
        self._in_flight: dict[str, InFlight] = {}
        self._receipt_owner: dict[str, str] = {}  # receipt id → the transaction awaiting it
        self._finished: dict[str, Progress] = {}
        self._dropped: set[str] = set()  # refused when their block was applied
        self._created_codes: dict[str, int] = {}  # code hash → height of the block that added it
        self._created_epochs: dict[str, int] = {}
        self._snapshots: dict[str, _Snapshot] = {}
        self._snapshot_count = 0
        self._head = head
        self._results = tuple(ShardResults() for _ in orjson.loads(head.view_json)["chunks"])
        self._epoch_start = self._epoch_start_of(head)
        self._final_height = self._height_of(head.last_final_block)
        # the last block the sandbox made that did something (automine makes it final). At start,
        # the last block above the final one that changed anything: a sandbox starts by making it
        # final, so the state a client reads at `finality: final` (near-api-js reads a key's nonce
        # there) is the state its transaction is checked against; a store a sandbox left settled
        # (its top blocks the empty ones that made the last busy block final) needs no block, so a
        # restart adds none and the same sends make the same chain
        self._last_active = self._last_changed(head)

    def _epoch_start_of(self, head: StoredBlock) -> int:
        """The height `head`'s epoch started at: the one chosen when the store could not tell
        (kept: `chosen_epoch_start`; a fork's store may learn its blocks later, the choice stays),
        else the store's word, else `head`'s own height, then kept."""
        kept = self._reader.kept_answer(chosen_epoch_start(head.epoch_id))
        if kept is not None:
            return int(kept)
        known = self._reader.epoch_start_height(head)
        if known is not None:
            return known
        with self._writer.batch(validate=self._validate) as batch:
            batch.put_kept_answer(chosen_epoch_start(head.epoch_id), str(head.height).encode())
        return head.height

    def _last_changed(self, head: StoredBlock) -> int:
        """The highest block above the final one that changed the state (its changes record, or
        for a block the sandbox did not make, a chunk with transactions or gas used); the final
        height when none did."""
        for height in range(head.height, self._final_height, -1):
            block = self._reader.block_by_height(height)
            if block is None:
                continue
            record = self._reader.kept_answer(recorded_changes(height))
            if record is not None:
                if record != NO_RECORD:
                    return height
                continue
            chunks = orjson.loads(block.view_json)["chunks"]
            if any(int(c["gas_used"]) > 0 or c["tx_root"] != _EMPTY_ROOT for c in chunks):
                return height
        return self._final_height

    # -- what the async side asks

    @property
    def final_height(self) -> int:
        return self._final_height

    def progress(self, tx_hash: str) -> Progress | None:
        """(included at, executed at or None) of a transaction this chain holds, None when it
        holds none (or dropped it)."""
        found = self._finished.get(tx_hash)
        if found is not None:
            return found
        flying = self._in_flight.get(tx_hash)
        if flying is not None:
            return flying.height, None
        if any(queued.checked.tx_hash == tx_hash for queued in self._queue):
            return None
        stored = self._reader.transaction(tx_hash, "")
        if stored is None:
            return None
        view = orjson.loads(stored.view_json)
        executed = max([stored.height, *(self._height_of(o["block_hash"]) for o in view["receipts_outcome"])])
        self._finished[tx_hash] = (stored.height, executed)
        return self._finished[tx_hash]

    def dropped(self, tx_hash: str) -> bool:
        return tx_hash in self._dropped

    def needs_blocks(self) -> bool:
        """Whether automine still has blocks to make: queued transactions, receipts sent, or a
        block that did something and is not final yet."""
        # a transaction in flight with nothing queued or sent waits on a yield alone (its resume
        # or its timeout): automine makes no blocks for it, as a block time would
        return bool(self._queue or self._outgoing) or self._last_active > self._final_height

    # -- transactions

    def submit(self, signed: bytes) -> str:
        """Check a transaction against the head and queue it; its hash. Raises TransactionRefused."""
        block_hash = block_hash_of(signed)
        if block_hash is not None:
            # chain/client/src/rpc_handler.rs: the validity period is checked before the runtime's checks
            refusal = validity_refusal(self._reader, self._head, block_hash, self._validity_period)
            if refusal is not None:
                raise TransactionRefused({refusal: None})  # a unit variant, as the runtime writes them
        for tx_hash in _hash_candidates(signed):  # sent again: answered with its hash, not a nonce error
            if self._known(tx_hash):
                return tx_hash
        # the hash is not known yet: the next block's (receipt ids are derived in the block, not here)
        timestamp = self._timestamp(self._head)
        context = self._context(self._head.height + 1, self._head.hash, self._head, self._epoch_of_next()[0], timestamp)
        state = StoreStateView(self._reader, self._head.height, self._pinned)
        checked = self._runtime.check_transaction(state, context, signed)
        if self._pinned is not None:  # a sandboxed fork's: a failure refuses the send
            state.prefetch(str(checked.view["receiver_id"]))
        if not self._known(checked.tx_hash):
            if len(self._queue) >= MAX_QUEUED:
                # chain/client rpc_handler.rs `process_tx_internal`: a full pool (InsertTransactionResult::
                # NoSpaceLeft) drops the transaction unreported; its wait ends at once here
                log.warning("the sandbox's queue holds %d transactions: %s is dropped", MAX_QUEUED, checked.tx_hash)
                self._dropped.add(checked.tx_hash)
                return checked.tx_hash
            self._dropped.discard(checked.tx_hash)
            self._queue.append(_Queued(signed, checked))
        return checked.tx_hash

    def _known(self, tx_hash: str) -> bool:
        return self.progress(tx_hash) is not None or any(q.checked.tx_hash == tx_hash for q in self._queue)

    # -- blocks

    def produce(self, patch: Patch | None = None) -> None:
        """One block: the queue's transactions (up to MAX_BLOCK_TRANSACTIONS), the receipts in
        flight, and `patch`'s records."""
        taken = self._queue[:MAX_BLOCK_TRANSACTIONS]
        try:
            new, result = self._apply(taken)
        except Exception as failure:
            # a runtime that fails must not stop the chain: the block is made without what it failed on
            _log_failure(failure, "the runtime failed applying block %d; the transactions it fails on alone are "
                         "dropped", self._head.height + 1)  # fmt: skip
            failing = [queued for queued in taken if self._fails([queued])]
            self._drop(failing)
            taken = [queued for queued in taken if queued not in failing]
            try:
                new, result = self._apply(taken)
            except Exception as failure:
                _log_failure(failure, "the runtime failed on the receipts in flight; they are dropped, and so are "
                             "the transactions awaiting them")  # fmt: skip
                self._drop_receipts()
                self._drop(taken)
                taken = []
                new, result = self._apply(taken)
        applied = {t.tx_hash for t in result.transactions}
        if len(applied) < len(taken):  # a transaction the runtime refused is left out of the chunk
            self._drop([q for q in taken if q.checked.tx_hash not in applied])
            taken = [q for q in taken if q.checked.tx_hash in applied]
            new, result = self._apply(taken)
        try:
            self._write(new, result, patch)
        except (StoreIntegrityError, SchemaViolation) as refused:
            if patch is not None:  # the store refuses a patched record (a key or value too long)
                raise InvalidStateRecord(str(refused)) from None
            # what the runtime gave cannot be stored: the block is made without it
            log.exception("the store refuses what block %d would write; its transactions and the receipts in flight "
                          "are dropped", self._head.height + 1)  # fmt: skip
            self._drop_receipts()
            self._drop(taken)
            taken = []
            new, result = self._apply(taken)
            self._write(new, result, patch)
        self._queue = [q for q in self._queue if q not in taken and q.checked.tx_hash not in self._dropped]

    def _fails(self, queued: Sequence[_Queued]) -> bool:
        try:
            self._apply(queued)
        except Exception:
            return True
        return False

    def _drop(self, queued: Sequence[_Queued]) -> None:
        self._dropped.update(q.checked.tx_hash for q in queued)
        self._queue = [q for q in self._queue if q not in queued]

    def _drop_receipts(self) -> None:
        gone = {receipt.view["receipt_id"] for receipt in [*self._outgoing, *self._waiting]}
        self._outgoing = []
        self._waiting = []
        for tx_hash in [h for h, flying in self._in_flight.items() if flying.awaiting & gone]:
            del self._in_flight[tx_hash]
            self._dropped.add(tx_hash)

    def mine(self) -> bool:
        """Automine's step: one block when one is needed; whether more are."""
        if self.needs_blocks():
            self.produce()
        return self.needs_blocks()

    def settle(self) -> None:
        """Blocks until nothing is queued or in flight and the last active block is final."""
        while self.needs_blocks():
            self.produce()

    def _height_of(self, block_hash: str) -> int:
        block = self._reader.block_by_hash(block_hash)
        return -1 if block is None else block.height

    def _epoch(self, epoch_id: str, fallback: _Epoch | None = None) -> _Epoch:
        known = self._epochs.get(epoch_id)
        if known is not None:
            return known
        record = self._reader.epoch(epoch_id)
        if record is None:
            if fallback is None:
                raise StoreError(f"the store holds no epoch {epoch_id}: the sandbox cannot compose its protocol config")
            record = StoredEpoch(epoch_id, fallback.record.protocol_version, fallback.record.config_json)
        config: Mapping[str, Any] = (
            orjson.loads(record.protocol_config_json)
            if record.protocol_config_json is not None
            else compose_protocol_config(self._genesis, record.protocol_version, orjson.loads(record.config_json),
                                         self._params)
        )  # fmt: skip
        validators = self._reader.validators(epoch_id) or (fallback.validators if fallback else None)
        view: dict[str, Any] = {} if validators is None else orjson.loads(validators.view_json)
        authors = tuple(v["account_id"] for v in view.get("current_validators", ()))
        epoch = _Epoch(
            epoch_id, record, config, config["shard_layout"], int(config["epoch_length"]), validators, authors,
            int(view.get("epoch_height", 0)),
        )  # fmt: skip
        self._epochs[epoch_id] = epoch
        return epoch

    def _epoch_of_next(self) -> tuple[_Epoch, str, bool]:
        """The next block's epoch, its next_epoch_id and whether it opens the epoch (nearcore's
        epoch manager with one producer: an epoch lasts epoch_length heights; the new epoch's id is
        the parent's next_epoch_id, and the one after it is the hash of the epoch's last block)."""
        header = orjson.loads(self._head.view_json)["header"]
        current = self._epoch(self._head.epoch_id)
        if self._head.height + 1 < self._epoch_start + current.length:
            return current, header["next_epoch_id"], False
        return self._epoch(header["next_epoch_id"], fallback=current), self._head.hash, True

    def _timestamp(self, parent: StoredBlock) -> int:
        return max(self._clock(), int(orjson.loads(parent.view_json)["header"]["timestamp"]) + _MIN_STEP_NS)

    def _context(
        self, height: int, block_hash: str, parent: StoredBlock, epoch: _Epoch, timestamp: int
    ) -> BlockContext:
        header = orjson.loads(parent.view_json)["header"]
        layout = epoch.layout
        return BlockContext(
            height=height,
            block_hash=block_hash,
            prev_block_hash=parent.hash,
            timestamp_ns=timestamp,
            epoch_id=epoch.epoch_id,
            epoch_height=epoch.epoch_height,
            gas_price=int(header["gas_price"]),  # a block's receipts pay its parent's next gas price
            protocol_version=epoch.record.protocol_version,
            protocol_config=epoch.protocol_config,
            random_seed=based58.b58decode(header["random_value"].encode("ascii")),
            chain_id=str(self._genesis["chain_id"]),
            shard_of=lambda account_id: account_shard_id(layout, account_id),
        )

    def _apply(self, taken: Sequence[_Queued]) -> tuple[NewBlock, BlockResult]:
        parent = self._head
        parent_view = orjson.loads(parent.view_json)
        epoch, next_epoch_id, new_epoch = self._epoch_of_next()
        height = parent.height + 1
        timestamp = self._timestamp(parent)
        layout = epoch.layout
        shard_ids = [int(chunk["shard_id"]) for chunk in parent_view["chunks"]]
        index_of = {shard_id: index for index, shard_id in enumerate(shard_ids)}
        contents = [ShardContent() for _ in shard_ids]
        for queued in taken:
            contents[index_of.get(queued.checked.shard_id, 0)].transactions.append((queued.signed, queued.checked.view))
        self._arrived = [
            (receipt.view, account_shard_id(layout, receipt.view["receiver_id"]))
            for receipt in self._outgoing
            if "Data" in receipt.view["receipt"]
        ]
        for receipt in self._outgoing:
            sender = receipt.view["predecessor_id"]
            origin = receipt.view["receiver_id"] if sender == "system" else sender
            contents[index_of.get(account_shard_id(layout, origin), 0)].receipts.append(receipt.view)
        authors = epoch.authors or (parent_view["author"],)
        plan = BlockPlan(
            height, timestamp, authors[height % len(authors)], epoch.epoch_id, next_epoch_id, new_epoch,
            contents, self._results,
        )  # fmt: skip
        new = next_block(parent_view, plan, self._prices)
        context = self._context(height, new.view["header"]["hash"], parent, epoch, timestamp)
        state = StoreStateView(self._reader, parent.height, self._pinned)
        result = self._runtime.apply_block(state, context, [q.signed for q in taken], self._outgoing, self._waiting)
        return new, result

    # -- writing a block

    def _write(self, new: NewBlock, result: BlockResult, patch: Patch | None) -> None:
        header = new.view["header"]
        height, block_hash = header["height"], header["hash"]
        block = block_from_view(new.view, orjson.dumps(new.view))
        shard_ids = [int(chunk["shard_id"]) for chunk in new.view["chunks"]]
        outcomes = self._outcomes(result, block_hash, shard_ids)
        flights, owners = self._followed(result, outcomes, height, block_hash)
        finished = [flying for flying in flights.values() if flying.done]
        header_epoch = header["epoch_id"]
        opened = header_epoch != self._head.epoch_id and self._reader.epoch(header_epoch) is None
        codes: list[str] = []
        with self._writer.batch(validate=self._validate) as batch:
            batch.put_block(block)
            for chunk in new.chunk_views:
                chunk_header = chunk["header"]
                batch.put_chunk(StoredChunk(chunk_header["chunk_hash"], block_hash, height, chunk_header["shard_id"],
                                            orjson.dumps(chunk)))  # fmt: skip
            codes += self._write_changes(batch, result.changes, height)
            record = ChangesRecord(lambda account_id: self._reader.account_json(account_id, self._head.height))
            record.add_commits(result.commits)
            if patch is not None:
                codes += self._write_patch(batch, patch, height, record)
            self._write_record(batch, record, height, block_hash, told=bool(result.commits) or not _wrote(result))
            for receipt in result.receipts:
                batch.put_receipt(StoredReceipt(receipt.receipt_id, block_hash, height, receipt.shard_id,
                                                orjson.dumps(receipt.view),
                                                orjson.dumps(outcomes[receipt.receipt_id])))  # fmt: skip
            for view, shard_id in self._arrived:
                batch.put_receipt(
                    StoredReceipt(view["receipt_id"], block_hash, height, shard_id, orjson.dumps(view), None)
                )
            for flying in finished:
                batch.put_transaction(flying.stored())
            if opened:
                self._write_epoch(batch, header_epoch, height)
        # committed: only now does the chain in memory move on (a failed batch leaves it as it was)
        self._in_flight.update(flights)
        self._receipt_owner.update(owners)
        for receipt in result.receipts:
            self._receipt_owner.pop(receipt.receipt_id, None)
        for flying in finished:
            del self._in_flight[flying.tx_hash]
            self._finished[flying.tx_hash] = (flying.height, height)
        self._created_codes.update(dict.fromkeys(codes, height))
        if opened:
            self._created_epochs[header_epoch] = height
            self._epochs.pop(header_epoch, None)  # read again from what is stored now
        if header_epoch != self._head.epoch_id:
            self._epoch_start = height
        self._head = block
        self._outgoing = list(result.outgoing)
        self._waiting = list(result.waiting)
        self._results = _shard_results(self._shard_outcome_roots(outcomes, result, shard_ids), result.tokens_burnt)
        if result.transactions or result.receipts or patch is not None:
            self._last_active = height
        self._final_height = self._height_of(block.last_final_block)

    def _followed(
        self, result: BlockResult, outcomes: Mapping[str, dict[str, Any]], height: int, block_hash: str
    ) -> tuple[dict[str, InFlight], dict[str, str]]:
        """The transactions this block moves on (copies, and the new ones) and the receipts each of
        them awaits now, leaving what the chain keeps untouched until the block is committed."""
        flights: dict[str, InFlight] = {}
        owners: dict[str, str] = {}
        for applied in result.transactions:
            flying = InFlight(applied.tx_hash, applied.signer_id, applied.shard_id, height, block_hash,
                              applied.view, outcomes[applied.tx_hash])  # fmt: skip
            flying.start()
            flights[flying.tx_hash] = flying
            owners.update(dict.fromkeys(flying.awaiting, flying.tx_hash))
        for receipt in result.receipts:
            owner_hash = owners.get(receipt.receipt_id) or self._receipt_owner.get(receipt.receipt_id)
            known = None if owner_hash is None else flights.get(owner_hash) or self._in_flight.get(owner_hash)
            if owner_hash is None or known is None:
                continue
            owner = flights.get(owner_hash) or known.copy()
            flights[owner_hash] = owner
            created = owner.executed(receipt.receipt_id, receipt.view, outcomes[receipt.receipt_id])
            owners.update(dict.fromkeys(created, owner_hash))
        return flights, owners

    def _outcomes(self, result: BlockResult, block_hash: str, shard_ids: list[int]) -> dict[str, dict[str, Any]]:
        """Every outcome of the block, by id, naming the block and with its path in its shard's
        outcome root (the transactions' conversions, then the receipts, in the order applied)."""
        outcomes: dict[str, dict[str, Any]] = {}
        for applied in result.transactions:
            outcomes[applied.tx_hash] = {**applied.outcome, "block_hash": block_hash}
        for receipt in result.receipts:
            outcomes[receipt.receipt_id] = {**receipt.outcome, "block_hash": block_hash}
        for group, _ in self._shard_outcome_roots(outcomes, result, shard_ids):
            _, paths = merkle.merklize([execution.outcome_leaf(outcome) for outcome in group])
            for outcome, path in zip(group, paths, strict=True):
                outcome["proof"] = path
        return outcomes

    @staticmethod
    def _shard_outcome_roots(
        outcomes: Mapping[str, dict[str, Any]], result: BlockResult, shard_ids: list[int]
    ) -> list[tuple[list[dict[str, Any]], str]]:
        """Per shard (the block's chunk order): its outcomes and their merkle root."""
        groups: dict[int, list[dict[str, Any]]] = {shard_id: [] for shard_id in shard_ids}
        for applied in result.transactions:
            groups.setdefault(applied.shard_id, []).append(outcomes[applied.tx_hash])
        for receipt in result.receipts:
            groups.setdefault(receipt.shard_id, []).append(outcomes[receipt.receipt_id])
        return [
            (groups[shard_id], merkle.merklize([execution.outcome_leaf(o) for o in groups[shard_id]])[0])
            for shard_id in shard_ids
        ]

    def _new_code(self, batch: WriteBatch, code_hash: str, code: bytes) -> list[str]:
        if self._reader.contract_code(code_hash) is not None:
            return []
        batch.put_contract_code(code_hash, code)
        return [code_hash]

    def _write_changes(self, batch: WriteBatch, changes: StateChanges, height: int) -> list[str]:
        parent = self._head.height
        for account_id, account in changes.accounts.items():
            earlier = self._reader.account_json(account_id, parent) if account is not None else None
            batch.put_account_state(account_id, height, None if account is None else account_json(account, earlier))
        for (account_id, public_key), key in changes.access_keys.items():
            batch.put_access_key(account_id, public_key, height, None if key is None else access_key_json(key))
        codes = [h for code_hash, code in changes.codes.items() for h in self._new_code(batch, code_hash, code)]
        for (account_id, data_key), value in changes.data.items():
            batch.put_contract_data(account_id, data_key, height, value)
        return codes

    def _write_patch(self, batch: WriteBatch, patch: Patch, height: int, record: ChangesRecord) -> list[str]:
        views: dict[str, bytes] = {}
        for account_id in sorted({*patch.accounts, *patch.code_of}):
            view = patched_account(patch, account_id, self._reader.account_json(account_id, self._head.height))
            if view is not None:
                batch.put_account_state(account_id, height, view)
                views[account_id] = view
        record.add_patch(patch, views)
        for (account_id, public_key), key_view in patch.access_keys.items():
            batch.put_access_key(account_id, public_key, height, key_view)
        codes = [h for code_hash, code in patch.codes.items() for h in self._new_code(batch, code_hash, code)]
        for (account_id, data_key), value in patch.data.items():
            batch.put_contract_data(account_id, data_key, height, value)
        return codes

    def _write_record(
        self, batch: WriteBatch, record: ChangesRecord, height: int, block_hash: str, *, told: bool
    ) -> None:
        """The block's changes with their causes (`changes`), where the runtime told them (or the
        block changed nothing); a record a reverted block left at this height is overwritten, so
        it is never read for this one."""
        key = recorded_changes(height)
        if record and told:
            batch.put_kept_answer(key, record.encoded(block_hash))
        elif self._reader.kept_answer(key) is not None:
            batch.put_kept_answer(key, NO_RECORD)

    def _write_epoch(self, batch: WriteBatch, epoch_id: str, height: int) -> None:
        """A new epoch's record and validators: the previous epoch's, carried on (one producer,
        no stake changes the sandbox tracks)."""
        epoch = self._epoch(epoch_id)
        batch.put_epoch(epoch.record)
        if epoch.validators is not None:
            view = orjson.loads(epoch.validators.view_json)
            view["epoch_start_height"] = height
            if "epoch_height" in view:
                view["epoch_height"] = int(view["epoch_height"]) + 1
            batch.put_validators(StoredValidators(epoch_id, height, orjson.dumps(view)))

    # -- snapshot and revert

    def snapshot(self) -> str:
        """Settle the chain (nothing queued or in flight), then mark its head; the mark's id."""
        self.settle()
        self._snapshot_count += 1
        snapshot_id = hex(self._snapshot_count)
        self._snapshots[snapshot_id] = _Snapshot(self._head.height, self._results)
        return snapshot_id

    def revert(self, snapshot_id: str) -> int:
        """Return the chain to a snapshot: every block, row and record above it dropped, the
        queues emptied; later snapshots are gone, this one stays. KeyError for an unknown id.
        Returns the rows removed."""
        mark = self._snapshots[snapshot_id]
        codes = [code_hash for code_hash, height in self._created_codes.items() if height > mark.height]
        epochs = [epoch_id for epoch_id, height in self._created_epochs.items() if height > mark.height]
        with self._writer.batch(validate=self._validate) as batch:
            removed = batch.drop_above(mark.height, code_hashes=codes, epoch_ids=epochs)
        for code_hash in codes:
            del self._created_codes[code_hash]
        for epoch_id in epochs:
            del self._created_epochs[epoch_id]
            self._epochs.pop(epoch_id, None)
        self._snapshots = {key: snap for key, snap in self._snapshots.items() if _order(key) <= _order(snapshot_id)}
        head = self._reader.head()
        assert head is not None and head.height == mark.height
        self._head = head
        self._results = mark.results
        # what was waiting is gone with the blocks: its waiters hear at once that it was dropped
        self._dropped = {q.checked.tx_hash for q in self._queue} | set(self._in_flight)
        self._queue.clear()
        self._outgoing.clear()
        self._waiting.clear()
        self._in_flight.clear()
        self._receipt_owner.clear()
        self._finished = {h: p for h, p in self._finished.items() if p[0] <= mark.height}
        self._epoch_start = self._epoch_start_of(head)
        self._final_height = self._height_of(head.last_final_block)
        self._last_active = min(self._final_height, self._last_active)  # a snapshot is settled
        return removed

    def patch(self, patch: Patch) -> None:
        self.produce(patch)

    def fast_forward(self, delta_height: int) -> None:
        for _ in range(delta_height):
            self.produce()


def _log_failure(failure: Exception, message: str, *args: object) -> None:
    """A failure the chain goes on after: one line when the store or a sandboxed fork's upstream
    could not give what the runtime read (StoreError says what), the traceback for anything else
    (a defect to report)."""
    if isinstance(failure, StoreError):
        log.error(message + ": %s", *args, failure)
    else:
        log.exception(message, *args)


def _shard_results(groups: list[tuple[list[dict[str, Any]], str]], block_burnt: int) -> tuple[ShardResults, ...]:
    """Each shard's gas and outcome root from its outcomes; its balance burnt too, except that the
    block's total is the runtime's (what leaves the supply: a contract's share of a call's gas
    is not burnt, though its outcome's tokens_burnt counts it), the difference on the busiest shard."""
    burnt = [sum(int(o["outcome"]["tokens_burnt"]) for o in group) for group, _ in groups]
    if burnt:
        busiest = max(range(len(burnt)), key=burnt.__getitem__)
        burnt[busiest] = max(burnt[busiest] + block_burnt - sum(burnt), 0)
    return tuple(
        ShardResults(sum(int(o["outcome"]["gas_burnt"]) for o in group), shard_burnt, root)
        for (group, root), shard_burnt in zip(groups, burnt, strict=True)
    )


def _wrote(result: BlockResult) -> bool:
    changes = result.changes
    return bool(changes.accounts or changes.access_keys or changes.codes or changes.data)


def _order(snapshot_id: str) -> int:
    return int(snapshot_id, 16)


def _hash_candidates(signed: bytes) -> list[str]:
    """The hash of the transaction before each signature a signed transaction may end with
    (ed25519: its type byte 0 and 64 bytes; secp256k1: 1 and 65): the transaction's hash is
    SHA-256 of its borsh bytes (core/primitives/src/transaction.rs `get_hash_and_size`)."""
    candidates = []
    for length, tag in ((64, 0), (65, 1)):
        if len(signed) > length + 1 and signed[-length - 1] == tag:
            digest = hashlib.sha256(signed[: -length - 1]).digest()
            candidates.append(based58.b58encode(digest).decode("ascii"))
    return candidates
