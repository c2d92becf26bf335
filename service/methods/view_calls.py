"""Contract view calls answered from stored state: `call_function` runs the account's code on
the execution room (nearrpc.contracts), on the event loop within a slice where the store reads
without waiting, else in a worker thread, reading storage through the store's reader;
`view_state` lists the stored contract state under a prefix.

`CallUpstream`, `CallVerifier` and `ChangesUpstream` are the hooks a fork provides (nearrpc.fork
implements them, nearrpc.cli hands them over): where local execution cannot run (a host function
the executor lacks) the handlers answer the upstream's `call_function` result verbatim; with a
verifier they hand it every local answer to compare and count each difference; the changes
methods are the upstream's answers at the resolved block. The handlers never know whose they are.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Final, Protocol

import orjson

from nearrpc.contracts import (
    BUSY,
    CANCELLED,
    DEADLINE,
    MEMORY,
    SHUTDOWN,
    SLICE,
    ExecutionInterrupted,
    Interrupt,
    SliceExhausted,
    StateReader,
    ViewContext,
    ViewEngine,
    ViewOutcome,
    default_engine,
)
from nearrpc.contracts.gas import GasCosts
from nearrpc.contracts.host import ValidatorStakes
from nearrpc.methods import errors
from nearrpc.nearcore.base58 import decode_onto
from nearrpc.store import CURRENT_FETCH_BUDGET, FETCHES_PER_CALL, FetchBudget, ServingReader, StoredBlock


class CallUpstream(Protocol):
    """An upstream node's `query call_function`, for a block it holds."""

    async def call_function(self, account_id: str, method_name: str, args: bytes, block: StoredBlock) -> bytes:
        """The upstream's `query call_function` result JSON for `block`'s hash (CallResult:
        result, logs, block_height, block_hash), verbatim; raises RpcError as it answered."""
        ...


class CallVerifier(Protocol):
    """A second opinion on each view call answered here (a fork's `--verify-calls`)."""

    async def differs(self, account_id: str, method_name: str, args: bytes, block: StoredBlock, local: bytes) -> bool:
        """Whether the other answer to the same call differs from `local` (query's form: a
        failed call is its result with an `error` text); a difference is logged by the verifier,
        and no answer to compare with is no difference. Never raises: the local answer stands."""
        ...


class ChangesUpstream(Protocol):
    """An upstream node's answers to the changes methods, for a block it holds (a fork does not
    hold every row, so changes derived from its rows would leave some out)."""

    async def changes(self, method: str, request: dict[str, Any], block: StoredBlock) -> bytes:
        """The upstream's result JSON for `method` at `block`'s hash, the block `request` (the
        request as asked, in JSON form) refers to, verbatim; raises RpcError as it answered."""
        ...


@dataclass(frozen=True)
class ViewCallMetrics:
    """Where the counts go (the HTTP room's Prometheus counters): `call(path, reason)` per
    answered call (path "local" or "upstream"), `difference()` per verify mismatch."""

    call: Callable[[str, str], None]
    difference: Callable[[], None]


