"""`nearrpc store upgrade`: a store written by a build of schema version 2 (before access keys
and code) or 3 (before contract state) is refused with the way out, then upgraded in place, on
both backends: the tables are added, nothing stored changes, the store passes its full check and
serves; a second run does nothing; a version no upgrade reaches is refused in one line; an
upgrade that fails half way leaves the store as it was."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from nearrpc.store import StoreSchemaError, open_store
from tests.support.cli import nearrpc
from tests.support.postgres import dump

_SCHEMA_4_META = ("contract_data_count", "version_contract_data")
_SCHEMA_3_META = ("access_key_count", "contract_code_count", "version_access_keys", "version_codes", *_SCHEMA_4_META)
_SCHEMA_3_TABLES = ("access_keys", "contract_codes", "fetched", "contract_data")


def _as_schema_2(execute: Callable[[str], object], version: int = 2) -> None:
    """What a build of schema 2 wrote: the same tables without those versions 3 and 4 added."""
    for table in _SCHEMA_3_TABLES:
        execute(f"DROP TABLE {table}")
    execute(f"DELETE FROM meta WHERE key IN ({', '.join(repr(key) for key in _SCHEMA_3_META)})")
    execute(f"UPDATE nearrpc_schema SET version = {version}")


def _as_schema_3(execute: Callable[[str], object]) -> None:
    """What a build of schema 3 wrote (the one before this): the same tables and meta keys
    without the contract state version 4 added."""
    execute("DROP TABLE contract_data")
    execute(f"DELETE FROM meta WHERE key IN ({', '.join(repr(key) for key in _SCHEMA_4_META)})")
    execute("UPDATE nearrpc_schema SET version = 3")


def _sqlite_rows(
    path: Path, tables: tuple[str, ...] = ("blocks", "epochs", "account_states", "config")
) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(path) as conn:
        return {table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr) for table in tables}


def _upgrade(store: str | Path) -> tuple[int, str, str]:
    done = nearrpc("store", "upgrade", "--store", store)
    return done.returncode, done.stdout.strip(), done.stderr.strip()


def _check_passes_and_serves(store: str | Path) -> None:
    check = nearrpc("store", "check", "--store", store)
    assert check.returncode == 0, check.stderr
    reader = open_store(store, "read")
    try:
        info = reader.info()
        assert info.contract_data_count == 0  # added, empty
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
        0, f"nearrpc store upgrade: {store_copy} upgraded from schema version 2 to 4 (tables added, nothing stored "
        "changed)", "",
    )  # fmt: skip
    assert _sqlite_rows(store_copy) == before
    _check_passes_and_serves(store_copy)
    assert _upgrade(store_copy)[:2] == (0, f"nearrpc store upgrade: {store_copy} is at schema version 4 already; "
                                           "nothing to do")  # fmt: skip


def test_an_sqlite_store_of_schema_3_is_upgraded_and_takes_contract_state(store_copy: Path) -> None:
    with sqlite3.connect(store_copy) as conn:
        _as_schema_3(conn.execute)
    kept = ("blocks", "epochs", "account_states", "config", "access_keys", "contract_codes", "meta")
    before = _sqlite_rows(store_copy, kept)
    with pytest.raises(StoreSchemaError, match=r"schema version 3, .* `nearrpc store upgrade --store "):
        open_store(store_copy, "write")
    assert _upgrade(store_copy)[:2] == (
        0, f"nearrpc store upgrade: {store_copy} upgraded from schema version 3 to 4 (tables added, nothing stored "
        "changed)",
    )  # fmt: skip
    after = _sqlite_rows(store_copy, kept)
    assert {table: rows for table, rows in after.items() if table != "meta"} == {
        table: rows for table, rows in before.items() if table != "meta"
    }
    assert set(before["meta"]) < set(after["meta"])  # counters added, none changed
    _check_passes_and_serves(store_copy)
    _writes_and_reads_contract_state(store_copy)


def test_an_upgrade_that_fails_leaves_the_store_as_it_was(store_copy: Path) -> None:
    """The upgrade is one transaction: when its DDL fails (here a table of the new name that a
    schema-3 store never has) nothing of it stays, the version included."""
    with sqlite3.connect(store_copy) as conn:
        _as_schema_3(conn.execute)
        conn.execute("CREATE TABLE contract_data (something TEXT)")
    before = store_copy.read_bytes()
    code, out, err = _upgrade(store_copy)
    assert (code, out) == (1, "") and "table contract_data already exists" in err and "\n" not in err.strip()
    assert store_copy.read_bytes() == before
    with sqlite3.connect(store_copy) as conn:
        assert conn.execute("SELECT version FROM nearrpc_schema").fetchall() == [(3,)]


def _writes_and_reads_contract_state(store: str | Path) -> None:
    with open_store(store, "write") as writer, writer.batch() as batch:
        batch.put_contract_data("counter.localnet", b"STATE", 5, (7).to_bytes(8, "little"))
    reader = open_store(store, "read")
    try:
        assert reader.contract_value("counter.localnet", b"STATE", 9) == (7).to_bytes(8, "little")
        assert reader.info().contract_data_count == 1 and reader.check(thorough=True).ok
    finally:
        reader.close()


def test_a_postgresql_store_of_schema_2_is_upgraded_in_place(pg_copy: str) -> None:
    with psycopg.connect(pg_copy, autocommit=True) as conn:
        _as_schema_2(conn.execute)
    before = {table: rows for table, rows in dump(pg_copy).items() if table not in ("meta", "nearrpc_schema")}
    code, out, err = _upgrade(pg_copy)
    assert (code, err) == (0, "") and out.endswith("upgraded from schema version 2 to 4 (tables added, nothing "
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


def test_a_postgresql_store_of_schema_3_is_upgraded_and_takes_contract_state(pg_copy: str) -> None:
    with psycopg.connect(pg_copy, autocommit=True) as conn:
        _as_schema_3(conn.execute)
    before = {table: rows for table, rows in dump(pg_copy).items() if table not in ("meta", "nearrpc_schema")}
    with pytest.raises(StoreSchemaError, match=r"schema version 3, .* `nearrpc store upgrade --store "):
        open_store(pg_copy, "read")
    code, out, err = _upgrade(pg_copy)
    assert (code, err) == (0, "") and out.endswith("upgraded from schema version 3 to 4 (tables added, nothing "
                                                   "stored changed)")  # fmt: skip
    after = dump(pg_copy)
    assert all(after[table] == rows for table, rows in before.items())
    _check_passes_and_serves(pg_copy)
    _writes_and_reads_contract_state(pg_copy)


def test_a_postgresql_upgrade_that_fails_leaves_the_store_as_it_was(pg_copy: str) -> None:
    with psycopg.connect(pg_copy, autocommit=True) as conn:
        _as_schema_3(conn.execute)
        conn.execute("CREATE TABLE contract_data (something TEXT)")
    before = dump(pg_copy)
    code, out, err = _upgrade(pg_copy)
    assert (code, out) == (1, "") and 'relation "contract_data" already exists' in err, err
    assert err.count("\n") == 0 and dump(pg_copy) == before
    with psycopg.connect(pg_copy, autocommit=True) as conn:
        assert conn.execute("SELECT version FROM nearrpc_schema").fetchall() == [(3,)]
