"""SQLite store files as tests see them from outside the store package: their committed rows,
for before/after comparisons, deliberate damage, and what to import elsewhere."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from nearrpc.store import open_store


def dump(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, sorted (committed data only: uncommitted WAL frames are not read)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables}
    finally:
        conn.close()


def contents(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """`dump` without the change counters in `meta`: they count writes, not data, so two stores
    that hold the same data through different write histories compare equal."""
    return without_counters(dump(path))


def without_counters(rows: dict[str, list[tuple[Any, ...]]]) -> dict[str, list[tuple[Any, ...]]]:
    """A dump (of either backend) without the change counters in `meta`."""
    return {**rows, "meta": [row for row in rows["meta"] if not str(row[0]).startswith("version_")]}


def count_rows(path: Path, table: str) -> int:
    """Committed rows of one table."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        count: int = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        return count
    finally:
        conn.close()


def drop_tables(path: Path, *tables: str) -> None:
    """Damage a store the way a broken disk or a careless operator might."""
    conn = sqlite3.connect(path)
    try:
        conn.executescript("".join(f"DROP TABLE {table};" for table in tables))
    finally:
        conn.close()


def genesis_config_of(path: Path) -> bytes:
    """The genesis config a store holds (the sample's, say, to import elsewhere)."""
    reader = open_store(path, "read")
    try:
        genesis = reader.genesis_config_json()
    finally:
        reader.close()
    assert genesis is not None, f"{path} holds no genesis config"
    return genesis
