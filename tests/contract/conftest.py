"""A real server over a fresh sample store for the contract run, on each backend."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from nearrpc.sample import build_sample_store
from tests.support.backends import BACKENDS, store_on
from tests.support.live_server import LiveServer, running_server


@pytest.fixture(scope="session", params=BACKENDS)
def contract_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    folder = tmp_path_factory.mktemp("contract-server")
    build_sample_store(folder / "sample.sqlite")
    store = store_on(request.param, folder / "sample.sqlite", request)
    with running_server(store, folder / "server.log") as live:
        yield live
