"""The published NEAR client (near-jsonrpc-client) against a real server over a fresh sample store,
on each backend."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from near_jsonrpc_client import NearClientSync

from nearrpc.sample import build_sample_store
from tests.support.backends import BACKENDS, store_on
from tests.support.live_server import LiveServer, running_server


@pytest.fixture(scope="session", params=BACKENDS)
def client_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    folder = tmp_path_factory.mktemp("client-server")
    build_sample_store(folder / "sample.sqlite")
    store = store_on(request.param, folder / "sample.sqlite", request)
    with running_server(store, folder / "server.log") as live:
        yield live


@pytest.fixture(scope="session")
def near(client_server: LiveServer) -> Iterator[NearClientSync]:
    """The client as applications use it: one RPC URL, requests POSTed to `/`."""
    client = NearClientSync(rpc_urls=client_server.url)
    try:
        yield client
    finally:
        client.close()
