"""The endpoint under test, reached politely: a bounded number of requests, at most `rate`
per second, a timeout per request, and retries of what a busy endpoint answers.

Retried: transport errors and timeouts, HTTP 429, and 5xx answers whose body is not a JSON-RPC
answer (a gateway's or a proxy's). A 5xx that carries a JSON-RPC error is the endpoint's real
answer (nearcore answers INTERNAL_ERROR with 500) and is judged, not retried. Retry-After is
honoured. Every attempt counts against the budget.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Final

import httpx
from tenacity import RetryCallState, RetryError, Retrying, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_exponential_jitter

from nearrpc.urls import public_url, scrub_urls

_MAX_RETRY_AFTER = 30.0
_MAX_BACKOFF = 10.0


class BudgetExhausted(Exception):
    """The next request would exceed the request budget."""


class Unreachable(Exception):
    """The endpoint cannot be checked: no HTTP answer still after the retries, or (to the first
    request) an answer that is no JSON-RPC answer at all. The message is one line."""


def _os_error(exc: BaseException) -> OSError | None:
    seen: BaseException | None = exc
    while seen is not None and not isinstance(seen, OSError):
        seen = seen.__cause__ or seen.__context__
    return seen


# what OpenSSL says when the other side answers a handshake with no TLS at all (plain HTTP)
_NOT_TLS: Final = frozenset({"WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "HTTP_REQUEST", "PACKET_LENGTH_TOO_LONG",
                             "UNEXPECTED_EOF_WHILE_READING", "TLSV1_ALERT_PROTOCOL_VERSION"})  # fmt: skip


def tls_problem(exc: BaseException) -> str | None:
    """Why the TLS handshake failed, in a few words, or None when no TLS failure is behind `exc`.
    A handshake that fails fails the same way again: it is said at once, never retried."""
    seen: BaseException | None = exc
    while seen is not None and not isinstance(seen, ssl.SSLError):
        seen = seen.__cause__ or seen.__context__
    if seen is None:
        return None
    if isinstance(seen, ssl.SSLCertVerificationError):
        return f"the TLS handshake failed: {seen.verify_message or 'the certificate is not trusted'}"
    if seen.reason in _NOT_TLS:
        return "the endpoint does not speak TLS (an http:// URL?)"
    reason = (seen.reason or "").replace("_", " ").lower()
    return f"the TLS handshake failed: {reason or 'no reason given'}"


def transport_problem(exc: httpx.TransportError, timeout: float) -> str:
    """A transport failure in a few lowercase words, without exception names or errno numbers."""
    tls = tls_problem(exc)
    if tls is not None:  # an ssl.SSLError is an OSError whose errno is OpenSSL's, not the system's
        return tls
    if isinstance(exc, httpx.ConnectTimeout):
        return f"no connection within {timeout:g} s"
    if isinstance(exc, httpx.TimeoutException):
        return f"no answer within {timeout:g} s"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "the endpoint closed the connection without an HTTP answer"
    cause = _os_error(exc)
    if isinstance(cause, socket.gaierror):
        return f"cannot connect: {(cause.strerror or 'the host name does not resolve').lower()}"
    if cause is not None and cause.errno and cause.errno > 0:
        return f"cannot connect: {os.strerror(cause.errno).lower()}"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"the connection failed: {text}" if text else "the connection failed"


@dataclass(frozen=True, slots=True)
class Limits:
    max_requests: int
    rate: float  # requests per second, at most
    timeout: float  # seconds per request
    retries: int  # further attempts after the first
    backoff: float = 0.5  # seconds before the first retry, doubling


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request and the endpoint's final answer to it."""

    status: int
    content_type: str
    body: bytes

    def json(self) -> tuple[bool, object]:
        """(True, value) when the body is JSON (big integers kept exact), else (False, None)."""
        try:
            return True, json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            return False, None


