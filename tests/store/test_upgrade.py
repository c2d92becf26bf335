"""`nearrpc store upgrade`: a store written by a build of schema version 2 (before access keys
and code), 3 (before contract state) or 4 (before chunks, transactions, receipts, validators and
the by-height indexes) is refused with the way out, then upgraded in place through every step, on
both backends: the tables are added, nothing stored changes, the store passes its full check and
serves; a second run does nothing; a version no upgrade reaches is refused in one line; an
upgrade that fails half way leaves the store as it was."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from nearrpc.sample import SampleChain
from nearrpc.store import StoreSchemaError, open_store
from tests.store.chain_records import sample_records
from tests.store.sqlite_files import dump as sqlite_dump
from tests.support.cli import nearrpc
from tests.support.postgres import dump

_SCHEMA_5_META = (
    "chunk_count", "transaction_count", "receipt_count", "validators_count", "version_chunks", "version_transactions",
    "version_receipts", "version_validators",
)  # fmt: skip
_SCHEMA_5_TABLES = ("chunks", "transactions", "receipts", "validators")
_SCHEMA_5_INDEXES = ("account_states_by_height", "access_keys_by_height", "contract_data_by_height")
_SCHEMA_4_META = ("contract_data_count", "version_contract_data")
_SCHEMA_3_META = ("access_key_count", "contract_code_count", "version_access_keys", "version_codes", *_SCHEMA_4_META)
_SCHEMA_3_TABLES = ("access_keys", "contract_codes", "fetched", "contract_data")


def _as_schema_2(execute: Callable[[str], object], version: int = 2) -> None:
    """What a build of schema 2 wrote: the same tables without those versions 3 to 5 added."""
    _as_schema_4(execute)
    for table in _SCHEMA_3_TABLES:
        execute(f"DROP TABLE {table}")
    execute(f"DELETE FROM meta WHERE key IN ({', '.join(repr(key) for key in _SCHEMA_3_META)})")
    execute(f"UPDATE nearrpc_schema SET version = {version}")


def _as_schema_3(execute: Callable[[str], object]) -> None:
    """What a build of schema 3 wrote: the same tables and meta keys without the contract state
    version 4 added (nor what 5 added)."""
    _as_schema_4(execute)
    execute("DROP TABLE contract_data")
    execute(f"DELETE FROM meta WHERE key IN ({', '.join(repr(key) for key in _SCHEMA_4_META)})")
    execute("UPDATE nearrpc_schema SET version = 3")


def _as_schema_4(execute: Callable[[str], object]) -> None:
    """What a build of schema 4 wrote (the one before this): no chunks, transactions, receipts or
    validators tables, no by-height indexes, none of their meta keys."""
    for table in _SCHEMA_5_TABLES:
        execute(f"DROP TABLE {table}")
    for index in _SCHEMA_5_INDEXES:
        execute(f"DROP INDEX {index}")
    execute(f"DELETE FROM meta WHERE key IN ({', '.join(repr(key) for key in _SCHEMA_5_META)})")
    execute("UPDATE nearrpc_schema SET version = 4")


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
        assert (info.chunk_count, info.transaction_count, info.receipt_count, info.validators_count) == (0, 0, 0, 0)
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
        0, f"nearrpc store upgrade: {store_copy} upgraded from schema version 2 to 5 (tables added, nothing stored "
        "changed)", "",
    )  # fmt: skip
    assert _sqlite_rows(store_copy) == before
    _check_passes_and_serves(store_copy)
    assert _upgrade(store_copy)[:2] == (0, f"nearrpc store upgrade: {store_copy} is at schema version 5 already; "
                                           "nothing to do")  # fmt: skip


def test_an_sqlite_store_of_schema_3_is_upgraded_and_takes_contract_state(store_copy: Path) -> None:
    with sqlite3.connect(store_copy) as conn:
        _as_schema_3(conn.execute)
    kept = ("blocks", "epochs", "account_states", "config", "access_keys", "contract_codes", "meta")
    before = _sqlite_rows(store_copy, kept)
    with pytest.raises(StoreSchemaError, match=r"schema version 3, .* `nearrpc store upgrade --store "):
        open_store(store_copy, "write")
    assert _upgrade(store_copy)[:2] == (
        0, f"nearrpc store upgrade: {store_copy} upgraded from schema version 3 to 5 (tables added, nothing stored "
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
    assert (code, err) == (0, "") and out.endswith("upgraded from schema version 2 to 5 (tables added, nothing "
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
    assert (code, err) == (0, "") and out.endswith("upgraded from schema version 3 to 5 (tables added, nothing "
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


def _indexes(store: str | Path) -> set[str]:
    if isinstance(store, Path):
        with sqlite3.connect(store) as conn:
            return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    with psycopg.connect(store, autocommit=True) as conn:
        return {row[0] for row in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = 'public'")}


def _everything(store: str | Path) -> dict[str, list[tuple[object, ...]]]:
    return sqlite_dump(store) if isinstance(store, Path) else dump(store)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_store_of_schema_4_is_upgraded_keeping_every_row(
    backend: str, request: pytest.FixtureRequest, chain: SampleChain
) -> None:
    """4 -> 5: every table and meta value of the schema-4 store stays as it was; the new tables
    and the by-height indexes appear, the store passes its full check, and takes and serves
    chunks, transactions, receipts and validators."""
    store: str | Path = request.getfixturevalue("store_copy" if backend == "sqlite" else "pg_copy")
    if isinstance(store, Path):
        with sqlite3.connect(store) as conn:
            _as_schema_4(conn.execute)
    else:
        with psycopg.connect(store, autocommit=True) as conn:
            _as_schema_4(conn.execute)
    before = _everything(store)
    assert before["contract_data"] and before["access_keys"] and not set(_SCHEMA_5_TABLES) & set(before)
    with pytest.raises(StoreSchemaError, match=r"schema version 4, .* `nearrpc store upgrade --store "):
        open_store(store, "read")
    code, out, err = _upgrade(store)
    assert (code, err) == (0, "") and out.endswith(
        "upgraded from schema version 4 to 5 (tables added, nothing stored changed)"
    )
    after = _everything(store)
    assert {table: after[table] for table in before if table not in ("meta", "nearrpc_schema")} == {
        table: rows for table, rows in before.items() if table not in ("meta", "nearrpc_schema")
    }
    assert set(before["meta"]) < set(after["meta"])  # counters added, none changed
    assert {key for key, _ in set(after["meta"]) - set(before["meta"])} == set(_SCHEMA_5_META)
    assert all(after[table] == [] for table in _SCHEMA_5_TABLES)
    assert set(_SCHEMA_5_INDEXES) | {"transactions_by_height", "receipts_by_height"} <= _indexes(store)
    check = nearrpc("store", "check", "--store", store)
    assert check.returncode == 0 and check.stderr == "", check.stderr
    records = sample_records(chain)
    with open_store(store, "write") as writer, writer.batch() as batch:
        records.put(batch)
    reader = open_store(store, "read")
    try:
        assert reader.transaction(records.transactions[0].tx_hash, "any.localnet") == records.transactions[0]
        assert reader.validators(records.validators[0].epoch_id) == records.validators[0]
        later = [row.height for row in chain.account_states if row.height > 0]
        rows_at = max(set(later), key=later.count)  # the height after genesis with most account rows
        assert reader.account_changes(rows_at) == sorted(
            (row.account_id, row.view_json) for row in chain.account_states if row.height == rows_at
        )
        assert reader.check(thorough=True).ok
    finally:
        reader.close()
