"""A loopback proxy in front of a real upstream `nearrpc serve`, which a test steers: it counts
the requests a fork makes, delays them, drops them, or changes the answers.

    with upstream_proxy(upstream_url) as proxy:
        proxy.delay = 0.3                   # every answer 300 ms late
        proxy.down = True                   # every connection closed unanswered
        proxy.rewrite = lambda request, answer: ...   # a changed answer (parsed JSON in and out)
        proxy.intercept = lambda request: (307, b"", {"Location": ...})  # an answer of its own (None: ask)
        proxy.asked("block", {"block_id": 5})          # how many such requests arrived

`rpc(url, method, params)`: one JSON-RPC call, as the tests make them to a fork or its upstream.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from tests.support.http_stub import StubHandler, serving_stub

Rewrite = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]
# (status, body, headers) the proxy answers itself, or None: the upstream answers; a body given
# as chunks is streamed with no declared length (the connection's end ends it)
Intercepted = tuple[int, bytes | Iterator[bytes], dict[str, str]] | None
Intercept = Callable[[dict[str, Any]], Intercepted]


def _key(method: object, params: object) -> str:
    return f"{method} {json.dumps(params, sort_keys=True)}"


class UpstreamProxy:
    def __init__(self, target: str) -> None:
        self.url = ""
        self.target = target
        self.delay = 0.0
        self.down = False
        self.rewrite: Rewrite | None = None
        self.intercept: Intercept | None = None
        self._lock = threading.Lock()
        self._requests: Counter[str] = Counter()
        self.in_flight = 0
        self.most_in_flight = 0
        self.arrivals: list[float] = []  # time.monotonic() of each request

    def asked(self, method: str, params: object) -> int:
        with self._lock:
            return self._requests[_key(method, params)]

    def requests(self) -> dict[str, int]:
        """Every request that arrived, "<method> <params as sorted JSON>" -> how many times."""
        with self._lock:
            return dict(self._requests)

    def total(self) -> int:
        with self._lock:
            return sum(self._requests.values())

    def count(self, request: dict[str, Any]) -> None:
        with self._lock:
            self._requests[_key(request.get("method"), request.get("params"))] += 1
            self.arrivals.append(time.monotonic())

    def enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1


@contextmanager
def upstream_proxy(target: str) -> Iterator[UpstreamProxy]:
    proxy = UpstreamProxy(target)
    client = httpx.Client(timeout=30.0)

    class Handler(StubHandler):
        def do_POST(self) -> None:
            body = self.body()
            request = json.loads(body)
            proxy.count(request)
            if proxy.down:
                self.drop()
                return
            own = proxy.intercept(request) if proxy.intercept is not None else None
            if own is not None:
                status, answer, headers = own
                if isinstance(answer, bytes):
                    self.answer(status, answer, headers=headers)
                    return
                self.close_connection = True
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", "Connection": "close", **headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                for chunk in answer:
                    self.wfile.write(chunk)
                return
            proxy.enter()
            try:
                time.sleep(proxy.delay)
                answered = client.post(proxy.target, content=body, headers={"content-type": "application/json"})
            finally:
                proxy.leave()
            payload = answered.content
            if proxy.rewrite is not None:
                payload = json.dumps(proxy.rewrite(request, answered.json())).encode()
            self.answer(answered.status_code, payload)

    try:
        with serving_stub(Handler, quiet_client_errors=True) as url:
            proxy.url = url + "/"
            yield proxy
    finally:
        client.close()


def rpc(url: str, method: str, params: object) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.post(url, json=body, timeout=30.0)
