"""Stores for tests."""

from __future__ import annotations

from pathlib import Path

from nearrpc.store import open_store


def create_empty_store(path: Path) -> None:
    """A store with the current schema and no data (it appears with its first commit)."""
    with open_store(path, "write") as writer, writer.batch():
        pass
