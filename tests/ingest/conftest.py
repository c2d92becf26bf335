"""Fixtures for the import tests: the sample store served live (instance A), CLI runs in real
processes, store dumps for before/after comparisons, raw JSON-RPC calls."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.store.sqlite_files import contents
from tests.support.live_server import LiveServer, running_server

REPO = Path(__file__).resolve().parents[2]


def digest(path: Path) -> str:
    """A checksum of the store's contents (not of its file bytes, which WAL checkpoints move,
    nor of the change counters in `meta`, which count writes: a re-run that rewrites the same
    values bumps them, so servers drop caches, while the data stays what it was)."""
    return hashlib.sha256(repr(contents(path)).encode()).hexdigest()


_clients: list[httpx.Client] = []


@pytest.fixture(scope="session", autouse=True)
def _http_client() -> Iterator[None]:
    """One keep-alive HTTP client for all calls (a new connection per call costs ~35 ms)."""
    with httpx.Client(timeout=30) as client:
        _clients.append(client)
        yield
        _clients.clear()


def call(url: str, method: str, params: Any, request_id: Any = "t") -> tuple[int, bytes]:
    """One JSON-RPC call; the HTTP status and the raw response bytes."""
    body = orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    response = _clients[0].post(url, content=body, headers={"Content-Type": "application/json"})
    return response.status_code, response.content


def result(url: str, method: str, params: Any) -> Any:
    status, content = call(url, method, params)
    answer = orjson.loads(content)
    assert status == 200 and "result" in answer, (method, params, status, content[:300])
    return answer["result"]


def error_cause(url: str, method: str, params: Any) -> str:
    _, content = call(url, method, params)
    error = orjson.loads(content)["error"]
    return str(error["cause"]["name"])


@pytest.fixture(scope="session")
def server_a(sample_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """Instance A: `nearrpc serve` on the sample store."""
    log = tmp_path_factory.mktemp("server_a") / "serve.log"
    with running_server(sample_store, log) as server:
        yield server
