"""Health, status, the spec document and CORS."""

from __future__ import annotations

import httpx
import pytest

from nearrpc.spec import spec_bytes
from nearrpc.version import INTERFACE_VERSION
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.live


def test_health(http: httpx.Client) -> None:
    assert http.get("/health").status_code == 200
    head = http.head("/health")
    assert head.status_code == 200 and head.content == b""


def test_status_summarises_the_store(http: httpx.Client) -> None:
    facts = sample_facts()
    status = http.get("/status").json()
    assert status["chain_id"] == facts.chain_id
    assert status["version"]["interface"] == INTERFACE_VERSION
    sync = status["sync_info"]
    assert (sync["latest_block_height"], sync["latest_block_hash"]) == (facts.head_height, facts.head_hash)
    assert (sync["earliest_block_height"], sync["earliest_block_hash"]) == (facts.genesis_height, facts.genesis_hash)
    assert status["store"]["blocks"] == len(facts.block_heights)
    assert http.head("/status").status_code == 200


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
