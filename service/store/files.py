"""File-level helpers for building a store beside its final path and moving it into place."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from service.store.sqlite import SqliteChainWriter, create

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


@contextmanager
def store_built_beside(target: Path, staging: Path) -> Iterator[SqliteChainWriter]:
    """A writer on a new store at `staging` that replaces `target` only when the `with` block
    ends normally: a crash or an exception leaves `target` as it was and no staging files.
    The result uses a rollback journal (a single file, readable from a read-only folder)."""
    remove_store_files(staging)  # left over by a process that was killed
    try:
        writer = create(staging)
        try:
            yield writer
            writer.use_rollback_journal()
        finally:
            writer.close()
        fsync_path(staging)
        os.replace(staging, target)
        fsync_path(target.parent)
    except BaseException:
        remove_store_files(staging)
        raise
