"""Bounded JSON-RPC load on a loopback server from a few threads, every answer recorded."""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx
import orjson


@dataclass(frozen=True, slots=True)
class Outcome:
    at: float  # seconds since the load started, when the request was sent
    status: int  # HTTP status; 0 for a transport failure (no answer at all)
    what: str  # "result", the JSON-RPC error cause name, or the transport error's type


def block_request(height: int) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": height, "method": "block", "params": {"block_id": height}})


def _what(response: httpx.Response) -> str:
    try:
        body = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        return "not json"
    if "result" in body:
        return "result"
    return str(body.get("error", {}).get("cause", {}).get("name", "error"))


def run_load(
    url: str, bodies: list[bytes], *, threads: int, seconds: float | None = None, total: int | None = None
) -> list[Outcome]:
    """Send `bodies` round robin from `threads` threads, each with its own keep-alive client,
    until `seconds` have passed or `total` requests were sent (whichever is given)."""
    assert (seconds is None) != (total is None)
    started = time.monotonic()
    outcomes: list[Outcome] = []
    lock = threading.Lock()
    sent = 0

    def next_index() -> int | None:
        nonlocal sent
        with lock:
            if total is not None and sent >= total:
                return None
            if seconds is not None and time.monotonic() - started >= seconds:
                return None
            sent += 1
            return sent

    def worker() -> None:
        with httpx.Client(timeout=20.0) as client:
            while (index := next_index()) is not None:
                at = time.monotonic() - started
                try:
                    response = client.post(url, content=bodies[index % len(bodies)],
                                           headers={"content-type": "application/json"})
                    outcome = Outcome(at, response.status_code, _what(response))
                except httpx.TransportError as exc:
                    outcome = Outcome(at, 0, type(exc).__name__)
                with lock:
                    outcomes.append(outcome)

    with ThreadPoolExecutor(threads) as pool:
        for future in [pool.submit(worker) for _ in range(threads)]:
            future.result()
    return sorted(outcomes, key=lambda outcome: outcome.at)


def tally(outcomes: list[Outcome]) -> Counter[tuple[int, str]]:
    return Counter((outcome.status, outcome.what) for outcome in outcomes)
