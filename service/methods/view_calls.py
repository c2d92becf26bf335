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
from collections import OrderedDict
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Final, Protocol

import orjson

from nearrpc.contracts import (
    CANCELLED,
    DEADLINE,
    SHUTDOWN,
    ExecutionInterrupted,
    Interrupt,
    SliceExhausted,
    StateReader,
    ViewContext,
    ViewOutcome,
    default_engine,
)
from nearrpc.contracts.gas import GasCosts
from nearrpc.methods import errors
from nearrpc.nearcore.base58 import decode_onto
from nearrpc.store import ServingReader, StoredBlock


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
# work could starve both. Two threads keep an infinite loop (ended by the gas limit) from
# holding every other call back.
VIEW_WORKERS: Final = 2
# A view over a store whose reads never wait runs first on the event loop, within a slice: about
# a millisecond of instructions (5 Tgas at regular_op_cost is ~6 million; Wasmtime runs ~5 per
# ns with fuel) and at most 256 host calls (each a few microseconds; a storage read some tens).
# One that needs more is run again, whole, on a worker thread: a view has no side effects.
INLINE_SLICE_GAS: Final = 5 * 10**12
INLINE_HOST_CALLS: Final = 256
# The wall-clock deadline of a view call run on a worker, from its arrival (waiting for a worker
# counts), beside its gas limit: a gas-limit loop takes about 2.4 s on a shared 2-core machine, a
# call whose storage reads wait on a fork's upstream may take far longer. `serve
# --view-call-timeout` sets it (`use_view_call_timeout`).
VIEW_CALL_TIMEOUT: Final = 10.0
_call_timeout: list[float] = [VIEW_CALL_TIMEOUT]  # this process's, set by `serve`


def use_view_call_timeout(seconds: float) -> None:
    """The deadline of the view calls of runners made from now on in this process."""
    _call_timeout[0] = seconds


# methods (code hash, name) whose last call ran out of its slice: their next calls go to a
# worker at once instead of spending a slice first (a bounded set, the oldest forgotten)
KEPT_LONG_METHODS: Final = 256


class _LoopState(StateReader):
    """Storage reads from the worker thread, answered by the reader on the event loop. A read
    waits at most until the call's deadline, and one in flight when the call is stopped is
    cancelled (a fork's fetch for it among them): ExecutionInterrupted."""

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

    def storage_read(self, key: bytes) -> bytes | None:
        interrupt = self._interrupt
        interrupt.check()
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
            future.cancel()
            raise ExecutionInterrupted(interrupt.reason() or DEADLINE) from None
        finally:
            forget()


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
    waiting and the module is compiled already, else (or when the slice runs out) on a small
    pool of worker threads."""

    def __init__(self, workers: int = VIEW_WORKERS, call_timeout: float | None = None) -> None:
        self._workers = workers
        # the deadline of a call run on a worker (the process's, `use_view_call_timeout`, by default)
        self.call_timeout = _call_timeout[0] if call_timeout is None else call_timeout
        self._running: set[Interrupt] = set()  # the calls on (or waiting for) a worker
        self._pool: ThreadPoolExecutor | None = None  # made at the first call that needs it
        self._closed = False
        self._long: OrderedDict[tuple[str, str], None] = OrderedDict()
        self.inline_runs = 0  # answered on the loop
        self.slices_run_out = 0  # started on the loop, then run again on a worker
        self.threaded_runs = 0  # run on a worker thread (after a slice that ran out, or at once)
        self.interrupted = 0  # stopped by their deadline or the server's shutdown
        self._stakes: dict[str, Mapping[str, int]] = {}  # per epoch id, for the validator host functions

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
                self._long[method] = None
                while len(self._long) > KEPT_LONG_METHODS:
                    self._long.popitem(last=False)
            else:
                self.inline_runs += 1
                return outcome
        if self._closed:
            raise _shutting_down()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="nearrpc-view")
        interrupt = Interrupt(self.call_timeout)
        task = asyncio.current_task()
        if task is not None:
            _BY_TASK[task] = interrupt  # the request's task: its connection may stop it (stop_calls_of)
        state = (
            _LoopState(reader, context.account_id, context.block_height, loop, interrupt)
            if inline is None
            else _WorkerState(inline, context.account_id, context.block_height, interrupt)
        )
        self.threaded_runs += 1
        self._running.add(interrupt)
        try:
            return await loop.run_in_executor(
                self._pool, engine.run_view, code, code_hash, method_name, args, context, state, costs,
                None, None, interrupt,
            )  # fmt: skip
        except asyncio.CancelledError:
            interrupt.stop(CANCELLED)  # nobody waits for the answer
            raise
        except ExecutionInterrupted:
            self.interrupted += 1
            raise
        finally:
            self._running.discard(interrupt)
            if task is not None and _BY_TASK.get(task) is interrupt:
                del _BY_TASK[task]

    def close(self) -> None:
        """End the worker threads (at the server's shutdown): calls queued and not started are
        dropped; one running is interrupted (within an epoch tick, or its storage read cancelled)."""
        self._closed = True
        for interrupt in list(self._running):
            interrupt.stop(SHUTDOWN)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


def _shutting_down() -> errors.RpcError:
    return errors.internal_error("the server is shutting down: it runs no more view calls")


def interrupted_error(reason: str) -> errors.RpcError:
    """The answer to a call stopped for `reason` (ExecutionInterrupted): past its deadline,
    nearcore's query timeout; stopped with the server, the shutdown's INTERNAL_ERROR (a call whose
    client went away is answered the same, to nobody)."""
    return errors.view_call_timeout() if reason == DEADLINE else _shutting_down()


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
    account_id: str, account: Mapping[str, Any], block: StoredBlock, facts: BlockFacts, shard_id: int, epoch_height: int
) -> ViewContext:
    """The VMContext nearcore builds for a view (runtime state_viewer `call_function`): the block's
    height and timestamp, the account's balances and storage usage at the block (its parsed
    view), and the state root as the random seed: here the `prev_state_root` of the account's
    shard's chunk in the block (the root the chunk was applied on; the store keeps no trie of
    its own)."""
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
