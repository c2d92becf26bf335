"""The sandbox's stores on each backend: a copy of the sample store, as an SQLite file or a
PostgreSQL database of the suite's own server (tests/support/postgres.py, the pgserver wheel's
PostgreSQL 16, which the suite always starts itself)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from nearrpc.store import postgres_serving, sqlite_serving
from tests.sandbox.chain_harness import Sandbox
from tests.support.backends import BACKENDS, copy_into_postgres
from tests.support.postgres import PostgresServer


@pytest.fixture(scope="session")
def sample_database(request: pytest.FixtureRequest, sample_store: Path) -> str:
    """The sample store copied once into a PostgreSQL database, the template of each test's."""
    postgres: PostgresServer = request.getfixturevalue("postgres")
    return copy_into_postgres(postgres, sample_store)


@pytest.fixture(params=BACKENDS)
def sandbox_store(request: pytest.FixtureRequest, sample_store: Path, tmp_path: Path) -> Path | str:
    """A copy of the sample store the test may write, on each backend."""
    if request.param == "sqlite":
        path = tmp_path / "sandbox.sqlite"
        shutil.copyfile(sample_store, path)
        return path
    postgres: PostgresServer = request.getfixturevalue("postgres")
    return postgres.create_database("sandbox", template=request.getfixturevalue("sample_database"))


@pytest.fixture
def sandbox_on_each_backend(sandbox_store: Path | str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    """A sandbox whose server checks the store's counters only every minute on its own (SQLite's
    data_version, PostgreSQL's poll): what a test reads right after a write is new only because
    the chain writer told the server's reader of its commit."""
    monkeypatch.setattr(sqlite_serving, "VERSION_CHECK_SECONDS", 60.0)
    monkeypatch.setattr(postgres_serving, "POLL_SECONDS", 60.0)
    box = Sandbox(sandbox_store)
    yield box
    box.close()
