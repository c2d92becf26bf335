"""Contract view calls answered from stored state: `call_function` runs the account's code on
the execution room (nearrpc.contracts) in a worker thread, reading storage through the store's
reader; `view_state` lists the stored contract state under a prefix.

`CallUpstream` is the hook a fork provides: where local execution cannot run (a host function
the executor lacks) the handlers answer its `call_function` result verbatim; with
`verify_calls` they ask it for every local answer too and count each difference.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final, Protocol

import orjson

from nearrpc.contracts import StateReader, ViewContext, ViewOutcome, run_view
from nearrpc.contracts.gas import GasCosts
from nearrpc.nearcore.base58 import decode_onto
from nearrpc.store import ServingReader, StoredBlock


class CallUpstream(Protocol):
    """An upstream node's `query call_function`, for a block it holds."""

    async def call_function(self, account_id: str, method_name: str, args: bytes, block: StoredBlock) -> bytes:
        """The upstream's `query call_function` result JSON for `block`'s hash (CallResult:
        result, logs, block_height, block_hash), verbatim; raises RpcError as it answered."""
        ...


@dataclass(frozen=True)
class ViewCallMetrics:
    """Where the counts go (the HTTP room's Prometheus counters): `call(path, reason)` per
    answered call (path "local" or "upstream"), `difference()` per verify mismatch."""

    call: Callable[[str, str], None]
    difference: Callable[[], None]


# Views run on threads of their own: a view waits on the event loop for each storage read, so
# sharing the default executor with the loop's own blocking work could starve both. Two threads
# keep an infinite loop (ended by the gas limit) from holding every other call back.
VIEW_WORKERS: Final = 2


class _LoopState(StateReader):
    """Storage reads from the worker thread, answered by the reader on the event loop."""

    def __init__(self, reader: ServingReader, account_id: str, height: int, loop: asyncio.AbstractEventLoop) -> None:
        self._reader = reader
        self._account_id = account_id
        self._height = height
        self._loop = loop

    def storage_read(self, key: bytes) -> bytes | None:
        read = self._reader.contract_value(self._account_id, key, self._height)
        return asyncio.run_coroutine_threadsafe(read, self._loop).result()


class ViewRunner:
    """Runs view calls on a small pool of worker threads."""

    def __init__(self, workers: int = VIEW_WORKERS) -> None:
        self._workers = workers
        self._pool: ThreadPoolExecutor | None = None  # made at the first call

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
        loop = asyncio.get_running_loop()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="nearrpc-view")
        state = _LoopState(reader, context.account_id, context.block_height, loop)
        return await loop.run_in_executor(
            self._pool, run_view, code, code_hash, method_name, args, context, state, costs
        )


def view_context(
    account_id: str, account_view: bytes, block: StoredBlock, shard_id: int, epoch_height: int
) -> ViewContext:
    """The VMContext nearcore builds for a view (runtime state_viewer `call_function`): the block's
    height and timestamp, the account's balances and storage usage at the block, and the state
    root as the random seed: here the `prev_state_root` of the account's shard's chunk in the
    block (the root the chunk was applied on; the store keeps no trie of its own)."""
    account = orjson.loads(account_view)
    header: dict[str, Any] = orjson.loads(block.view_json)["header"]
    chunks: list[dict[str, Any]] = orjson.loads(block.view_json).get("chunks", [])
    root = next((chunk["prev_state_root"] for chunk in chunks if chunk.get("shard_id") == shard_id), None)
    return ViewContext(
        account_id=account_id,
        block_height=block.height,
        block_timestamp=int(header["timestamp"]),
        epoch_height=epoch_height,
        account_balance=int(account["amount"]),
        account_locked_balance=int(account["locked"]),
        storage_usage=int(account["storage_usage"]),
        random_seed=bytes(32) if root is None else decode_onto(root, 32),
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
