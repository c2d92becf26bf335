"""Fixtures for running nearrpc as it is deployed: PostgreSQL stores filled by `store copy`."""

from __future__ import annotations

from pathlib import Path

import pytest

from nearrpc.sample import build_sample_store


@pytest.fixture(scope="module")
def sample_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("deployment") / "sample.sqlite"
    build_sample_store(path)
    return path
