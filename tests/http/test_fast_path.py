"""JSON-RPC POSTs take the generated fast path past FastAPI's middleware, unless a browser's
`Origin` header asks for CORS, which FastAPI's middleware adds: both paths answer the same."""

from __future__ import annotations

import httpx
import pytest

from nearrpc.generated.methods import METHODS
from nearrpc.generated.routes import JSONRPC_PATHS

pytestmark = pytest.mark.live

REQUESTS = [
    {"jsonrpc": "2.0", "id": 1, "method": "block", "params": {"finality": "final"}},
    {"jsonrpc": "2.0", "id": "x", "method": "block", "params": {"block_id": 7}},  # 422
    {"jsonrpc": "2.0", "id": 2, "method": "EXPERIMENTAL_view_account", "params": {"account_id": "no.localnet",
                                                                                  "finality": "final"}},
    {"jsonrpc": "2.0", "id": 3, "method": "no_such_method"},
]


def test_the_path_table_is_the_specs() -> None:
    assert JSONRPC_PATHS == {"/": None, **{spec.path: name for name, spec in METHODS.items()}}


@pytest.mark.parametrize("body", REQUESTS)
def test_with_and_without_origin_the_answer_is_the_same(http: httpx.Client, body: dict[str, object]) -> None:
    fast = http.post("/", json=body)
    browser = http.post("/", json=body, headers={"Origin": "https://wallet.example"})
    assert (fast.status_code, fast.content) == (browser.status_code, browser.content)
    assert fast.headers["content-type"] == browser.headers["content-type"] == "application/json"
    assert "access-control-allow-origin" not in fast.headers
    assert browser.headers["access-control-allow-origin"] == "*"


def test_a_preflight_is_answered_by_the_cors_middleware(http: httpx.Client) -> None:
    answer = http.options(
        "/block", headers={"Origin": "https://wallet.example", "Access-Control-Request-Method": "POST",
                           "Access-Control-Request-Headers": "content-type"},
    )
    assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == "*"


def test_other_methods_and_paths_still_reach_fastapi(http: httpx.Client) -> None:
    assert http.get("/block").status_code == 405 and http.get("/block").content == b""
    assert http.post("/nowhere", json=REQUESTS[0]).status_code == 404
    assert http.get("/health").status_code == 200
