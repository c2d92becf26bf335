"""The published NEAR client (near-jsonrpc-client) against the suite's real server over the sample
store (tests/conftest.py `server`), on each backend."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from near_jsonrpc_client import NearClientSync

from tests.support.live_server import LiveServer


@pytest.fixture(scope="session")
def near(server: LiveServer) -> Iterator[NearClientSync]:
    """The client as applications use it: one RPC URL, requests POSTed to `/`."""
    client = NearClientSync(rpc_urls=server.url)
    try:
        yield client
    finally:
        client.close()
