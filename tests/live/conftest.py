"""One real server over one sample store for the live tests of a session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from service.sample import build_sample_store
from tests.live_server import LiveServer, running_server


@pytest.fixture(scope="session")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store") / "sample.sqlite"
    build_sample_store(path)
    return path


@pytest.fixture(scope="session")
def server(sample_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with running_server(sample_store, tmp_path_factory.mktemp("logs") / "server.log") as live:
        yield live


@pytest.fixture(scope="session")
def http(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10.0) as client:
        yield client
