"""The published NEAR clients against a real server over the sample store: near-jsonrpc-client
(Python) against the suite's server (tests/conftest.py `server`), on each backend; near-api-js
(JavaScript, pinned by package-lock.json beside this file) against the plugin's `nearrpc_server`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from near_jsonrpc_client import NearClientSync

from tests.support.live_server import LiveServer
from tests.support.npm import pinned_packages

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def near(server: LiveServer) -> Iterator[NearClientSync]:
    """The client as applications use it: one RPC URL, requests POSTed to `/`."""
    client = NearClientSync(rpc_urls=server.url)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def near_api_js() -> Path:
    """node_modules with the pinned near-api-js (`npm ci` into .cache/ once per lock file).

    near-api-js 7.3.1 declares node >= 22.22.2 (its dependencies: >= 20.19); `npm ci` only warns
    about an older node, and the test runs it on the system's (20.20 where this was written)."""
    return pinned_packages(HERE, "near-api-js", "near-api-js")
