"""`ForkReader`: the store's serving reader, with the upstream behind every lookup it cannot answer.

A lookup the store answers is a hit. One it cannot is a miss: the upstream is asked, its answer
is kept in one batch (validated against the spec on the way in, with a mark where the rows alone
would not show it: `marks.py`), and the lookup answers what was kept. So a fork's answer and the
store's answer after it are the same bytes, made by the same handlers from the same rows.

- Single flight: concurrent lookups of one missing key share one upstream request and one write;
  what was fetched is remembered for `_SETTLE_SECONDS` (the serving reader may still be reading
  a snapshot from before the write).
- Each miss has a deadline (`miss_timeout`, retries included): past it, or when the upstream
  fails, the lookup raises UpstreamError (the request answers INTERNAL_ERROR) and nothing is kept.
  A hit never waits on the upstream.
- The head: pinned (`fork_height`), the stored block at that height, so `final` and `optimistic`
  stay put for a test suite; otherwise the upstream's optimistic block at each lookup, recorded
  (its `final` and `near-final` follow from it, as nearcore derives them from its head). While
  the upstream gives none, the store's head stands in, as a node that stopped syncing answers
  from its own.
- Before its first write, and again every `_CHAIN_SECONDS` while it writes, a worker checks that
  the upstream serves the store's chain (redirects are never followed: `RpcClient`).
- A block is kept only when what can be checked agrees (nearcore's block hash cannot be computed
  from a block view, so its consistency is what is checked): asked by height, the node must
  answer the same block when asked by its hash; its parent, when stored, must be at the height
  its header names. A stored block the node's agreeing answers contradict (kept from a node that
  lied) is dropped in the same batch, so a lie never blocks the real block for good.
- An "absent" mark (a skipped height, an unknown hash or account) is kept only from a
  nearcore-shaped error answer (a structured cause).
- Chunks, transactions and receipts are immutable by hash: kept for good once checked
  (`ingest.chain_records`: the spec component, the hash asked for, the block that includes it),
  a transaction once its status is FINAL; an "unknown" answer for one is never kept (it may yet
  appear). An ended epoch's validators are kept for good; the head's epoch's hold while the
  head has not moved past the block they count. The changes methods are the upstream's answers,
  kept verbatim per block.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import enum
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, Generic, TypeVar

import orjson

from nearrpc.fork import marks
from nearrpc.fork.calls import KEPT_CAUSES, CallAnswer, checked_error, checked_result
from nearrpc.fork.changes import changes_kind, checked_changes, checked_changes_error
from nearrpc.fork.contract_state import ContractState, Row, state_of, state_rows, value_rows
from nearrpc.fork.upstream import Upstream, UpstreamError
from nearrpc.fork.writer import AfterReading, ForkWriter, Keep, Writes
from nearrpc.ingest import chain_records, jsonio
from nearrpc.ingest.blocks_import import stored_block
from nearrpc.ingest.epochs import recorded_epoch
from nearrpc.ingest.rpc_client import RpcReply
from nearrpc.nearcore.public_key import canonical_public_key
from nearrpc.nearcore.views import ACCOUNT_VIEW_BLOCK_MEMBERS
from nearrpc.spec import SchemaViolation
from nearrpc.store import (
    ChainReader,
    ContractStateTooLarge,
    ServingReader,
    StoredBlock,
    StoredChunk,
    StoredEpoch,
    StoredReceipt,
    StoredTransaction,
    StoredValidators,
    StoreInfo,
    StoreVersion,
    WriteBatch,
)
from nearrpc.store.base import BlockJsonFromBlocks, access_key_order

T = TypeVar("T")
log = logging.getLogger("nearrpc.fork")

# How long what a miss fetched is served from memory: longer than a serving reader's snapshot
# lasts (1 ms for SQLite) and than a PostgreSQL replica's change poll (200 ms).
_SETTLE_SECONDS: Final = 2.0
_SETTLED_KEYS: Final = 10_000  # bounded: past it, the oldest are dropped
_REMEMBERED: Final = 100_000  # epoch -> a block of it, code hash -> an account with it
_NO_CODE: Final = "11111111111111111111111111111111"  # the hash of "no contract"
# limit_config's max_contract_size, the same at every protocol version (runtime_configs parameters.yaml)
MAX_CONTRACT_SIZE: Final = 4 * 1024 * 1024
# How long heads come from the store after the upstream failed to give one, before it is asked
# again: a request for `final` during an outage should not wait for the retries each time.
_DOWN_SECONDS: Final = 5.0
_REFUSED_ANSWERS: Final = (SchemaViolation, KeyError, TypeError, ValueError, binascii.Error)
# Blocks above an epoch's first read for the next epoch's id where the first names its own (genesis).
_GENESIS_LOOKAHEAD: Final = 8
# How long a chain check holds: a node behind the same address may be replaced by another's.
_CHAIN_SECONDS: Final = 30.0


class _TooLarge(enum.Enum):
    """The upstream refuses an account's contract state as too large (kept as a mark)."""

    REFUSED = "refused"


def _put_rows(batch: WriteBatch, account_id: str, rows: list[Row], mark: str) -> None:
    for key, height, value in rows:
        batch.put_contract_data(account_id, key, height, value)
    batch.put_fetched(mark)


