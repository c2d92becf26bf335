"""A JSON-RPC client for a live NEAR node: bounded concurrency, bounded retries.

Transport errors and HTTP 408, 429 and 5xx answers are retried with exponential backoff
(honouring Retry-After); any other answer is a JSON-RPC response, returned as parsed with
key order kept. After the last retry the call fails with a one-line IngestError.

Only the node named is asked: a redirect is not followed (it is an answer that is not JSON-RPC),
so an answer never comes from another host, port or chain. An answer over `max_answer_bytes` is
refused as it arrives, never read whole. Messages show the node's URL without its user, path or
query (`nearrpc.urls`), where providers put API keys.

The transport is aiohttp: a fork waits on this client inside every miss, and httpx's async
client cost about 1 ms more per request here (1.2-1.3 ms against 0.37-0.39 ms p50 for the same
uncached `block` requests to a local node, alternated 3 times).
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import aiohttp
import orjson
from tenacity import AsyncRetrying, RetryCallState, RetryError, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_exponential_jitter

from nearrpc.ingest.errors import IngestError, NodeUnreachableError, NotAnRpcEndpointError, one_line
from nearrpc.urls import public_url, scrub_urls

_RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
_JSON_HEADERS = {"Content-Type": "application/json"}
_MAX_RETRY_AFTER = 30.0
# Well above any real answer (a block is tens of kB, a 4 MB contract's code 5.4 MB in base64),
# well below what would take a fork's memory from ~130 MB to gigabytes.
DEFAULT_MAX_ANSWER_BYTES = 32 << 20
_CHUNK = 1 << 16


class AnswerTooLarge(IngestError):
    """An answer over the client's size limit: refused, not retried (it would be as large again)."""


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
    retries: int  # further attempts after the first
    backoff: float  # seconds before the first retry; doubles each time, with jitter
    timeout: float  # per request
    max_backoff: float = 10.0


class _Retryable(Exception):
    """An attempt that may succeed when repeated: what went wrong, the server's hint, and
    whether any HTTP answer came (no answer at all: the node cannot be reached)."""

    def __init__(self, problem: str, retry_after: float | None, *, answered: bool = True) -> None:
        super().__init__(problem)
        self.retry_after = retry_after
        self.answered = answered


def _retry_after(response: aiohttp.ClientResponse) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return min(float(value), _MAX_RETRY_AFTER) if value is not None else None
    except ValueError:
        return None


def os_problem(error: OSError) -> str:
    """An OS error in a few lowercase words ("connection refused", "name or service not
    known"); never "Unknown error -2" (a resolver's error numbers are not errno values)."""
    if isinstance(error, socket.gaierror):
        return (error.strerror or "the host name does not resolve").lower()
    why = (os.strerror(error.errno) if error.errno and error.errno > 0 else error.strerror) or str(error)
    return why[:1].lower() + why[1:] if why else "the connection failed"


def retried(retries: int) -> str:
    """", still after 3 retries" (nothing when none were allowed)."""
    return "" if retries <= 0 else f", still after {retries} {'retry' if retries == 1 else 'retries'}"


def _transport_problem(exc: BaseException, timeout: float) -> str:
    """A transport failure in a few words: no answer in time, no connection, a broken one."""
    if isinstance(exc, TimeoutError | aiohttp.ServerTimeoutError):
        return f"no answer within {timeout:g} s"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return f"cannot connect to {exc.host}:{exc.port}: {os_problem(exc.os_error)}"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the node closed the connection without answering"
    text = one_line(scrub_urls(str(exc)))
    return f"the connection failed: {text}" if text else "the connection failed"


async def _limited_body(response: aiohttp.ClientResponse, limit: int) -> bytes | None:
    """The answer's body, read in chunks; None as soon as it is over `limit` bytes (a declared
    length over it is refused before anything is read)."""
    if response.content_length is not None and response.content_length > limit:
        return None
    body = bytearray()
    async for chunk in response.content.iter_chunked(_CHUNK):
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


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


def _wait(policy: RetryPolicy) -> Callable[[RetryCallState], float]:
    """Exponential backoff with jitter, never shorter than the server's Retry-After."""
    backoff = wait_exponential_jitter(multiplier=policy.backoff, max=policy.max_backoff, jitter=policy.backoff / 2)

    def wait(state: RetryCallState) -> float:
        failure = state.outcome.exception() if state.outcome is not None else None
        hint = failure.retry_after if isinstance(failure, _Retryable) else None
        return max(backoff(state), hint or 0.0)

    return wait