# Views that need more than a slice run on threads of their own: there a view waits on the
# event loop for each storage read, so sharing the default executor with the loop's own blocking
# work could starve both. Two lanes (issue 43 item 1): a call begins on the fast lane (two
# threads); one still running `SLOW_AFTER` seconds after its contract began is stopped there and
# run again, whole (a view has no side effects), on the slow lane, two threads at a lowered OS
# priority; at most `MAX_SLOW_CALLS` calls are in the slow lane (running or waiting), a call that
# finds it full is refused at once (BUSY). A method that went slow goes to the slow lane at once
# next time, until a run of it there is quick again (a fork's call once its storage is fetched).
# So no number of slow calls holds a fresh one for more than a fast lane's slice, nor takes the
# CPU from the event loop's answers. Instances run at most on the four threads, each within
# nearcore's `max_memory_pages`.
VIEW_WORKERS: Final = 2
SLOW_WORKERS: Final = 2
SLOW_AFTER: Final = 0.1
MAX_SLOW_CALLS: Final = 8  # `serve --max-slow-view-calls`
SLOW_NICENESS: Final = 10  # the slow lane's threads yield the CPU to the loop and the fast lane
# A view over a store whose reads never wait runs first on the event loop, within a slice: about
# a millisecond of instructions (5 Tgas at regular_op_cost is ~6 million; Wasmtime runs ~5 per
# ns, instrumented for gas) and at most 256 host calls (each a few microseconds; a storage read some tens).
# One that needs more is run again, whole, on a worker thread: a view has no side effects.
INLINE_SLICE_GAS: Final = 5 * 10**12
INLINE_HOST_CALLS: Final = 256
# The wall-clock deadline of a view call run on a worker, from the moment a worker takes it up
# (its wait for one is not counted; the slow lane's wait is bounded by MAX_SLOW_CALLS), beside
# its gas limit: a gas-limit loop takes about 2.4 s on a shared 2-core machine, a call whose
# storage reads wait on a fork's upstream may take far longer. `serve --view-call-timeout` sets
# it (`use_view_call_timeout`).
VIEW_CALL_TIMEOUT: Final = 10.0
_call_timeout: list[float] = [VIEW_CALL_TIMEOUT]  # this process's, set by `serve`
_max_slow_calls: list[int] = [MAX_SLOW_CALLS]
_fetches_per_call: list[int] = [FETCHES_PER_CALL]  # upstream requests one call may cause (a fork's)


def use_view_call_timeout(seconds: float) -> None:
    """The deadline of the view calls of runners made from now on in this process."""
    _call_timeout[0] = seconds


def use_max_slow_calls(calls: int) -> None:
    """The slow lane's bound of the runners made from now on in this process."""
    _max_slow_calls[0] = calls


def use_fetches_per_call(fetches: int) -> None:
    """The upstream requests one call of the runners made from now on may cause."""
    _fetches_per_call[0] = fetches


def _lower_priority() -> None:
    """A slow-lane thread's initializer: a higher nice value for this thread alone (Linux sets it
    per thread); where that is refused, the thread runs at the process's priority."""
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), SLOW_NICENESS)


# what run_view is given: code, code hash, method, args, context, state, costs
_Call = tuple[bytes, str, str, bytes, ViewContext, StateReader, GasCosts]


def _run_on_worker(
    engine: ViewEngine,
    interrupt: Interrupt,
    timeout: float,
    slice_seconds: float | None,
    fetches: FetchBudget,
    call: _Call,
) -> ViewOutcome:
    """The call on the worker that took it up: its clock starts now; the reads it hands to the
    event loop carry its fetch budget (a context variable, copied with each)."""
    interrupt.begin(timeout, slice_seconds)
    code, code_hash, method_name, args, context, state, costs = call
    token = CURRENT_FETCH_BUDGET.set(fetches)
    try:
        return engine.run_view(code, code_hash, method_name, args, context, state, costs, None, None, interrupt)
    finally:
        CURRENT_FETCH_BUDGET.reset(token)


# methods (code hash, name) whose last call ran out of its slice: their next calls go to a
# worker at once instead of spending a slice first (a bounded set, the oldest forgotten)
KEPT_LONG_METHODS: Final = 256


class _LoopState(StateReader):
    """Storage reads from the worker thread, answered by the reader on the event loop. A read
    waits at most until the call's deadline, and one in flight when the call is stopped is
    cancelled (a fork's fetch for it among them): ExecutionInterrupted. One in flight when the
    call's fast-lane slice ends is kept for its run on the slow lane, which reads the same keys."""

    def __init__(
        self,
        reader: ServingReader,
        account_id: str,
        height: int,
        loop: asyncio.AbstractEventLoop,
        interrupt: Interrupt,
    ) -> None:
        self._reader = reader
        self._account_id = account_id
        self._height = height
        self._loop = loop
        self._interrupt = interrupt
        self._kept: dict[bytes, concurrent.futures.Future[bytes | None]] = {}  # reads left at a slice's end

    def storage_read(self, key: bytes) -> bytes | None:
        interrupt = self._interrupt
        interrupt.check()
        future = self._kept.pop(key, None)
        if future is None:
            read = self._reader.contract_value(self._account_id, key, self._height)
            future = asyncio.run_coroutine_threadsafe(read, self._loop)
        forget = interrupt.on_stop(future.cancel)
        try:
            return future.result(interrupt.remaining())
        except concurrent.futures.CancelledError:
            raise ExecutionInterrupted(interrupt.reason() or CANCELLED) from None
        except TimeoutError:
            if future.done():
                raise  # the read's own failure
            reason = interrupt.reason() or DEADLINE
            if reason == SLICE:  # the call goes on in the slow lane: the read is still wanted
                self._kept[key] = future
            else:
                future.cancel()
            raise ExecutionInterrupted(reason) from None
        finally:
            forget()

    def abandon(self) -> None:
        """The call has ended: a read kept for a run that will not come is cancelled."""
        kept, self._kept = self._kept, {}
        for future in kept.values():
            future.cancel()


