"""`nearrpc store upgrade`: a store written by a build of schema version 2 (before access keys
and code) is refused with the way out, then upgraded in place, on both backends: the tables are
added, nothing stored changes, the store passes its full check and serves; a second run does
nothing; a version no upgrade reaches is refused in one line."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from nearrpc.store import StoreSchemaError, open_store
from tests.support.cli import nearrpc
from tests.support.postgres import dump

_SCHEMA_3_META = ("access_key_count", "contract_code_count", "version_access_keys", "version_codes")
_SCHEMA_3_TABLES = ("access_keys", "contract_codes", "fetched")


def _as_schema_2(execute: Callable[[str], object], version: int = 2) -> None:
    """What a build of schema 2 wrote: the same tables without those version 3 added."""
    for table in _SCHEMA_3_TABLES:
        execute(f"DROP TABLE {table}")
    execute(f"DELETE FROM meta WHERE key IN ({', '.join(repr(key) for key in _SCHEMA_3_META)})")
    execute(f"UPDATE nearrpc_schema SET version = {version}")


def _sqlite_rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(path) as conn:
        return {table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
                for table in ("blocks", "epochs", "account_states", "config")}  # fmt: skip


def _upgrade(store: str | Path) -> tuple[int, str, str]:
    done = nearrpc("store", "upgrade", "--store", store)
    return done.returncode, done.stdout.strip(), done.stderr.strip()


def _check_passes_and_serves(store: str | Path) -> None:
    check = nearrpc("store", "check", "--store", store)
    assert check.returncode == 0, check.stderr
    reader = open_store(store, "read")
    try:
        info = reader.info()
        assert (info.access_key_count, info.contract_code_count) == (0, 0)  # added, empty
        assert reader.head() is not None
    finally:
        reader.close()


def test_an_sqlite_store_of_schema_2_is_upgraded_in_place(store_copy: Path) -> None:
    with sqlite3.connect(store_copy) as conn:
        _as_schema_2(conn.execute)
    before = _sqlite_rows(store_copy)
    with pytest.raises(StoreSchemaError, match=r"schema version 2, .* `nearrpc store upgrade --store "):
        open_store(store_copy, "read")
    assert _upgrade(store_copy) == (
        0, f"nearrpc store upgrade: {store_copy} upgraded from schema version 2 to 3 (tables added, nothing stored "
        "changed)", "",
    )  # fmt: skip
    assert _sqlite_rows(store_copy) == before
    _check_passes_and_serves(store_copy)
    assert _upgrade(store_copy)[:2] == (0, f"nearrpc store upgrade: {store_copy} is at schema version 3 already; "
                                           "nothing to do")  # fmt: skip


def test_a_postgresql_store_of_schema_2_is_upgraded_in_place(pg_copy: str) -> None:
    with psycopg.connect(pg_copy, autocommit=True) as conn:
        _as_schema_2(conn.execute)
    before = {table: rows for table, rows in dump(pg_copy).items() if table not in ("meta", "nearrpc_schema")}
    code, out, err = _upgrade(pg_copy)
    assert (code, err) == (0, "") and out.endswith("upgraded from schema version 2 to 3 (tables added, nothing "
                                                   "stored changed)")  # fmt: skip
    after = dump(pg_copy)
    assert all(after[table] == rows for table, rows in before.items())
    _check_passes_and_serves(pg_copy)


def test_a_version_no_upgrade_reaches_is_refused(store_copy: Path) -> None:
    with sqlite3.connect(store_copy) as conn:
        _as_schema_2(conn.execute, version=1)
    code, out, err = _upgrade(store_copy)
    assert (code, out) == (2, "")
    assert err == f"nearrpc store upgrade: {store_copy} has store schema version 1, which this build cannot upgrade"
