"""A real server over a fresh sample store for the contract run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from nearrpc.sample import build_sample_store
from tests.support.live_server import LiveServer, running_server


@pytest.fixture(scope="session")
def contract_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    folder = tmp_path_factory.mktemp("contract-server")
    build_sample_store(folder / "sample.sqlite")
    with running_server(folder / "sample.sqlite", folder / "server.log") as live:
        yield live