class _WorkerState(StateReader):
    """Storage reads on the worker thread itself, by a reader whose lookups never wait (SQLite's,
    on the thread's own connection): no trip to the event loop per read. A stopped call ends at
    its next read, as through the loop."""

    def __init__(
        self, read: Callable[[str, bytes, int], bytes | None], account_id: str, height: int, interrupt: Interrupt
    ) -> None:
        self._read = read
        self._account_id = account_id
        self._height = height
        self._interrupt = interrupt

    def storage_read(self, key: bytes) -> bytes | None:
        self._interrupt.check()
        return self._read(self._account_id, key, self._height)


class _InlineState(StateReader):
    """Storage reads answered at once by a reader that never waits (on the event loop)."""

    def __init__(self, read: Callable[[str, bytes, int], bytes | None], account_id: str, height: int) -> None:
        self._read = read
        self._account_id = account_id
        self._height = height

    def storage_read(self, key: bytes) -> bytes | None:
        return self._read(self._account_id, key, self._height)


class _EpochStakes:
    """The validators' stakes of an epoch (the `validators` host functions, nearcore's
    EpochInfoProvider::validator_stake): its stored validators record's current validators, read
    when a contract first asks and kept per epoch. On the event loop (a sliced run) a read that
    would wait is SliceExhausted: the call runs again on a worker, which waits for it."""

    def __init__(
        self, reader: ServingReader, epoch_id: str, loop: asyncio.AbstractEventLoop, kept: dict[str, Mapping[str, int]]
    ) -> None:
        self._reader = reader
        self._epoch_id = epoch_id
        self._loop = loop
        self._kept = kept

    def reads(
        self, reader: ServingReader, epoch_id: str, loop: asyncio.AbstractEventLoop, kept: dict[str, Mapping[str, int]]
    ) -> bool:
        """Whether these are the stakes a call with these would read."""
        return self._reader is reader and self._epoch_id == epoch_id and self._loop is loop and self._kept is kept

    def stakes(self) -> Mapping[str, int] | None:
        kept = self._kept.get(self._epoch_id)
        if kept is not None:
            return kept
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass  # a worker thread: it may wait
        else:
            raise SliceExhausted
        record = asyncio.run_coroutine_threadsafe(self._reader.validators(self._epoch_id), self._loop).result()
        if record is None:
            return None
        current = orjson.loads(record.view_json).get("current_validators") or []
        stakes = {str(validator["account_id"]): int(validator["stake"]) for validator in current}
        while len(self._kept) >= KEPT_EPOCH_STAKES:
            self._kept.pop(next(iter(self._kept)))
        self._kept[self._epoch_id] = stakes
        return stakes


KEPT_EPOCH_STAKES: Final = 16


