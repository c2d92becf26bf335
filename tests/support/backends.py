"""Stores on each backend for the live tests: the same data in an SQLite file and in a
PostgreSQL database of the suite's own server, filled by `nearrpc store copy` as an operator
fills one."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest

from tests.support.cli import nearrpc
from tests.support.postgres import PostgresServer

BACKENDS: Final = ("sqlite", "postgresql")


def copy_into_postgres(postgres: PostgresServer, sqlite_store: Path) -> str:
    """A new database holding a copy of `sqlite_store`; its URL."""
    url = postgres.create_database()
    copied = nearrpc("store", "copy", sqlite_store, url)
    assert copied.returncode == 0, copied.stderr
    return url


def store_on(backend: str, sqlite_store: Path, request: pytest.FixtureRequest) -> Path | str:
    """`sqlite_store` itself, or a PostgreSQL copy of it (starting the suite's server on first use)."""
    if backend == "sqlite":
        return sqlite_store
    return copy_into_postgres(request.getfixturevalue("postgres"), sqlite_store)
