"""Health, status, the spec document and CORS."""

from __future__ import annotations

import httpx
import pytest

from nearrpc.spec import spec_bytes
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