class ViewRunner:
    """Runs view calls: on the event loop within a slice where the store reads without
    waiting and the module is compiled already, else (or when the slice runs out) on the fast
    lane's workers, and a call that stays long there on the slow lane's."""

    def __init__(
        self, workers: int = VIEW_WORKERS, call_timeout: float | None = None, max_slow_calls: int | None = None
    ) -> None:
        self._workers = workers
        # the deadline of a call run on a worker (the process's, `use_view_call_timeout`, by default)
        self.call_timeout = _call_timeout[0] if call_timeout is None else call_timeout
        self.max_slow_calls = _max_slow_calls[0] if max_slow_calls is None else max_slow_calls
        self.slow_after = SLOW_AFTER  # seconds of running on the fast lane before the slow lane
        self.fetches_per_call = _fetches_per_call[0]
        self._running: set[Interrupt] = set()  # the calls on (or waiting for) a worker
        self._pool: ThreadPoolExecutor | None = None  # the fast lane, made at the first call that needs it
        self._slow_pool: ThreadPoolExecutor | None = None
        self.slow_calls = 0  # calls in the slow lane now, running or waiting
        self._closed = False
        self._long: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._slow: OrderedDict[tuple[str, str], None] = OrderedDict()  # methods that went slow
        self.inline_runs = 0  # answered on the loop
        self.slices_run_out = 0  # started on the loop, then run again on a worker
        self.threaded_runs = 0  # run on a worker thread (after a slice that ran out, or at once)
        self.slow_runs = 0  # of those, run on the slow lane
        self.refused = 0  # refused: the slow lane was full, or the memory budget
        self.interrupted = 0  # stopped by their deadline or the server's shutdown
        self._stakes: dict[str, Mapping[str, int]] = {}  # per epoch id, for the validator host functions

    def validators(self, reader: ServingReader, epoch_id: str) -> ValidatorStakes:
        """The stakes of `epoch_id` as this runner's calls read them through `reader` on the
        running loop: a context holding them (`view_context`) is run as it is, where `run` would
        otherwise make a copy of the context bound to them at each call."""
        return _EpochStakes(reader, epoch_id, asyncio.get_running_loop(), self._stakes)

    async def run(
        self,
        reader: ServingReader,
        code: bytes,
        code_hash: str,
        method_name: str,
        args: bytes,
        context: ViewContext,
        costs: GasCosts,
    ) -> ViewOutcome:
        engine = default_engine()
        loop = asyncio.get_running_loop()
        stakes = context.validators
        if not (isinstance(stakes, _EpochStakes) and stakes.reads(reader, context.epoch_id, loop, self._stakes)):
            context = replace(context, validators=_EpochStakes(reader, context.epoch_id, loop, self._stakes))
        inline = reader.inline_contract_values()
        # a module not compiled yet is compiled on a thread: compiling a large contract takes long
        method = (code_hash, method_name)
        if inline is not None and method not in self._long and engine.has_compiled(code_hash, costs):
            state: StateReader = _InlineState(inline, context.account_id, context.block_height)
            try:
                outcome = engine.run_view(
                    code, code_hash, method_name, args, context, state, costs, INLINE_SLICE_GAS, INLINE_HOST_CALLS
                )
            except SliceExhausted:
                self.slices_run_out += 1
                _remember(self._long, method)
            else:
                self.inline_runs += 1
                return outcome
        if self._closed:
            raise _shutting_down()
        interrupt = Interrupt()
        task = asyncio.current_task()
        if task is not None:
            _BY_TASK[task] = interrupt  # the request's task: its connection may stop it (stop_calls_of)
        loop_state = _LoopState(reader, context.account_id, context.block_height, loop, interrupt)
        # SQLite's reads run on the worker thread itself; a reader whose reads wait, through the loop
        state = (
            loop_state if inline is None else _WorkerState(inline, context.account_id, context.block_height, interrupt)
        )
        call: _Call = (code, code_hash, method_name, args, context, state, costs)
        fetches = FetchBudget(self.fetches_per_call)  # both its runs together
        self.threaded_runs += 1
        self._running.add(interrupt)
        try:
            if method not in self._slow:
                try:
                    return await self._on_lane(False, interrupt, fetches, call)
                except ExecutionInterrupted as stopped:
                    if stopped.reason != SLICE:
                        raise
                _remember(self._slow, method)
            outcome = await self._slow_lane(interrupt, fetches, call)
            if time.monotonic() - interrupt.began < self.slow_after:
                self._slow.pop(method, None)  # quick now (e.g. its storage fetched): the fast lane again
            return outcome
        except asyncio.CancelledError:
            interrupt.stop(CANCELLED)  # nobody waits for the answer
            raise
        except ExecutionInterrupted as stopped:
            if stopped.reason in (BUSY, MEMORY):
                self.refused += 1
            else:
                self.interrupted += 1
            raise
        finally:
            loop_state.abandon()
            self._running.discard(interrupt)
            if task is not None and _BY_TASK.get(task) is interrupt:
                del _BY_TASK[task]

    async def _slow_lane(self, interrupt: Interrupt, fetches: FetchBudget, call: _Call) -> ViewOutcome:
        """The call run on the slow lane, if it has room (else ExecutionInterrupted BUSY)."""
        if self.slow_calls >= self.max_slow_calls:
            raise ExecutionInterrupted(BUSY)
        self.slow_calls += 1
        self.slow_runs += 1
        try:
            return await self._on_lane(True, interrupt, fetches, call)
        finally:
            self.slow_calls -= 1

    async def _on_lane(self, slow: bool, interrupt: Interrupt, fetches: FetchBudget, call: _Call) -> ViewOutcome:
        if self._closed:
            raise ExecutionInterrupted(SHUTDOWN)
        if slow:
            if self._slow_pool is None:
                self._slow_pool = ThreadPoolExecutor(
                    SLOW_WORKERS, thread_name_prefix="nearrpc-view-slow", initializer=_lower_priority
                )
            pool = self._slow_pool
        else:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="nearrpc-view")
            pool = self._pool
        slice_seconds = None if slow else self.slow_after
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            pool, _run_on_worker, default_engine(), interrupt, self.call_timeout, slice_seconds, fetches, call
        )

    def close(self) -> None:
        """End the worker threads (at the server's shutdown): calls queued and not started are
        dropped; one running is interrupted (within an epoch tick, or its storage read cancelled)."""
        self._closed = True
        for interrupt in list(self._running):
            interrupt.stop(SHUTDOWN)
        for pool in (self._pool, self._slow_pool):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        self._pool = self._slow_pool = None