def _unplaced(receipt_id: str, view: bytes) -> StoredReceipt:
    """A receipt known from its EXPERIMENTAL_receipt answer alone: where it was executed is not
    known (no block, height -1, shard -1, no outcome); it answers that method and nothing else."""
    return StoredReceipt(receipt_id, "", -1, -1, view, None)


# observe(outcome): "hit" or "miss", one per lookup that could have needed the upstream
LookupObserver = Callable[[str], None]


def _says(reply: RpcReply, *causes: str) -> bool:
    """Whether the node answered one of `causes` as nearcore answers it (a structured cause):
    what an "absent" mark may be kept from."""
    cause = reply.error.get("cause") if reply.error is not None else None
    return isinstance(cause, dict) and cause.get("name") in causes


def _parsed_or_none(view: bytes | None) -> object:
    """A view compared by its JSON value (stored bytes and an upstream's may differ in spacing)."""
    return None if view is None else orjson.loads(view)


@dataclasses.dataclass
class _Repair:
    """What a block's batch repairs of the store: blocks kept under a hash not their own (dropped),
    blocks another block replaced at a height (kept reachable by hash only)."""

    dropped: list[str] = dataclasses.field(default_factory=list)
    demoted: list[StoredBlock] = dataclasses.field(default_factory=list)


class _Bounded(dict[str, T], Generic[T]):
    """A dict that forgets everything when it grows past its bound (what it holds is a hint)."""

    def __init__(self, bound: int) -> None:
        super().__init__()
        self._bound = bound

    def remember(self, key: str, value: T) -> None:
        if len(self) >= self._bound:
            self.clear()
        self[key] = value


