"""A JSON-RPC client for a live NEAR node: bounded concurrency, bounded retries.

Transport errors and HTTP 408, 429 and 5xx answers are retried with exponential backoff
(honouring Retry-After); any other answer is a JSON-RPC response, returned as parsed with
key order kept. After the last retry the call fails with a one-line IngestError.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import httpx
import orjson

from service.ingest.errors import IngestError

_RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
_MAX_RETRY_AFTER = 30.0


@dataclass(frozen=True, slots=True)
class RpcReply:
    result: Any  # the parsed result (None when `error` is set)
    error: dict[str, Any] | None

    @property
    def cause(self) -> str | None:
        """The error's cause name (UNKNOWN_BLOCK, UNKNOWN_ACCOUNT, METHOD_NOT_FOUND, ...)."""
        if self.error is None:
            return None
        cause = self.error.get("cause")
        name = cause.get("name") if isinstance(cause, dict) else self.error.get("name")
        return str(name) if name is not None else None

    def describe(self) -> str:
        if self.error is None:
            return "a result"
        data = self.error.get("data") or self.error.get("message") or ""
        return f"{self.cause}: {data}" if data else str(self.cause)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    retries: int = 5  # further attempts after the first
    backoff: float = 0.5  # seconds before the first retry; doubles each time
    max_backoff: float = 10.0
    timeout: float = 30.0  # per request


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return min(float(value), _MAX_RETRY_AFTER) if value is not None else None
    except ValueError:
        return None


def _parse(body: bytes) -> RpcReply | None:
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(answer, dict) or ("result" not in answer and "error" not in answer):
        return None
    error = answer.get("error")
    if error is not None:
        return RpcReply(None, error if isinstance(error, dict) else {"name": str(error)})
    return RpcReply(answer["result"], None)


class RpcClient:
    """`async with RpcClient(url) as rpc: reply = await rpc.call("block", {"block_id": 5})`."""

    def __init__(
        self,
        url: str,
        *,
        concurrency: int = 4,
        policy: RetryPolicy | None = None,
        on_request: Callable[[], None] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._url = url
        self._concurrency = max(1, concurrency)
        self._policy = policy or RetryPolicy()
        self._on_request = on_request
        self._sleep = sleep
        self._gate = asyncio.Semaphore(self._concurrency)
        self._client: httpx.AsyncClient | None = None
        self._next_id = 0
        self.requests = 0
        self.retries = 0

    async def __aenter__(self) -> RpcClient:
        limits = httpx.Limits(max_connections=self._concurrency, max_keepalive_connections=self._concurrency)
        self._client = httpx.AsyncClient(timeout=self._policy.timeout, limits=limits)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._client is not None:
            await self._client.aclose()

    def _delay(self, attempt: int, hint: float | None) -> float:
        policy = self._policy
        delay = min(policy.backoff * float(2**attempt), policy.max_backoff)
        delay *= 0.75 + random.random() / 2
        return max(delay, hint or 0.0)

    async def call(self, method: str, params: Any) -> RpcReply:
        """One JSON-RPC call, retried on transport errors and on 408/429/5xx."""
        if self._client is None:
            raise RuntimeError("use the client inside `async with`")
        self._next_id += 1
        body = orjson.dumps({"jsonrpc": "2.0", "id": f"nearrpc-import-{self._next_id}", "method": method,
                             "params": params})
        what = f"{method} {orjson.dumps(params).decode()}"
        problem = ""
        for attempt in range(self._policy.retries + 1):
            hint = None
            async with self._gate:
                self.requests += 1
                if self._on_request is not None:
                    self._on_request()
                try:
                    response = await self._client.post(
                        self._url, content=body, headers={"Content-Type": "application/json"}
                    )
                except httpx.TransportError as exc:
                    problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                else:
                    reply = _parse(response.content)
                    if response.status_code not in _RETRY_STATUSES:
                        if reply is None:
                            raise IngestError(
                                f"{self._url}: {what}: HTTP {response.status_code} without a JSON-RPC response"
                            )
                        return reply
                    problem = f"HTTP {response.status_code}" + (f" ({reply.describe()})" if reply else "")
                    hint = _retry_after(response)
            if attempt < self._policy.retries:
                self.retries += 1
                await self._sleep(self._delay(attempt, hint))
        raise IngestError(f"{self._url}: {what}: {problem}, still after {self._policy.retries} retries")

    async def result(self, method: str, params: Any) -> Any:
        """The call's result; any error answer fails the import."""
        reply = await self.call(method, params)
        if reply.error is not None:
            raise IngestError(f"{self._url}: {method}: the node answered {reply.describe()}")
        return reply.result