def _remember(methods: OrderedDict[tuple[str, str], None], method: tuple[str, str]) -> None:
    """Add `method` to a bounded set (the oldest forgotten)."""
    methods[method] = None
    methods.move_to_end(method)
    while len(methods) > KEPT_LONG_METHODS:
        methods.popitem(last=False)


def _shutting_down() -> errors.RpcError:
    return errors.internal_error("the server is shutting down: it runs no more view calls")


def interrupted_error(reason: str) -> errors.RpcError:
    """The answer to a call stopped for `reason` (ExecutionInterrupted): past its deadline,
    nearcore's query timeout; refused (the slow lane full, the memory budget), the node's own
    failure, INTERNAL_ERROR saying which; stopped with the server, the shutdown's INTERNAL_ERROR
    (a call whose client went away is answered the same, to nobody)."""
    if reason == DEADLINE:
        return errors.view_call_timeout()
    if reason == BUSY:
        return errors.internal_error("too many slow view calls are running or waiting (serve --max-slow-view-calls)")
    if reason == MEMORY:
        return errors.internal_error("the view calls in flight hold their memory budget (serve --view-memory-mb)")
    return _shutting_down()


# the call on a worker of each request task (a task runs one call at a time)
_BY_TASK: dict[asyncio.Task[Any], Interrupt] = {}


def stop_calls_of(task: asyncio.Task[Any], reason: str = CANCELLED) -> bool:
    """Stop the view call `task` waits for, if any, for `reason`: the HTTP room calls this when
    a connection is lost before its answer (CANCELLED: its client went away) and when the server
    begins to stop (SHUTDOWN); whether there was one."""
    interrupt = _BY_TASK.get(task)
    if interrupt is None:
        return False
    interrupt.stop(reason)
    return True


@dataclass(frozen=True)
class BlockFacts:
    """What a view reads of its block's JSON: the timestamp and its chunks (parsed once per
    block)."""

    timestamp: int
    chunks: tuple[Mapping[str, Any], ...]
    _roots: dict[int, bytes] = field(default_factory=dict)  # decoded, per shard asked

    def state_root(self, shard_id: int) -> bytes:
        """The 32 bytes of the `prev_state_root` of the shard's chunk (zeros without one)."""
        decoded = self._roots.get(shard_id)
        if decoded is None:
            root = next((chunk["prev_state_root"] for chunk in self.chunks if chunk.get("shard_id") == shard_id), None)
            decoded = self._roots[shard_id] = bytes(32) if root is None else decode_onto(root, 32)
        return decoded


