"""Contract state at the edges the main tests leave: a limit below zero, and a stored value
longer than nearcore's max_length_storage_value found by the thorough check, on both backends."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from nearrpc.store import StoreLocation, open_store
from nearrpc.store.checks import storage_limits
from tests.store.test_contract_data import ALICE, _write
from tests.support.postgres import PostgresServer


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreLocation]:
    if request.param == "sqlite":
        yield tmp_path / "state.db"
    else:
        server: PostgresServer = request.getfixturevalue("postgres")
        yield server.create_database("edges")


def test_a_limit_below_zero_answers_no_keys(location: StoreLocation) -> None:
    # SQLite reads LIMIT -1 as "no limit": the readers answer nothing before asking
    _write(location)
    reader = open_store(location, "read")
    try:
        assert reader.contract_state(ALICE, b"", 9, -1) == []
    finally:
        reader.close()

    async def served() -> list[tuple[bytes, bytes]]:
        serving = open_store(location, "serve")
        try:
            return await serving.contract_state(ALICE, b"", 9, -1)
        finally:
            await serving.close()

    assert asyncio.run(served()) == []


def test_the_thorough_check_finds_a_value_longer_than_nearcore_allows(location: StoreLocation) -> None:
    _write(location)
    too_long = storage_limits()[1] + 1
    if isinstance(location, Path):
        with sqlite3.connect(location) as conn:
            conn.execute("UPDATE contract_data SET value = zeroblob(?) WHERE key = X'63'", (too_long,))
    else:
        with psycopg.connect(str(location), autocommit=True) as conn:
            conn.execute("UPDATE contract_data SET value = %s WHERE key = %s", (bytes(too_long), b"c"))
    reader = open_store(location, "read")
    try:
        assert reader.check(thorough=True).problems == (
            f"contract state of '{ALICE}' at height 3: its value of {too_long} bytes is longer than "
            f"max_length_storage_value ({too_long - 1})",
        )
    finally:
        reader.close()
