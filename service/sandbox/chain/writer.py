"""`SandboxChain` (methods.sandbox_hooks) for the event loop, over the block producer on a thread
of its own (as service/fork/writer.py: a store writer's connection belongs to the thread that
opened it, and a write must never hold the event loop).

Block production:
- automine (the default): a transaction queued wakes a miner task, which makes blocks while
  anything is queued or in flight, then the two blocks that make the last busy block final
  (nearcore's doomslug with one producer: a block is final once two blocks follow it at the next
  heights). Transactions that arrive while a block is being made go into the next one. A `wait`
  whose status is reached waits on (briefly) until the transaction is final, so it comes back
  FINAL, with every receipt it caused executed, and `finality: final` reads see it at once,
  whatever status was asked for.
- `block_time` seconds: a block every interval, empty or not; finality follows two blocks later.
`patch_state` and `fast_forward` make their blocks at once in both modes (`fast_forward` a few
at a time: what is sent meanwhile goes into its next block); `snapshot` first makes
the blocks that execute what is queued or in flight, so a snapshot holds no half-run transaction.

What the server reads sees each commit at once, on either backend: after every write (a block, a
patch, a revert) the chain's thread reads the store's change counters back and queues them for
`on_commit` (the server's `CommitListener`, its serving reader) on the event loop, before the
write's own result: the loop runs its callbacks in order, so the reader knows of the commit before
any task learns of the write (a waiter's status included). A send, patch, fast-forward or revert
that returns is thus followed by reads of the new state, nothing kept from before (kept answers,
resolved finalities, SQLite's read snapshot). That holds in this process only: a sandbox is one
process, the store's one writer; replicas behind a balancer (other processes on the same
PostgreSQL store, which see a commit at their next poll) are not a sandbox's set-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, TypeVar

from nearrpc.methods.sandbox_hooks import TX_STATUSES
from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.sandbox.chain.patch import read_patch
from nearrpc.sandbox.chain.producer import ChainProducer, Progress
from nearrpc.sandbox.chain.state import PinnedState
from nearrpc.sandbox.runtime.model import Runtime
from nearrpc.store import ChainWriter, StoreError, StoreLocation, StoreOptions, StoreVersion, open_store

T = TypeVar("T")
log = logging.getLogger("nearrpc.sandbox")

# sandbox_fast_forward's delta_height at most: each block is a store batch (about a millisecond),
# so a call stays within seconds; nearcore's sandbox takes any u64 and produces them over time.
MAX_FAST_FORWARD: Final = 10_000
# Blocks a fast_forward makes in one turn of the chain's thread (tens of milliseconds): a send
# that arrives meanwhile is checked against the head of the moment and goes into the next block, as
# on a node, rather than waiting seconds for all 10,000 blocks and finding its block hash expired.
_FAST_FORWARD_STEP: Final = 20
# Under automine, how long a wait whose status is reached waits on for the transaction to be final
# (two blocks after its last receipt: milliseconds, unless transactions keep the miner busy).
_FINAL_SOON: Final = 1.0
# nearcore's jsonrpc `tx_execution_status_meets_expectations`: the statuses each wait accepts.
_MEETS: Final = {
    "NONE": frozenset(TX_STATUSES),
    "INCLUDED": frozenset(TX_STATUSES[1:]),
    "EXECUTED_OPTIMISTIC": frozenset({"EXECUTED_OPTIMISTIC", "EXECUTED", "FINAL"}),
    "INCLUDED_FINAL": frozenset({"INCLUDED_FINAL", "EXECUTED", "FINAL"}),
    "EXECUTED": frozenset({"EXECUTED", "FINAL"}),
    "FINAL": frozenset({"FINAL"}),
}


def reached(progress: Progress | None, final_height: int) -> str:
    """The TxExecutionStatus of a transaction included at / executed at these heights while the
    final block is at `final_height` (view_client_actor.rs `get_tx_execution_status`)."""
    if progress is None:
        return "NONE"
    included, executed = progress
    if executed is None:
        return "INCLUDED_FINAL" if included <= final_height else "INCLUDED"
    if executed <= final_height:
        return "FINAL"
    return "EXECUTED" if included <= final_height else "EXECUTED_OPTIMISTIC"


class SandboxChainWriter:
    """The sandbox's chain over a store it may write. Create it on the event loop that serves
    (`start` begins block production), `close` it at shutdown."""

    def __init__(
        self,
        location: StoreLocation,
        runtime: Runtime,
        *,
        block_time: float | None = None,
        options: StoreOptions | None = None,
        runtime_params: RuntimeParamStore | None = None,
        clock: Callable[[], int] = time.time_ns,
        validate: bool = False,
        on_commit: Callable[[StoreVersion], None] | None = None,
        pinned: PinnedState | None = None,
    ) -> None:
        """`on_commit`: told the store's counters after each commit (the server's serving reader,
        `store.CommitListener.committed`); without it the server sees a commit after its own check.
        `pinned`: a sandboxed fork's state below the chain (state.py), fetched on this loop."""
        self._pinned = pinned
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nearrpc-sandbox-chain")
        self._block_time = block_time
        self._writer: ChainWriter | None = None
        self._producer: ChainProducer | None = None
        params = runtime_params or RuntimeParamStore.load()
        # opened now, on its thread, before the server reads (SQLite switches to WAL mode on a
        # writer's first open)
        try:
            self._executor.submit(self._open, location, options, runtime, params, clock, validate, pinned).result()
        except BaseException:
            self._executor.shutdown(wait=False)
            raise
        self._changed = asyncio.Event()
        self._on_commit = on_commit
        self._miner: asyncio.Task[None] | None = None
        self._ticker: asyncio.Task[None] | None = None

    def _open(
        self, location: StoreLocation, options: StoreOptions | None, runtime: Runtime, params: RuntimeParamStore,
        clock: Callable[[], int], validate: bool, pinned: PinnedState | None,
    ) -> None:  # fmt: skip
        # a sandbox's chain is a test chain: its commits do not wait for the disk (a power cut may
        # lose the last blocks; a killed process loses nothing, and the store stays consistent)
        self._writer = open_store(
            location, "write", dataclasses.replace(options or StoreOptions(), durable_commits=False)
        )
        try:
            self._producer = ChainProducer(self._writer, runtime, params, clock=clock, validate=validate, pinned=pinned)
        except BaseException:
            self._writer.close()
            raise

    async def _run(self, call: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, call, *args)

    def _chain(self) -> ChainProducer:
        assert self._producer is not None, "the chain was closed"
        return self._producer

    async def _write(self, call: Callable[..., T], *args: Any) -> T:
        """`call` on the chain's thread, a write: the server's reader is told of it first (module doc)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._then_tell, loop, call, *args)

    def _then_tell(self, loop: asyncio.AbstractEventLoop, call: Callable[..., T], *args: Any) -> T:
        try:
            return call(*args)
        finally:  # a write that failed may have committed part of its work (blocks before the failing one)
            if self._on_commit is not None and self._writer is not None:
                try:
                    version = self._writer.reader().version()
                except StoreError as failure:  # the reader's own check sees the commit a little later
                    log.error("the sandbox could not read the store's change counters back: %s", failure)
                else:
                    loop.call_soon_threadsafe(self._on_commit, version)

    def _committed(self) -> None:
        """Wake every waiter: a block (or a revert) has been committed."""
        self._changed.set()
        self._changed = asyncio.Event()

    def start(self) -> None:
        """Begin producing blocks: every block_time, or under automine the blocks that make the head final."""
        if self._pinned is not None:
            self._pinned.bind(asyncio.get_running_loop())
        if self._block_time is not None and self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(self._tick(self._block_time))
        self._wake_miner()  # automine makes the store's head final before the first send

    async def _tick(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await self._write(self._chain().produce)
            except StoreError as failure:  # the next tick tries again
                log.error("the sandbox could not write a block: %s", failure)
            self._committed()

    async def _mine(self) -> None:
        more = True
        while more:
            try:
                more = await self._write(self._chain().mine)
            except StoreError as failure:  # the next transaction wakes it again
                log.error("the sandbox could not write a block: %s", failure)
                more = False
            self._committed()

    def _wake_miner(self) -> None:
        if self._block_time is None and (self._miner is None or self._miner.done()):
            self._miner = asyncio.get_running_loop().create_task(self._mine())

    # -- SandboxChain

    async def submit(self, signed_transaction: bytes) -> str:
        tx_hash = await self._run(self._chain().submit, signed_transaction)
        self._wake_miner()
        return tx_hash

    async def status(self, tx_hash: str) -> str:
        chain = self._chain()
        progress = await self._run(chain.progress, tx_hash)
        return reached(progress, chain.final_height)

    async def wait(self, tx_hash: str, status: str, timeout_s: float) -> str:
        if status not in _MEETS:
            raise ValueError(f"unknown TxExecutionStatus {status!r}")
        deadline = time.monotonic() + max(timeout_s, 0.0)
        reached = await self._until(tx_hash, status, deadline)
        if self._block_time is None and status not in ("NONE", "FINAL") and reached in _MEETS[status]:
            # automine makes the blocks that make it final at once: waited for too, briefly
            reached = await self._until(tx_hash, "FINAL", min(deadline, time.monotonic() + _FINAL_SOON))
        return reached

    async def _until(self, tx_hash: str, status: str, deadline: float) -> str:
        """The status reached: once it meets `status`, at the deadline, or at once when the
        transaction was dropped."""
        while True:
            changed = self._changed
            reached = await self.status(tx_hash)
            left = deadline - time.monotonic()
            if reached in _MEETS[status] or left <= 0 or (reached == "NONE" and self._chain().dropped(tx_hash)):
                return reached
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), left)

    async def patch_state(self, records: Sequence[Mapping[str, Any]]) -> None:
        patch = read_patch(records)  # InvalidStateRecord before anything is written
        await self._write(self._chain().patch, patch)
        self._committed()
        self._wake_miner()  # automine makes the patch's block final too

    async def fast_forward(self, delta_height: int) -> None:
        if not 0 <= delta_height <= MAX_FAST_FORWARD:
            raise ValueError(f"delta_height must be from 0 to {MAX_FAST_FORWARD}, not {delta_height}")
        left = delta_height
        while left > 0:  # in steps: a send or a read of the chain waits for one step, not for all of them
            step = min(left, _FAST_FORWARD_STEP)
            await self._write(self._chain().fast_forward, step)
            self._committed()
            left -= step

    async def snapshot(self) -> str:
        snapshot_id = await self._write(self._chain().snapshot)
        self._committed()
        return snapshot_id

    async def revert(self, snapshot_id: str) -> None:
        if self._miner is not None and not self._miner.done():
            await asyncio.shield(self._miner)  # a revert lands between blocks, never inside a batch
        await self._write(self._chain().revert, snapshot_id)
        self._committed()

    async def settled(self) -> None:
        """Return once automine has nothing left to make (tests, shutdown)."""
        while self._miner is not None and not self._miner.done():
            await asyncio.shield(self._miner)

    # -- shutdown

    def _close(self) -> None:
        self._producer = None
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    async def close(self) -> None:
        """Stop producing blocks and close the store writer (a block being written completes)."""
        for task in (self._ticker, self._miner):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        await self._run(self._close)
        self._executor.shutdown(wait=False)