def block_facts(block: StoredBlock) -> BlockFacts:
    view: dict[str, Any] = orjson.loads(block.view_json)
    return BlockFacts(int(view["header"]["timestamp"]), tuple(view.get("chunks", [])))


def view_context(
    account_id: str,
    account: Mapping[str, Any],
    block: StoredBlock,
    facts: BlockFacts,
    shard_id: int,
    epoch_height: int,
    validators: ValidatorStakes | None = None,
) -> ViewContext:
    """The VMContext nearcore builds for a view (runtime state_viewer `call_function`): the block's
    height and timestamp, the account's balances and storage usage at the block (its parsed
    view), and the state root as the random seed: here the `prev_state_root` of the account's
    shard's chunk in the block (the root the chunk was applied on; the store keeps no trie of
    its own). `validators`: the epoch's stakes as the runner reads them (`ViewRunner.validators`;
    None: the runner binds them at each run)."""
    return ViewContext(
        account_id=account_id,
        block_height=block.height,
        block_timestamp=facts.timestamp,
        epoch_height=epoch_height,
        account_balance=int(account["amount"]),
        account_locked_balance=int(account["locked"]),
        storage_usage=int(account["storage_usage"]),
        random_seed=facts.state_root(shard_id),
        epoch_id=block.epoch_id,
        validators=validators,
    )


def call_result(outcome: ViewOutcome, height: int, block_hash: str) -> bytes:
    """CallResult flattened with the block (jsonrpc-primitives RpcCallFunctionResponse, query's
    RpcQueryResponse): `result` as a list of byte values, then `logs`, `block_height`,
    `block_hash`."""
    return orjson.dumps({
        "result": list(outcome.result),
        "logs": outcome.logs,
        "block_height": height,
        "block_hash": block_hash,
    })  # fmt: skip


# state_viewer `view_state`: the per-page caps of a paginated listing (an item count, and a soft
# byte budget over whole trie keys and values, checked before each item)
MAX_PAGE_ITEMS: Final = 10_000
MAX_PAGE_BYTES: Final = 50_000


def state_page(
    account_id: str, rows: list[tuple[bytes, bytes]], after_key: bytes | None, limit: int | None
) -> tuple[list[tuple[bytes, bytes]], bytes | None]:
    """One page of a paginated listing from the rows in key order (from the prefix, or the
    account's whole state when resuming after `after_key`): the items kept and the `last_key`
    to resume after (None when nothing is left). A trie key is the column byte, the account id,
    a separator and the storage key, and its whole length counts against the byte budget."""
    item_cap = min(limit or MAX_PAGE_ITEMS, MAX_PAGE_ITEMS)
    trie_overhead = len(account_id.encode()) + 2
    kept: list[tuple[bytes, bytes]] = []
    used = 0
    for key, value in rows:
        if after_key is not None and key <= after_key:
            continue
        if len(kept) >= item_cap or used >= MAX_PAGE_BYTES:
            return kept, kept[-1][0] if kept else None
        used += trie_overhead + len(key) + len(value)
        kept.append((key, value))
    return kept, None


def state_result(items: list[tuple[bytes, bytes]], last_key: bytes | None, height: int, block_hash: str) -> bytes:
    """ViewStateResult flattened with the block: `values` ({key, value} in base64), `proof`
    only when not empty (never here: no trie), `last_key` only where a page ends with more
    left, then `block_height`, `block_hash`."""
    document: dict[str, object] = {
        "values": [
            {"key": base64.b64encode(key).decode(), "value": base64.b64encode(value).decode()} for key, value in items
        ]
    }
    if last_key is not None:
        document["last_key"] = base64.b64encode(last_key).decode()
    document["block_height"] = height
    document["block_hash"] = block_hash
    return orjson.dumps(document)
