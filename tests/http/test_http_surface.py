"""Health, status, the spec document and CORS."""

from __future__ import annotations

from pathlib import Path

import httpx
import orjson
import pytest
from starlette.routing import BaseRoute, Mount, Route

from nearrpc.http.app import build_app
from nearrpc.spec import spec_bytes
from nearrpc.store import open_store
from nearrpc.version import INTERFACE_VERSION

pytestmark = pytest.mark.live


def test_health_answers_as_nearcore_does(http: httpx.Client) -> None:
    health = http.get("/health")
    assert (health.status_code, health.content) == (200, b"null")
    assert health.headers["content-type"] == "application/json"
    head = http.head("/health")
    assert head.status_code == 200 and head.content == b""


def test_openapi_document_is_the_spec(http: httpx.Client) -> None:
    response = http.get("/openapi.json")
    assert response.status_code == 200 and response.content == spec_bytes()
    assert response.json()["info"]["version"] == INTERFACE_VERSION


def test_cors_is_permissive_by_default(http: httpx.Client) -> None:
    preflight = http.options(
        "/",
        headers={
            "origin": "https://wallet.example",
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] in ("*", "https://wallet.example")
    simple = http.post(
        "/", json={"jsonrpc": "2.0", "id": 1, "method": "genesis_config"}, headers={"origin": "https://wallet.example"}
    )
    assert simple.headers["access-control-allow-origin"] == "*"


def _get_paths(sample_store: Path) -> list[str]:
    """Every path the application serves to GET, read off its routes (a new one is covered too);
    for the docs assets, one file of them."""
    paths = []

    def walk(routes: list[BaseRoute]) -> None:
        for route in routes:
            if isinstance(route, Mount):
                paths.append(f"{route.path}/swagger-ui.css")
            elif isinstance(route, Route) and "GET" in (route.methods or ()):
                paths.append(route.path)
            elif (included := getattr(route, "original_router", None)) is not None:  # FastAPI's include_router
                walk(included.routes)

    walk(build_app(open_store(sample_store, "serve")).routes)
    return sorted(paths)


def test_head_answers_wherever_get_does(http: httpx.Client, sample_store: Path) -> None:
    """HEAD is GET without the body (RFC 9110 §9.3.2): same status, same headers."""
    paths = _get_paths(sample_store)
    assert {"/docs", "/health", "/metrics", "/openapi.json", "/redoc", "/status"} <= set(paths)
    for path in paths:
        get, head = http.get(path), http.head(path)
        assert head.status_code == get.status_code, path
        assert head.content == b"", path
        assert head.headers.get("content-type") == get.headers.get("content-type"), path
        if "content-length" in get.headers and path != "/metrics":  # metrics count this very scrape
            assert head.headers["content-length"] == get.headers["content-length"], path


def test_the_genesis_config_alias_is_answered_at_root_only(http: httpx.Client) -> None:
    """nearcore's older name answers at POST / (as on a node); it has no path of its own, as no
    method has on a node, and the spec says where it is answered."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "EXPERIMENTAL_genesis_config"}
    at_root = http.post("/", json=body)
    assert at_root.status_code == 200
    assert at_root.content == http.post("/", json={**body, "method": "genesis_config"}).content
    at_path = http.post("/EXPERIMENTAL_genesis_config", json=body)
    assert (at_path.status_code, at_path.content) == (404, b"")
    spec = orjson.loads(spec_bytes())
    assert "/EXPERIMENTAL_genesis_config" not in spec["paths"]
    assert "EXPERIMENTAL_genesis_config" in spec["paths"]["/"]["post"]["description"]
    assert "POST / only" in spec["paths"]["/genesis_config"]["post"]["description"]
