"""Read a store's committed contents, for before/after comparisons in tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


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
    rows = dump(path)
    rows["meta"] = [row for row in rows["meta"] if not str(row[0]).startswith("version_")]
    return rows