def _is_json_rpc(body: bytes) -> bool:
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(value, dict) and value.get("jsonrpc") == "2.0" and ("error" in value or "result" in value)


class _Retryable(Exception):
    def __init__(self, problem: str, exchange: Exchange | None, retry_after: float | None) -> None:
        super().__init__(problem)
        self.exchange = exchange
        self.retry_after = retry_after


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return min(max(float(value), 0.0), _MAX_RETRY_AFTER) if value is not None else None
    except ValueError:
        return None


@dataclass
class Endpoint:
    """`with Endpoint(url, limits) as endpoint: exchange = endpoint.post(body)`."""

    url: str
    limits: Limits
    sleep: Callable[[float], None] = time.sleep
    requests: int = 0  # attempts sent
    retries: int = 0
    _client: httpx.Client | None = field(default=None, init=False)
    _last_start: float | None = field(default=None, init=False)

    def __enter__(self) -> Endpoint:
        self._client = httpx.Client(timeout=self.limits.timeout, follow_redirects=False)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._client is not None:
            self._client.close()

    def _pace(self) -> None:
        """Start requests at least 1/rate seconds apart."""
        now = time.monotonic()
        if self._last_start is not None:
            wait = self._last_start + 1.0 / self.limits.rate - now
            if wait > 0:
                self.sleep(wait)
        self._last_start = time.monotonic()

    def _attempt(self, body: bytes, content_type: str) -> Exchange:
        if self._client is None:
            raise RuntimeError("use the endpoint inside `with`")
        if self.requests >= self.limits.max_requests:
            raise BudgetExhausted(f"the request budget ({self.limits.max_requests}, --max-requests) is spent")
        self._pace()
        self.requests += 1
        try:
            response = self._client.post(self.url, content=body, headers={"Content-Type": content_type})
        except httpx.TransportError as exc:
            tls = tls_problem(exc)
            if tls is not None:
                raise Unreachable(f"cannot reach {public_url(self.url)}: {tls}") from None
            raise _Retryable(scrub_urls(transport_problem(exc, self.limits.timeout)), None, None) from exc
        exchange = Exchange(response.status_code, response.headers.get("content-type", ""), response.content)
        if response.status_code == 429 or (response.status_code >= 500 and not _is_json_rpc(response.content)):
            raise _Retryable(f"HTTP {response.status_code}", exchange, _retry_after(response))
        return exchange

    def _wait(self) -> Callable[[RetryCallState], float]:
        backoff = wait_exponential_jitter(
            initial=self.limits.backoff, max=_MAX_BACKOFF, jitter=self.limits.backoff / 2
        )

        def wait(state: RetryCallState) -> float:
            failure = state.outcome.exception() if state.outcome is not None else None
            hint = failure.retry_after if isinstance(failure, _Retryable) else None
            return max(backoff(state), hint or 0.0)

        return wait

    def _count_retry(self, state: RetryCallState) -> None:
        self.retries += 1

    def post(self, body: bytes, content_type: str = "application/json") -> Exchange:
        """The endpoint's answer to `body`, after the retries a busy endpoint deserves.

        A retryable status that persists is returned as the answer; raises Unreachable when no
        HTTP answer came at all, BudgetExhausted when the budget is spent."""
        retrying = Retrying(
            stop=stop_after_attempt(self.limits.retries + 1),
            wait=self._wait(),
            retry=retry_if_exception_type(_Retryable),
            before_sleep=self._count_retry,
            sleep=self.sleep,
        )
        try:
            exchange: Exchange = retrying(self._attempt, body, content_type)
        except RetryError as exhausted:
            failure = exhausted.last_attempt.exception()
            if not isinstance(failure, _Retryable) or failure.exchange is None:
                retries = self.limits.retries
                still = "" if not retries else f", still after {retries} {'retry' if retries == 1 else 'retries'}"
                raise Unreachable(f"cannot reach {public_url(self.url)}: {failure}{still}") from None
            exchange = failure.exchange
        return exchange
