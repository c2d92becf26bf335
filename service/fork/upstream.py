"""The node a fork reads through: one JSON-RPC client with bounded concurrency, a bounded request
rate and the recorder's retries, its outcomes counted, and its address shown without secrets.

Every request's outcome goes to `observe(method, outcome, seconds)`: `result`, `error` (the
node answered a JSON-RPC error, e.g. UNKNOWN_BLOCK), `unreachable` (transport failures or
non-JSON-RPC answers, after the retries) or `timeout` (the caller's deadline ended it).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from aiolimiter import AsyncLimiter

from nearrpc.ingest.errors import IngestError, NodeUnreachableError
from nearrpc.ingest.rpc_client import DEFAULT_MAX_ANSWER_BYTES, RetryPolicy, RpcClient, RpcReply
from nearrpc.store import StoreError
from nearrpc.urls import public_url, scrub_urls

# observe(method, outcome, seconds): one call per request to the upstream
UpstreamObserver: TypeAlias = Callable[[str, str, float], None]

# How long /status trusts the last outcome before it asks the upstream again.
_PROBE_SECONDS: Final = 5.0


class UpstreamError(StoreError):
    """The upstream could not give an answer to store: unreachable, too slow, of another chain,
    or an answer the spec refuses. A StoreError, so a request answers nearcore's INTERNAL_ERROR."""


class UpstreamUnreachable(UpstreamError):
    """No answer at all from the upstream (unreachable, or none within the miss timeout), as
    opposed to one refused: a fork replayed offline. Still an INTERNAL_ERROR, but where nearcore
    answers a lookup it cannot make with something else (a transaction it does not hold), the
    fork answers that."""


def public_address(url: str) -> str:
    """The upstream's address as shown to clients and logs: scheme, host and port only. User
    names, passwords, paths and queries are where providers put API keys."""
    return public_url(url)


@dataclass(frozen=True, slots=True)
class UpstreamSettings:
    url: str
    concurrency: int  # requests in flight at most
    rate: float  # requests per second at most (0: unbounded)
    policy: RetryPolicy  # per request timeout, retries and backoff, as the recorder's
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES  # a larger answer is refused as it arrives


def _limiter(rate: float) -> AsyncLimiter | None:
    """At most `rate` requests a second (None: no bound). Below one a second, one request per
    1/rate seconds: aiolimiter refuses to acquire more than its whole capacity at once."""
    if rate <= 0:
        return None
    return AsyncLimiter(rate, 1.0) if rate >= 1 else AsyncLimiter(1, 1.0 / rate)


class Upstream:
    """`async with Upstream(settings) as node: reply = await node.call("block", {"block_id": 5})`."""

    def __init__(self, settings: UpstreamSettings, observe: UpstreamObserver | None = None) -> None:
        self.address = public_address(settings.url)
        self._url = settings.url
        self._client = RpcClient(settings.url, settings.policy, concurrency=settings.concurrency,
                                 max_answer_bytes=settings.max_answer_bytes)  # fmt: skip
        self._limiter = _limiter(settings.rate)
        self._observe = observe
        self._last_outcome: tuple[float, bool] | None = None  # (when, answered)

    async def __aenter__(self) -> Upstream:
        await self._client.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._client.__aexit__(None, None, None)

    def _hide(self, text: str) -> str:
        return scrub_urls(text.replace(self._url, self.address))

    async def call(self, method: str, params: Any) -> RpcReply:
        """One JSON-RPC call, retried as the recorder's; UpstreamError when none got an answer.
        Cancelling it (a deadline) counts as a timeout."""
        started = time.perf_counter()
        outcome = "unreachable"
        try:
            if self._limiter is not None:
                await self._limiter.acquire()
            reply = await self._client.call(method, params)
            outcome = "result" if reply.error is None else "error"
            return reply
        except NodeUnreachableError as failure:
            raise UpstreamUnreachable(self._hide(str(failure))) from None
        except IngestError as failure:
            raise UpstreamError(self._hide(str(failure))) from None
        except asyncio.CancelledError:
            outcome = "timeout"
            raise
        finally:
            self._last_outcome = (time.monotonic(), outcome in ("result", "error"))
            if self._observe is not None:
                self._observe(method, outcome, time.perf_counter() - started)

    async def result(self, method: str, params: Any) -> Any:
        """The call's result; an error answer is an UpstreamError."""
        reply = await self.call(method, params)
        if reply.error is not None:
            raise UpstreamError(f"{self.address}: {method}: the node answered {reply.describe()}")
        return reply.result

    async def answers(self, timeout: float) -> bool:
        """Whether the upstream answers now: its last outcome when recent, else a `status` call
        bounded by `timeout` (for /status, which must not hang on a slow upstream)."""
        recent = self._last_outcome
        if recent is not None and time.monotonic() - recent[0] < _PROBE_SECONDS:
            return recent[1]
        try:
            async with asyncio.timeout(timeout):
                await self.call("status", [])
        except (UpstreamError, TimeoutError):
            return False
        return True
