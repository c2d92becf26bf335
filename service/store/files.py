"""File-level helpers for building a store beside its final path and moving it into place."""

from __future__ import annotations

import os
from pathlib import Path

# An SQLite store is its file plus, at times, these companions.
_SIDE_FILES = ("", "-wal", "-shm", "-journal")


def remove_store_files(path: Path) -> None:
    """Delete a store file and any journal files SQLite left beside it."""
    for suffix in _SIDE_FILES:
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def fsync_path(path: Path) -> None:
    """Flush a file (or a folder's entries, after a rename) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
