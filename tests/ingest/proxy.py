"""A JSON-RPC proxy on 127.0.0.1 for recorder tests: it forwards to a real server and can be
slow, flaky (503, 429, dropped connections), fail its first requests as scripted, rewrite
answers (`tamper`), or play an older node without the EXPERIMENTAL_view_* methods (answering
`query` view_account, view_access_key_list and view_code instead)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from tests.support.http_stub import StubHandler, serving_stub


@dataclass
class Behaviour:
    delay: float = 0.0  # seconds added to every answer
    failure_rate: float = 0.0  # share of requests answered with a failure instead
    seed: int = 7
    old_node: bool = False  # no EXPERIMENTAL_view_*; `query` with the view's request_type instead
    # the first requests' answers, in order, before any drawn failure: (HTTP status, headers)
    scripted: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    # rewrites the upstream's answer (request, answer) -> answer: a node that answers wrongly
    tamper: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None
    counts: dict[str, int] = field(default_factory=lambda: {"forwarded": 0, "503": 0, "429": 0, "dropped": 0})
    arrivals: list[float] = field(default_factory=list)  # time.monotonic() of every request
    _random: random.Random = field(init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def next_scripted(self) -> tuple[int, dict[str, str]] | None:
        with self._lock:
            self.arrivals.append(time.monotonic())
            return self.scripted.pop(0) if self.scripted else None

    def draw(self) -> str | None:
        with self._lock:
            if self._random.random() >= self.failure_rate:
                self.counts["forwarded"] += 1
                return None
            failure = self._random.choice(("503", "429", "dropped"))
            self.counts[failure] += 1
            return failure


_OLD_NODE_VIEWS = ("view_account", "view_access_key_list", "view_code")  # what the recorder asks


def _translate(request: dict[str, Any]) -> dict[str, Any]:
    """What an old node does with the request, expressed as a request to the real server."""
    method, params = request.get("method"), request.get("params")
    if method in {f"EXPERIMENTAL_{view}" for view in _OLD_NODE_VIEWS}:
        return {**request, "method": "no_such_method_on_old_nodes"}  # the server's METHOD_NOT_FOUND
    if method == "query" and isinstance(params, dict) and params.get("request_type") in _OLD_NODE_VIEWS:
        rest = {k: v for k, v in params.items() if k != "request_type"}
        return {**request, "method": f"EXPERIMENTAL_{params['request_type']}", "params": rest}
    return request


@contextmanager
def json_rpc_proxy(target: str, behaviour: Behaviour) -> Iterator[str]:
    client = httpx.Client(timeout=30)

    class Handler(StubHandler):
        def do_POST(self) -> None:
            body = self.body()
            if behaviour.delay:
                time.sleep(behaviour.delay)
            scripted = behaviour.next_scripted()
            if scripted is not None:
                status, headers = scripted
                self.answer(status, b"scripted failure", headers=headers)
                return
            failure = behaviour.draw()
            if failure == "dropped":
                self.drop()
                return
            if failure == "503":
                self.answer(503, b"Service Unavailable")
                return
            if failure == "429":
                self.answer(429, b'{"error": "rate limited"}', headers={"Retry-After": "0"})
                return
            if behaviour.old_node:
                body = orjson.dumps(_translate(orjson.loads(body)))
            upstream = client.post(target, content=body, headers={"Content-Type": "application/json"})
            content = upstream.content
            if behaviour.tamper is not None:
                content = orjson.dumps(behaviour.tamper(orjson.loads(body), orjson.loads(content)))
            self.answer(upstream.status_code, content)

    try:
        # clients killed mid-request (the SIGKILL test) are expected
        with serving_stub(Handler, quiet_client_errors=True) as url:
            yield url
    finally:
        client.close()
