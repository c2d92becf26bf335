"""`ForkMisses`: what every lookup of a fork does when the store cannot answer it.

The upstream is asked once per missing key however many lookups wait for it (single flight),
within the miss's deadline, from a node checked to serve the store's chain; its answer is checked
(a refused answer is an UpstreamError) and kept in one batch through the fork's writer. The
lookups themselves, by concern: `blocks.py`, `accounts.py`, `records.py`; `reader.py` composes
them into `ForkReader`, which sets the attributes declared here.

- Single flight: concurrent lookups of one missing key share one upstream request and one write;
  what was fetched is remembered for `_SETTLE_SECONDS` (the serving reader may still be reading
  a snapshot from before the write).
- A view call's misses are capped (`store.fetch_budget`: each request it starts spends one of its
  budget; past it, FetchCapReached).
- Each miss has a deadline (`miss_timeout`, retries included): past it, or when the upstream
  fails, the lookup raises UpstreamError (the request answers INTERNAL_ERROR) and nothing is kept.
  A hit never waits on the upstream.
- Before its first write, and again every `_CHAIN_SECONDS` while it writes, a worker checks that
  the upstream serves the store's chain (redirects are never followed: `RpcClient`).
- An "absent" mark (a skipped height, an unknown hash or account) is kept only from a
  nearcore-shaped error answer (a structured cause: `says`).
"""

from __future__ import annotations

import asyncio
import binascii
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, Generic, TypeVar

import orjson

from nearrpc.fork.upstream import Upstream, UpstreamError, UpstreamUnreachable
from nearrpc.fork.writer import ForkWriter, Keep
from nearrpc.ingest.rpc_client import RpcReply
from nearrpc.spec import SchemaViolation
from nearrpc.store import CommitListener, ServingReader, spend_fetch

T = TypeVar("T")

# How long what a miss fetched is served from memory: longer than a serving reader's snapshot
# lasts (1 ms for SQLite) and than a PostgreSQL replica's change poll (200 ms).
_SETTLE_SECONDS: Final = 2.0
_SETTLED_KEYS: Final = 10_000  # bounded: past it, the oldest are dropped
_REFUSED_ANSWERS: Final = (SchemaViolation, KeyError, TypeError, ValueError, binascii.Error)
# How long a chain check holds: a node behind the same address may be replaced by another's.
_CHAIN_SECONDS: Final = 30.0


# observe(outcome): "hit" or "miss", one per lookup that could have needed the upstream
LookupObserver = Callable[[str], None]


def says(reply: RpcReply, *causes: str) -> bool:
    """Whether the node answered one of `causes` as nearcore answers it (a structured cause):
    what an "absent" mark may be kept from."""
    cause = reply.error.get("cause") if reply.error is not None else None
    return isinstance(cause, dict) and cause.get("name") in causes


class Bounded(dict[str, T], Generic[T]):
    """A dict that forgets everything when it grows past its bound (what it holds is a hint)."""

    def __init__(self, bound: int) -> None:
        super().__init__()
        self._bound = bound

    def remember(self, key: str, value: T) -> None:
        if len(self) >= self._bound:
            self.clear()
        self[key] = value


class ForkMisses:
    """Single flight, deadlines and the upstream's checked answers, for `ForkReader`'s lookups."""

    local: ServingReader
    upstream: Upstream
    _writer: ForkWriter
    _miss_timeout: float
    _observe: LookupObserver | None
    _entered: bool
    _running: dict[str, asyncio.Task[Any]]
    _waiters: dict[str, int]
    _writing: set[str]
    _settled: dict[str, tuple[float, Any]]
    _chain_checked_until: float

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
            spend_fetch()  # a view call's requests are capped (FetchCapReached); joining one in flight is free
            self._count("miss")
            task = asyncio.get_running_loop().create_task(self._fetch_and_keep(key, fetch))
            self._running[key] = task
            task.add_done_callback(lambda done: self._settle(key, done, keep))
        # shielded: a request that goes away does not cancel what the others wait for; the last
        # one to go cancels it (a view call stopped, its client gone: nobody needs the answer),
        # unless its answer is being written (a write once started is never abandoned half way)
        self._waiters[key] = self._waiters.get(key, 0) + 1
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if self._waiters[key] == 1 and not task.done() and key not in self._writing:
                task.cancel()
            raise
        finally:
            left = self._waiters[key] - 1
            if left:
                self._waiters[key] = left
            else:
                del self._waiters[key]

    async def _fetch_and_keep(self, key: str, fetch: Callable[[], Awaitable[tuple[T, Keep | None]]]) -> T:
        try:
            async with asyncio.timeout(self._miss_timeout):
                await self._check_chain()
                value, writes = await fetch()
        except TimeoutError:
            raise UpstreamUnreachable(
                f"{self.upstream.address} gave no answer for {key} within {self._miss_timeout:g} s (the miss timeout)"
            ) from None
        if writes is not None:  # after the deadline: a write once started is never abandoned half way
            self._writing.add(key)
            try:
                version = await self._writer.write(writes)
            except _REFUSED_ANSWERS as refused:
                raise UpstreamError(f"{self.upstream.address}: the answer for {key} is refused: {refused}") from None
            finally:
                self._writing.discard(key)
            if isinstance(self.local, CommitListener):
                # its next lookup reads the commit (SQLite's read snapshot of up to a millisecond
                # ends): a sandboxed fork reads the store right after its fetch (accounts.py)
                self.local.committed(version)
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
