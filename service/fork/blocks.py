"""`ForkBlocks`: a fork's blocks, heads and epochs, each fetched from the upstream on a miss.

- The head: pinned (`fork_height`), the stored block at that height, so `final` and `optimistic`
  stay put for a test suite; otherwise the upstream's optimistic block at each lookup, recorded
  (its `final` and `near-final` follow from it, as nearcore derives them from its head). While
  the upstream gives none, the store's head stands in, as a node that stopped syncing answers
  from its own.
- A block is kept only when what can be checked agrees (nearcore's block hash cannot be computed
  from a block view, so its consistency is what is checked): asked by height, the node must
  answer the same block when asked by its hash; its parent, when stored, must be at the height
  its header names. A stored block the node's agreeing answers contradict (kept from a node that
  lied) is dropped in the same batch, so a lie never blocks the real block for good.
- An epoch is fetched (its protocol config) at a block of it already seen.
- A sandboxed fork's blocks above the pinned head are the sandbox's own, in the store: served
  from it, never asked of the upstream; its head is the store's (the sandbox's newest block).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Final

import orjson

from nearrpc.fork import marks
from nearrpc.fork.misses import Bounded, ForkMisses, says
from nearrpc.fork.upstream import UpstreamError
from nearrpc.fork.writer import Writes
from nearrpc.ingest.blocks_import import stored_block
from nearrpc.ingest.epochs import recorded_epoch
from nearrpc.ingest.rpc_client import RpcReply
from nearrpc.store import StoredBlock, StoredEpoch, WriteBatch
from nearrpc.store.base import BlockJsonFromBlocks

log = logging.getLogger("nearrpc.fork")

# How long heads come from the store after the upstream failed to give one, before it is asked
# again: a request for `final` during an outage should not wait for the retries each time.
_DOWN_SECONDS: Final = 5.0


@dataclasses.dataclass
class _Repair:
    """What a block's batch repairs of the store: blocks kept under a hash not their own (dropped),
    blocks another block replaced at a height (kept reachable by hash only)."""

    dropped: list[str] = dataclasses.field(default_factory=list)
    demoted: list[StoredBlock] = dataclasses.field(default_factory=list)


class ForkBlocks(ForkMisses, BlockJsonFromBlocks):  # a block's view through the fetching lookups below
    """The block lookups (and epochs) of `ForkReader`, which sets the attributes declared here."""

    fork_height: int | None
    sandboxed: bool
    _final_height: int
    _repairs: int
    _epoch_blocks: Bounded[str]
    _head_ancestors: Bounded[bool]
    _genesis_height: int | None
    _earliest: StoredBlock | None
    _heads_down_until: float
    _heads_from_store: bool

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
        if says(reply, "UNKNOWN_BLOCK"):
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

    def _stored_elsewhere(self, height: int) -> bool:
        """A stored record above a pinned head: kept by an earlier live fork of the store, not this
        fork's, unless a sandboxed fork's own chain made it."""
        return self._above_the_pin(height) and not self.sandboxed

    async def block_by_height(self, height: int) -> StoredBlock | None:
        if self._above_the_pin(height):
            return self._seen(await self.local.block_by_height(height)) if self.sandboxed else None
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
        if says(reply, "UNKNOWN_BLOCK"):
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
            return None if self._stored_elsewhere(block.height) else self._seen(block)
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
        if self.sandboxed:
            return self._head_seen(await self.local.head())
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