class RpcClient:
    """`async with RpcClient(url, policy) as rpc: reply = await rpc.call("block", {"block_id": 5})`."""

    def __init__(
        self,
        url: str,
        policy: RetryPolicy,
        *,
        concurrency: int,
        on_request: Callable[[], None] | None = None,
        on_retry: Callable[[str], None] | None = None,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
    ) -> None:
        self._url = url
        self.address = public_url(url)  # what messages show
        self._max_answer_bytes = max_answer_bytes
        self._concurrency = max(1, concurrency)
        self._policy = policy
        self._on_request = on_request
        self._on_retry = on_retry
        self._gate = asyncio.Semaphore(self._concurrency)
        self._client: aiohttp.ClientSession | None = None
        self._next_id = 0
        self.requests = 0
        self.retries = 0

    async def __aenter__(self) -> RpcClient:
        connector = aiohttp.TCPConnector(limit=self._concurrency)
        timeout = aiohttp.ClientTimeout(total=self._policy.timeout)
        # no proxy or netrc from the environment: the node named is the node asked
        self._client = aiohttp.ClientSession(connector=connector, timeout=timeout, trust_env=False)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._client is not None:
            await self._client.close()

    async def _attempt(self, client: aiohttp.ClientSession, body: bytes, what: str) -> RpcReply:
        async with self._gate:
            self.requests += 1
            if self._on_request is not None:
                self._on_request()
            try:
                async with client.post(self._url, data=body, headers=_JSON_HEADERS, allow_redirects=False) as response:
                    content = await _limited_body(response, self._max_answer_bytes)
            except (aiohttp.ClientError, TimeoutError) as exc:
                problem = _transport_problem(exc, self._policy.timeout)
                raise _Retryable(problem, None, answered=False) from exc
        if content is None:
            raise AnswerTooLarge(
                f"{self.address}: {what}: the answer is over {self._max_answer_bytes >> 20} MB "
                "(--upstream-max-answer-mb); nothing of it is kept"
            )
        if 300 <= response.status < 400:
            raise NotAnRpcEndpointError(
                f"{self.address}: {what}: HTTP {response.status}, a redirect, which is not followed (only the node "
                "named is asked: give the URL it redirects to)"
            )
        reply = _parse(content)
        if response.status in _RETRY_STATUSES:
            problem = f"HTTP {response.status}" + (f" ({reply.describe()})" if reply else "")
            raise _Retryable(problem, _retry_after(response))
        if reply is None:
            raise NotAnRpcEndpointError(f"{self.address}: {what}: HTTP {response.status} without a JSON-RPC response")
        return reply

    def _count_retry(self, state: RetryCallState) -> None:
        self.retries += 1
        if self._on_retry is not None:
            failure = state.outcome.exception() if state.outcome is not None else None
            wait = state.next_action.sleep if state.next_action is not None else 0.0
            what = state.args[2] if len(state.args) > 2 else "a request"
            self._on_retry(
                f"{what}: {failure}; retry {state.attempt_number} of {self._policy.retries} in {wait:.1f} s"
            )

    async def call(self, method: str, params: Any) -> RpcReply:
        """One JSON-RPC call, retried on transport errors and on 408/429/5xx."""
        if self._client is None:
            raise RuntimeError("use the client inside `async with`")
        self._next_id += 1
        body = orjson.dumps({"jsonrpc": "2.0", "id": f"nearrpc-import-{self._next_id}", "method": method,
                             "params": params})
        what = method if params is None else f"{method} {orjson.dumps(params).decode()}"
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self._policy.retries + 1),
            wait=_wait(self._policy),
            retry=retry_if_exception_type(_Retryable),
            before_sleep=self._count_retry,
        )
        try:
            reply: RpcReply = await retrying(self._attempt, self._client, body, what)
        except RetryError as exhausted:
            problem = exhausted.last_attempt.exception()
            still = retried(self._policy.retries)
            if isinstance(problem, _Retryable) and not problem.answered:
                raise NodeUnreachableError(f"cannot reach {self.address} ({what}): {problem}{still}") from None
            raise IngestError(f"{self.address}: {what}: {problem}{still}") from None
        return reply

    async def result(self, method: str, params: Any) -> Any:
        """The call's result; any error answer fails the import."""
        reply = await self.call(method, params)
        if reply.error is not None:
            raise IngestError(f"{self.address}: {method}: the node answered {reply.describe()}")
        return reply.result