class ForkReader(BlockJsonFromBlocks):  # a block's view through the fetching lookups below
    """A `ServingReader` that reads through to an upstream node (module docstring)."""

    def __init__(
        self,
        local: ServingReader,
        upstream: Upstream,
        writer: ForkWriter,
        *,
        fork_height: int | None,
        miss_timeout: float,
        observe: LookupObserver | None = None,
    ) -> None:
        self.local = local
        self.upstream = upstream
        self.fork_height = fork_height
        self._writer = writer
        self._miss_timeout = miss_timeout
        self._observe = observe
        self._entered = False
        self._running: dict[str, asyncio.Task[Any]] = {}
        self._settled: dict[str, tuple[float, Any]] = {}
        self._final_height = -1  # the highest final height the upstream has shown
        self._chain_checked_until = 0.0  # time.monotonic() until which the chain check holds
        self._repairs = 0  # stored blocks dropped as contradicted: what answers were kept from is gone
        self._epoch_blocks = _Bounded[str](_REMEMBERED)  # epoch id -> hash of a block in it
        self._code_owners = _Bounded[tuple[str, int]](_REMEMBERED)  # code hash -> (account, height)
        self._head_ancestors = _Bounded[bool](_REMEMBERED)  # hashes of heads' final and near-final blocks
        self._genesis_height: int | None = None
        self._earliest: StoredBlock | None = None  # pinned forks: asked once
        self._heads_down_until = 0.0  # until then, heads are the store's (the upstream failed)
        self._heads_from_store = False

    @property
    def heads_move(self) -> bool:
        """Whether `final` and `optimistic` name other blocks from one request to the next."""
        return self.fork_height is None

    # -- hits, misses, single flight

    def _count(self, outcome: str) -> None:
        if self._observe is not None:
            self._observe(outcome)

    async def _upstream(self) -> Upstream:
        if not self._entered:
            self._entered = True
            await self.upstream.__aenter__()
        return self.upstream

    async def _call(self, method: str, params: Any) -> RpcReply:
        return await (await self._upstream()).call(method, params)

    async def _miss(self, key: str, fetch: Callable[[], Awaitable[tuple[T, Keep | None]]], *, keep: bool = True) -> T:
        """`fetch`'s value for `key`, fetched once however many ask at the same time."""
        settled = self._settled.get(key)
        if settled is not None and settled[0] > time.monotonic():
            self._count("hit")
            return settled[1]  # type: ignore[no-any-return]  # stored by this key's fetch
        task = self._running.get(key)
        if task is None:
            self._count("miss")
            task = asyncio.get_running_loop().create_task(self._fetch_and_keep(key, fetch))
            self._running[key] = task
            task.add_done_callback(lambda done: self._settle(key, done, keep))
        # shielded: a request that goes away does not cancel what the others wait for
        return await asyncio.shield(task)

    async def _fetch_and_keep(self, key: str, fetch: Callable[[], Awaitable[tuple[T, Keep | None]]]) -> T:
        try:
            async with asyncio.timeout(self._miss_timeout):
                await self._check_chain()
                value, writes = await fetch()
        except TimeoutError:
            raise UpstreamError(
                f"{self.upstream.address} gave no answer for {key} within {self._miss_timeout:g} s (the miss timeout)"
            ) from None
        if writes is not None:  # after the deadline: a write once started is never abandoned half way
            try:
                await self._writer.write(writes)
            except _REFUSED_ANSWERS as refused:
                raise UpstreamError(f"{self.upstream.address}: the answer for {key} is refused: {refused}") from None
        return value

    def _settle(self, key: str, done: asyncio.Task[Any], keep: bool) -> None:
        self._running.pop(key, None)
        if not keep or done.cancelled() or done.exception() is not None:
            return
        if len(self._settled) >= _SETTLED_KEYS:
            now = time.monotonic()
            self._settled = {k: v for k, v in self._settled.items() if v[0] > now}
            if len(self._settled) >= _SETTLED_KEYS:
                self._settled.clear()
        self._settled[key] = (time.monotonic() + _SETTLE_SECONDS, done.result())

    async def _check_chain(self) -> None:
        """Refuse to record from a node of another chain (checked again every `_CHAIN_SECONDS`)."""
        if time.monotonic() < self._chain_checked_until:
            return
        reply = await self._call("genesis_config", None)
        theirs = reply.result if reply.error is None and isinstance(reply.result, dict) else {}
        ours = orjson.loads(await self.local.genesis_config_json() or b"{}")
        mine = (ours.get("chain_id"), ours.get("genesis_height"))
        if (theirs.get("chain_id"), theirs.get("genesis_height")) != mine:
            raise UpstreamError(
                f"{self.upstream.address} serves chain {theirs.get('chain_id')!r} (genesis height "
                f"{theirs.get('genesis_height')}), the store chain {mine[0]!r} (genesis height {mine[1]}): nothing is "
                "recorded from it"
            )
        self._chain_checked_until = time.monotonic() + _CHAIN_SECONDS

    def _answer(self, reply: RpcReply, what: str) -> dict[str, Any]:
        if reply.error is not None or not isinstance(reply.result, dict):
            raise UpstreamError(f"{self.upstream.address}: {what}: the node answered {reply.describe()}")
        return reply.result

    def _parsed(self, build: Callable[[], T], what: str) -> T:
        try:
            return build()
        except _REFUSED_ANSWERS as refused:
            raise UpstreamError(f"{self.upstream.address}: {what}: the answer is refused: {refused!r}") from None

    # -- blocks

    def _seen(self, block: StoredBlock | None) -> StoredBlock | None:
        if block is not None and block.epoch_id not in self._epoch_blocks:
            self._epoch_blocks.remember(block.epoch_id, block.hash)
        return block

    def _head_seen(self, head: StoredBlock | None) -> StoredBlock | None:
        """A head: its final and near-final blocks are its ancestors, canonical as it is."""
        if head is not None:
            for ancestor in (head.last_final_block, head.last_ds_final_block):
                self._head_ancestors.remember(ancestor, True)
        return self._seen(head)

    async def _upstream_final_height(self) -> int:
        reply = await self._call("block", {"finality": "final"})
        height = self._parsed(lambda: int(self._answer(reply, "block final")["header"]["height"]), "block final")
        self._final_height = max(self._final_height, height)
        return self._final_height

    async def _upstream_earliest_height(self) -> int:
        """The upstream's earliest available height now (asked each time: it rises as a node
        that is not archival collects old blocks)."""
        reply = await self._call("block", {"sync_checkpoint": "earliest_available"})
        what = "block earliest_available"
        return self._parsed(lambda: int(self._answer(reply, what)["header"]["height"]), what)

    async def _block_of(self, reply: RpcReply, what: str) -> tuple[StoredBlock, int | None]:
        """The block an answer holds, and the height its header names for its parent."""
        view = self._answer(reply, what)
        block = self._parsed(lambda: stored_block(view), what)
        prev_height = view["header"].get("prev_height")
        return block, prev_height if isinstance(prev_height, int) and prev_height < block.height else None

    async def _contradicted(self, block: StoredBlock, prev_height: int | None, what: str, *, by_hash: bool,
                            canonical: bool) -> _Repair:  # fmt: skip
        """Check `block` before it is kept, and what to repair in its batch. UpstreamError when
        the node's own answers disagree: nothing is kept.

        `by_hash`: ask the node for the block by its hash too (it was asked by height or finality:
        its hash is only the node's word)."""
        where = self.upstream.address
        if by_hash:
            again, _ = await self._block_of(await self._call("block", {"block_id": block.hash}), f"block {block.hash}")
            if (again.height, again.prev_hash) != (block.height, block.prev_hash):
                raise UpstreamError(
                    f"{where}: {what}: the node answers with block {block.hash} at height {block.height}, and asked "
                    f"for block {block.hash} with one at height {again.height}: nothing is kept"
                )
        repair = _Repair()
        same = await self.local.block_by_hash(block.hash)
        if same is not None and same.height != block.height:
            repair.dropped.append(same.hash)  # a hash fixes a height: the stored one was kept under a hash not its own
        if prev_height is None:
            return repair
        parent = await self.local.block_by_hash(block.prev_hash)
        if parent is not None and parent.height != prev_height:
            repair.dropped.append(parent.hash)  # a block's header names its parent's height
        stored = await self.local.block_by_height(prev_height)
        if canonical and stored is not None and stored.hash != block.prev_hash and stored.hash not in repair.dropped:
            # the stored block at the parent's height is not the parent: ask which one is
            reply = await self._call("block", {"block_id": prev_height})
            named, _ = await self._block_of(reply, f"block {prev_height}")
            if named.hash != block.prev_hash:
                raise UpstreamError(
                    f"{where}: {what}: the node's block at height {prev_height} is {named.hash}, not the parent "
                    f"{block.prev_hash} its block at {block.height} names: nothing is kept"
                )
            # another block took the height (a reorg above the final head, or a lie): reachable by
            # hash only from now on, so that the parent is asked for by height
            repair.demoted.append(stored)
        return repair

    def _keep_block(self, block: StoredBlock, repair: _Repair, *, canonical: bool) -> Writes:
        def writes(batch: WriteBatch) -> None:
            for block_hash in repair.dropped:
                batch.drop_block(block_hash)
            for other in repair.demoted:
                batch.put_block(other, canonical=False)
            batch.put_block(block, canonical=canonical)

        if repair.dropped:
            log.warning("%s: block %s at height %s contradicts stored blocks %s, kept from an upstream that lied: "
                        "they are dropped", self.upstream.address, block.hash, block.height,
                        ", ".join(repair.dropped))  # fmt: skip
            self._repairs += 1
        return writes

    async def _fetch_block_at(self, height: int) -> tuple[StoredBlock | None, Writes | None]:
        what = f"block {height}"
        reply = await self._call("block", {"block_id": height})
        if _says(reply, "UNKNOWN_BLOCK"):
            if height > self._final_height and height > await self._upstream_final_height():
                return None, None  # above the final head: it may yet be filled
            if height < await self._upstream_earliest_height():
                return None, None  # collected by a node that keeps no old blocks: not a skipped height
            return None, lambda batch: batch.put_fetched(marks.skipped_height(height))
        block, prev_height = await self._block_of(reply, what)
        if block.height != height:
            raise UpstreamError(f"{self.upstream.address}: {what}: the node answered a block at height {block.height}")
        # above the upstream's final head another block may yet take the height: kept reachable by
        # its hash, asked again by height until final (a pinned head is final: all below it is)
        final = height <= self._final_height or height <= await self._upstream_final_height()
        repair = await self._contradicted(block, prev_height, what, by_hash=True, canonical=final)
        return block, self._keep_block(block, repair, canonical=final)

    def _above_the_pin(self, height: int) -> bool:
        """Above a pinned head: not in this fork, whatever the store holds (an earlier live fork
        of the same store may have kept later blocks)."""
        return self.fork_height is not None and height > self.fork_height

    async def block_by_height(self, height: int) -> StoredBlock | None:
        if self._above_the_pin(height):
            return None
        block = await self.local.block_by_height(height)
        if block is not None:
            return self._seen(block)
        if height < 0 or height >= 1 << 63:
            return None
        if await self.local.fetched(marks.skipped_height(height)):
            self._count("hit")
            return None
        return self._seen(await self._miss(f"block/{height}", lambda: self._fetch_block_at(height)))

    async def _fetch_block_by_hash(self, block_hash: str) -> tuple[StoredBlock | None, Writes | None]:
        what = f"block {block_hash}"
        reply = await self._call("block", {"block_id": block_hash})
        unserved: Writes = lambda batch: batch.put_fetched(marks.unserved_hash(block_hash))  # noqa: E731
        if _says(reply, "UNKNOWN_BLOCK"):
            # kept as unknown for good: a block hash is named once its block exists (a client that
            # read it off a node ahead of this upstream meets the answer that node would lag with)
            return None, unserved
        block, prev_height = await self._block_of(reply, what)
        if block.hash != block_hash:
            raise UpstreamError(f"{self.upstream.address}: {what}: the node answered block {block.hash}")
        if self._above_the_pin(block.height):
            return None, unserved  # above the pinned head: not in this fork
        # found by hash, it may be a fork block: indexed by height only when asked by height, or
        # when it is the final or near-final block of a head (an ancestor of the canonical head)
        canonical = block_hash in self._head_ancestors
        repair = await self._contradicted(block, prev_height, what, by_hash=False, canonical=canonical)
        return block, self._keep_block(block, repair, canonical=canonical)

    async def block_by_hash(self, block_hash: str) -> StoredBlock | None:
        block = await self.local.block_by_hash(block_hash)
        if block is not None:
            return None if self._above_the_pin(block.height) else self._seen(block)
        if await self.local.fetched(marks.unserved_hash(block_hash)):
            self._count("hit")
            return None
        return self._seen(await self._miss(f"hash/{block_hash}", lambda: self._fetch_block_by_hash(block_hash)))

    async def _fetch_named(self, reference: dict[str, str]) -> tuple[StoredBlock, Writes | None]:
        """The block a finality or checkpoint names on the upstream now, kept when new (a head
        that has not moved writes nothing, which would drop every answer kept from blocks)."""
        what = f"block {orjson.dumps(reference).decode()}"
        reply = await self._call("block", reference)
        block, prev_height = await self._block_of(reply, what)
        stored = await self.local.block_by_height(block.height)
        if stored is not None and stored.hash == block.hash:
            return stored, None
        repair = await self._contradicted(block, prev_height, what, by_hash=True, canonical=True)
        return block, self._keep_block(block, repair, canonical=True)

    async def _named(self, key: str, reference: dict[str, str]) -> StoredBlock | None:
        """The block `reference` names on the upstream now; None while the upstream does not
        answer (asked again `_DOWN_SECONDS` after it last failed), when the store's own stands in."""
        if time.monotonic() < self._heads_down_until:
            return None
        try:
            block = await self._miss(key, lambda: self._fetch_named(reference), keep=False)
        except UpstreamError as failure:
            self._heads_down_until = time.monotonic() + _DOWN_SECONDS
            if not self._heads_from_store:
                log.warning("the upstream gives no head (%s): final, optimistic and earliest_available answer from "
                            "the store's own until it does", failure)  # fmt: skip
            self._heads_from_store = True
            return None
        if self._heads_from_store:
            log.warning("the upstream gives heads again")
            self._heads_from_store = False
        return block

    async def head(self) -> StoredBlock | None:
        if self.fork_height is not None:
            return self._head_seen(await self.block_by_height(self.fork_height))
        block = await self._named("head", {"finality": "optimistic"})
        return self._head_seen(block if block is not None else await self.local.head())

    async def earliest_block(self) -> StoredBlock | None:
        if self._earliest is not None:
            return self._earliest
        block = await self._named("earliest", {"sync_checkpoint": "earliest_available"})
        if block is None:
            return await self.local.earliest_block()
        if self.fork_height is not None:
            self._earliest = block  # a pinned fork's stays put
        return self._seen(block)

    async def genesis_block(self) -> StoredBlock | None:
        if self._genesis_height is None:
            genesis = await self.local.genesis_config_json()
            if genesis is None:
                return None
            self._genesis_height = int(orjson.loads(genesis)["genesis_height"])
        return await self.block_by_height(self._genesis_height)

    # -- epochs

    async def _fetch_epoch(self, epoch_id: str, block_hash: str) -> tuple[StoredEpoch, Writes]:
        what = f"EXPERIMENTAL_protocol_config at {block_hash}"
        reply = await self._call("EXPERIMENTAL_protocol_config", {"block_id": block_hash})
        epoch = self._parsed(lambda: recorded_epoch(epoch_id, self._answer(reply, what)), what)
        return epoch, lambda batch: batch.put_epoch(epoch)

    async def epoch(self, epoch_id: str) -> StoredEpoch | None:
        epoch = await self.local.epoch(epoch_id)
        block_hash = self._epoch_blocks.get(epoch_id)
        if epoch is not None or block_hash is None:  # no block of it seen: nothing to ask at
            return epoch
        return await self._miss(f"epoch/{epoch_id}", lambda: self._fetch_epoch(epoch_id, block_hash))

    # -- accounts, access keys, code

    def _without_block(self, view: dict[str, Any], height: int, what: str) -> bytes:
        if view.get("block_height") != height:
            raise UpstreamError(f"{self.upstream.address}: {what}: the view is of height {view.get('block_height')}")
        return jsonio.compact({k: v for k, v in view.items() if k not in ACCOUNT_VIEW_BLOCK_MEMBERS})

    def _note_code(self, account_id: str, height: int, view: bytes | None) -> bytes | None:
        if view is not None:
            code_hash = orjson.loads(view).get("code_hash")
            if isinstance(code_hash, str) and code_hash != _NO_CODE and code_hash not in self._code_owners:
                self._code_owners.remember(code_hash, (account_id, height))
        return view

    async def _fetch_account(self, account_id: str, height: int) -> tuple[bytes | None, Writes]:
        what = f"EXPERIMENTAL_view_account {account_id} at {height}"
        reply = await self._call("EXPERIMENTAL_view_account", {"block_id": height, "account_id": account_id})
        view = None
        if not _says(reply, "UNKNOWN_ACCOUNT"):
            view = self._parsed(lambda: self._without_block(self._answer(reply, what), height, what), what)

        def writes(batch: WriteBatch) -> None:
            batch.put_account_state(account_id, height, view)
            batch.put_fetched(marks.account(account_id, height))

        return view, writes

    async def account_json(self, account_id: str, height: int) -> bytes | None:
        if await self.local.fetched(marks.account(account_id, height)):
            self._count("hit")
            view = await self.local.account_json(account_id, height)
        else:
            key = marks.account(account_id, height)
            view = await self._miss(key, lambda: self._fetch_account(account_id, height))
        return self._note_code(account_id, height, view)

    async def _fetch_access_key(self, account_id: str, public_key: str, height: int) -> tuple[bytes | None, Writes]:
        what = f"EXPERIMENTAL_view_access_key {account_id} {public_key} at {height}"
        params = {"block_id": height, "account_id": account_id, "public_key": public_key}
        reply = await self._call("EXPERIMENTAL_view_access_key", params)
        view = None
        if not _says(reply, "UNKNOWN_ACCESS_KEY", "UNKNOWN_ACCOUNT"):
            view = self._parsed(lambda: self._without_block(self._answer(reply, what), height, what), what)
        restored = await self._restoring(account_id, height, {public_key: view})

        def writes(batch: WriteBatch) -> None:
            batch.put_access_key(account_id, public_key, height, view)
            for key, state in restored:
                batch.put_access_key(account_id, key, height + 1, state)
            batch.put_fetched(marks.access_key(account_id, public_key, height))

        return view, writes

    async def _restoring(
        self, account_id: str, height: int, kept: dict[str, bytes | None]
    ) -> list[tuple[str, bytes | None]]:
        """The rows at `height + 1` that keep what the store answers above `height` as it was
        when `kept` (key -> state, None: none) is written at `height`.

        A key state answers for every height up to the key's next row, so a state kept at 50
        would show through at 95, where an exact list was kept earlier without that key. The
        state each key had at `height + 1` goes back there (the same value again where a row
        is there already), so a write changes the answers at its own height only."""
        if height + 1 >= 1 << 63:
            return []
        above = dict(await self.local.access_keys_json(account_id, height + 1))
        return [
            (key, above.get(key))
            for key, state in kept.items()
            if _parsed_or_none(above.get(key)) != _parsed_or_none(state)
        ]

    async def access_key_json(self, account_id: str, public_key: str, height: int) -> bytes | None:
        key = marks.access_key(account_id, public_key, height)
        if await self.local.fetched(key):
            self._count("hit")
            return await self.local.access_key_json(account_id, public_key, height)
        return await self._miss(key, lambda: self._fetch_access_key(account_id, public_key, height))

    def _key_list(self, answer: dict[str, Any], height: int, what: str) -> list[tuple[str, bytes]]:
        if answer.get("block_height") != height:
            raise UpstreamError(f"{self.upstream.address}: {what}: the list is of height {answer.get('block_height')}")
        if answer.get("last_key") is not None:  # one page of a newer node's paged list: not every key
            raise UpstreamError(f"{self.upstream.address}: {what}: the node answered one page of the keys (last_key)")
        keys = [
            (canonical_public_key(item["public_key"]), jsonio.compact(item["access_key"])) for item in answer["keys"]
        ]
        return sorted(keys, key=lambda pair: access_key_order(pair[0]))

    async def _fetch_access_keys(self, account_id: str, height: int) -> tuple[list[tuple[str, bytes]], Writes]:
        what = f"EXPERIMENTAL_view_access_key_list {account_id} at {height}"
        reply = await self._call("EXPERIMENTAL_view_access_key_list", {"block_id": height, "account_id": account_id})
        keys = self._parsed(lambda: self._key_list(self._answer(reply, what), height, what), what)
        listed = {key for key, _ in keys}
        # keys the store lists there that the node does not: gone by this height
        gone = [key for key, _ in await self.local.access_keys_json(account_id, height) if key not in listed]
        kept: dict[str, bytes | None] = {**dict(keys), **dict.fromkeys(gone)}
        restored = await self._restoring(account_id, height, kept)

        def writes(batch: WriteBatch) -> None:
            for key, view in kept.items():
                batch.put_access_key(account_id, key, height, view)
            for key, state in restored:
                batch.put_access_key(account_id, key, height + 1, state)
            batch.put_fetched(marks.access_key_list(account_id, height))

        return keys, writes

    async def access_keys_json(self, account_id: str, height: int) -> list[tuple[str, bytes]]:
        key = marks.access_key_list(account_id, height)
        if await self.local.fetched(key):
            self._count("hit")
            return await self.local.access_keys_json(account_id, height)
        return await self._miss(key, lambda: self._fetch_access_keys(account_id, height))

    async def _fetch_code(self, code_hash: str, account_id: str, height: int) -> tuple[bytes, Writes]:
        what = f"EXPERIMENTAL_view_code {account_id} at {height}"
        reply = await self._call("EXPERIMENTAL_view_code", {"block_id": height, "account_id": account_id})
        answer = self._answer(reply, what)
        if answer.get("hash") != code_hash:
            raise UpstreamError(f"{self.upstream.address}: {what}: the code's hash is {answer.get('hash')}")
        code = self._parsed(lambda: base64.b64decode(answer["code_base64"], validate=True), what)
        if len(code) > MAX_CONTRACT_SIZE:
            # no protocol lets such code be deployed: it is not kept (the executor refuses it unread)
            return code, lambda batch: None
        return code, lambda batch: batch.put_contract_code(code_hash, code)

    async def contract_code(self, code_hash: str) -> bytes | None:
        code = await self.local.contract_code(code_hash)
        owner = self._code_owners.get(code_hash)
        if code is not None or owner is None:  # no account with it seen: nothing to ask for
            return code
        return await self._miss(f"code/{code_hash}", lambda: self._fetch_code(code_hash, *owner))

    async def fork_status(self) -> dict[str, object]:
        """What /status says of the fork: the upstream's address (never a credential), whether it
        answers now (asked at most every few seconds, never for longer than 2 s) and the head."""
        return {
            "upstream": self.upstream.address,
            "upstream_answers": await (await self._upstream()).answers(timeout=2.0),
            "record_mode": "new",
            "fork_height": self.fork_height,
            "head": "pinned" if self.fork_height is not None else "the upstream's, asked at each request",
        }

    # -- the rest is the store's

    async def genesis_config_json(self) -> bytes | None:
        return await self.local.genesis_config_json()

    async def client_config_json(self) -> bytes | None:
        return await self.local.client_config_json()

    # -- contract state, as anvil reads storage: each key a view call reads, fetched once

    async def _ask_view_state(self, account_id: str, prefix: bytes, block: StoredBlock) -> RpcReply:
        """The upstream's view_state under `prefix` at the block's hash, through `query` as the
        recorder asks (every node has it; nearcore's EXPERIMENTAL_view_state folds a shard it does
        not track into an HTTP 500, retried as an overloaded node's; `query` answers UNAVAILABLE_SHARD)."""
        prefix_base64 = base64.b64encode(prefix).decode()
        params = {"request_type": "view_state", "block_id": block.hash, "account_id": account_id,
                  "prefix_base64": prefix_base64}  # fmt: skip
        return await self._call("query", params)

    async def _block_at(self, height: int, what: str) -> StoredBlock:
        block = await self.block_by_height(height)
        if block is None:
            raise UpstreamError(f"{self.upstream.address}: {what}: no block at height {height} to ask at")
        return block

    async def _fetch_state(
        self, account_id: str, prefix: bytes, height: int, *, whole: bool, what: str
    ) -> ContractState | _TooLarge:
        """The account's state under `prefix` at `height` as the upstream gives it (an unknown
        account has none), or that the upstream refuses it as too large."""
        block = await self._block_at(height, what)
        reply = await self._ask_view_state(account_id, prefix, block)
        if _says(reply, "TOO_LARGE_CONTRACT_STATE"):
            return _TooLarge.REFUSED
        if _says(reply, "UNKNOWN_ACCOUNT"):
            return {}
        answer = self._answer(reply, what)
        return self._parsed(lambda: state_of(answer, block, prefix, whole=whole), what)

    def _too_large(self, account_id: str, height: int) -> Keep:
        log.info("%s refuses the contract state of %s at height %s as too large: its view calls there are the "
                 "upstream's", self.upstream.address, account_id, height)  # fmt: skip
        return lambda batch: batch.put_fetched(marks.state_too_large(account_id, height))

    async def _fetch_value(self, account_id: str, key: bytes, height: int) -> tuple[bytes | _TooLarge | None, Keep]:
        what = f"view_state {account_id} (one storage key) at {height}"
        mark = marks.contract_value(account_id, key, height)
        state = await self._fetch_state(account_id, key, height, whole=False, what=what)
        if isinstance(state, _TooLarge):
            return state, self._too_large(account_id, height)
        value = state.get(key)

        def plan(store: ChainReader) -> Writes:
            rows = value_rows(store, account_id, key, height, value)
            return lambda batch: _put_rows(batch, account_id, rows, mark)

        return value, AfterReading(plan)

    async def _state_unavailable(self, account_id: str, height: int) -> bool:
        return await self.local.fetched(marks.state_too_large(account_id, height))

    async def contract_value(self, account_id: str, key: bytes, height: int) -> bytes | None:
        mark = marks.contract_value(account_id, key, height)
        if await self.local.fetched(mark):
            self._count("hit")
            return await self.local.contract_value(account_id, key, height)
        if not await self._state_unavailable(account_id, height):
            value = await self._miss(mark, lambda: self._fetch_value(account_id, key, height))
            if not isinstance(value, _TooLarge):
                return value
        raise ContractStateTooLarge(account_id, height)

    def inline_contract_values(self) -> None:
        return None  # a key not asked yet waits on the upstream

    async def _fetch_listing(self, account_id: str, prefix: bytes, height: int) -> tuple[bool, Keep]:
        what = f"view_state {account_id} at {height}"
        mark = marks.contract_state(account_id, prefix, height)
        state = await self._fetch_state(account_id, prefix, height, whole=True, what=what)
        if isinstance(state, _TooLarge):
            return False, self._too_large(account_id, height)

        def plan(store: ChainReader) -> Writes:
            rows = state_rows(store, account_id, prefix, height, state)
            return lambda batch: _put_rows(batch, account_id, rows, mark)

        return True, AfterReading(plan)

    async def contract_state(
        self, account_id: str, prefix: bytes, height: int, limit: int
    ) -> list[tuple[bytes, bytes]]:
        """The state under `prefix`, fetched whole once at that height and kept as rows (then
        listed by the store as any store lists it, so a replay answers the same bytes)."""
        mark = marks.contract_state(account_id, prefix, height)
        if await self.local.fetched(mark):
            self._count("hit")
        elif await self._state_unavailable(account_id, height) or not await self._miss(
            mark, lambda: self._fetch_listing(account_id, prefix, height)
        ):
            raise ContractStateTooLarge(account_id, height)
        return await self.local.contract_state(account_id, prefix, height, limit)

    # -- view calls the upstream answers (where they cannot run here, or to verify them)

    async def _fetch_call(
        self, account_id: str, method_name: str, args: bytes, block: StoredBlock
    ) -> tuple[CallAnswer, Keep | None]:
        what = f"call_function {account_id} {method_name} at {block.hash}"
        params = {"request_type": "call_function", "block_id": block.hash, "account_id": account_id,
                  "method_name": method_name, "args_base64": base64.b64encode(args).decode()}  # fmt: skip
        reply = await self._call("query", params)
        error = reply.error
        if error is not None:
            answer = CallAnswer(None, self._parsed(lambda: checked_error(error), what))
            if reply.cause not in KEPT_CAUSES:
                return answer, None  # answered, and not kept: the node may answer otherwise later
        else:
            answer = CallAnswer(self._parsed(lambda: checked_result(reply.result, block), what), None)
        mark = marks.call(account_id, method_name, args, block.hash)
        return answer, lambda batch: batch.put_kept_answer(mark, answer.kept())

    async def call_function(self, account_id: str, method_name: str, args: bytes, block: StoredBlock) -> CallAnswer:
        """The upstream's answer to a view call at `block`: kept verbatim the first time, then
        answered from the store (with the upstream stopped too)."""
        mark = marks.call(account_id, method_name, args, block.hash)
        kept = await self.local.kept_answer(mark)
        if kept is not None:
            self._count("hit")
            return CallAnswer.from_kept(kept)
        return await self._miss(mark, lambda: self._fetch_call(account_id, method_name, args, block))

    # -- chunks, transactions, receipts: immutable by hash, kept for good once checked. An
    # "unknown" answer is never kept: a chunk, a transaction or a receipt a node does not know
    # yet may appear on it (a client polls a transaction's status before it lands).

    async def _fetch_chunk(self, chunk_hash: str) -> tuple[StoredChunk | None, Writes | None]:
        what = f"chunk {chunk_hash}"
        reply = await self._call("chunk", {"chunk_id": chunk_hash})
        if _says(reply, "UNKNOWN_CHUNK"):
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
            if self._above_the_pin(chunk.height):
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
        if _says(reply, "UNKNOWN_TRANSACTION", "TIMEOUT_ERROR") or (
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
            return None if self._above_the_pin(found.height) else found
        key = f"tx/{tx_hash}/{signer_id}"
        found = await self._miss(key, lambda: self._fetch_transaction(tx_hash, signer_id))
        return None if found is None or self._above_the_pin(found.height) else found

    async def _fetch_receipt(self, receipt_id: str) -> tuple[StoredReceipt | None, Writes | None]:
        what = f"EXPERIMENTAL_receipt {receipt_id}"
        reply = await self._call("EXPERIMENTAL_receipt", {"receipt_id": receipt_id})
        if _says(reply, "UNKNOWN_RECEIPT"):
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
        if _says(reply, "UNKNOWN_EPOCH"):
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

    # -- state changes: the upstream's answer per block, kept verbatim (a fork holds only the rows
    # it was asked for, so changes derived from them would leave out the rest)

    async def _fetch_changes(self, method: str, params: dict[str, Any], block: StoredBlock,
                             mark: str) -> tuple[CallAnswer, Keep | None]:  # fmt: skip
        what = f"{method} at {block.hash}"
        reply = await self._call(method, {**params, "block_id": block.hash})
        if reply.error is not None:  # e.g. a block it has not processed yet: answered, not kept
            error = reply.error
            return CallAnswer(None, self._parsed(lambda: checked_changes_error(method, error), what)), None
        result = self._parsed(lambda: checked_changes(method, reply.result, block), what)
        answer = CallAnswer(result, None)
        return answer, lambda batch: batch.put_kept_answer(mark, answer.kept())

    async def changes(self, method: str, params: dict[str, Any], block: StoredBlock) -> CallAnswer:
        """The upstream's answer to a changes method at `block` (`params` without the block
        reference): kept verbatim the first time, then answered from the store."""
        mark = marks.changes(changes_kind(method), orjson.dumps(params, option=orjson.OPT_SORT_KEYS), block.hash)
        kept = await self.local.kept_answer(mark)
        if kept is not None:
            self._count("hit")
            return CallAnswer.from_kept(kept)
        return await self._miss(mark, lambda: self._fetch_changes(method, params, block, mark))

    async def receipts_executed_at(self, height: int) -> list[StoredReceipt]:
        return await self.local.receipts_executed_at(height)

    async def transactions_at(self, height: int) -> list[StoredTransaction]:
        return await self.local.transactions_at(height)

    async def account_changes(self, height: int) -> list[tuple[str, bytes | None]]:
        return await self.local.account_changes(height)

    async def access_key_changes(self, height: int) -> list[tuple[str, str, bytes | None]]:
        return await self.local.access_key_changes(height)

    async def contract_data_changes(self, height: int) -> list[tuple[str, bytes, bytes | None]]:
        return await self.local.contract_data_changes(height)

    async def fetched(self, key: str) -> bool:
        return await self.local.fetched(key)

    async def kept_answer(self, key: str) -> bytes | None:
        return await self.local.kept_answer(key)

    async def genesis_hash(self) -> str | None:
        return await self.local.genesis_hash()

    async def info(self) -> StoreInfo:
        info = await self.local.info()
        # the methods refuse to say "no such key" from a store that holds no keys at all; a fork
        # asks its upstream, which knows
        return dataclasses.replace(info, access_key_count=max(info.access_key_count, 1))

    async def account_count(self) -> int:
        return await self.local.account_count()

    async def epoch_start_height(self, block: StoredBlock) -> int | None:
        return await self.local.epoch_start_height(block)

    def version(self) -> StoreVersion:
        version = self.local.version()
        # a dropped block: answers kept from it (a block found by hash is otherwise the same
        # forever) must go, as when another store is served
        if not self._repairs:
            return version
        return dataclasses.replace(version, generation=version.generation + self._repairs)

    async def close(self) -> None:
        for task in list(self._running.values()):
            task.cancel()
        try:
            if self._entered:
                await self.upstream.__aexit__(None, None, None)
        finally:
            try:
                await self.local.close()
            finally:
                self._writer.close()  # last: with no reader left open, SQLite folds its WAL back
