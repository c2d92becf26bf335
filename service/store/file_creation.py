"""Creating an SQLite store file safely when other processes may be doing the same.

A new store is built in a staging file beside its path and then moved into place. Two writers
creating one store at once would share that staging file (the second one deleting the first
one's as left over from a killed build: "disk I/O error"), and the move would replace whatever
appeared at the path meanwhile. So:

- a creator holds an advisory lock (`flock`) on `.NAME.lock` beside the store from before it
  touches the staging file until the store is in place, and then removes the file; the kernel
  drops the lock of a process that dies (its empty lock file is taken over by the next creator);
- outside replace mode the store is published with a hard link, which fails rather than
  replace a file that appeared at the path, and only then is the staging name removed.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path
from typing import Final, TextIO

from nearrpc.store.base import StoreError

_POLL_SECONDS: Final = 0.05


def lock_path(store: Path) -> Path:
    return store.with_name(f".{store.name}.lock")


class CreationLock:
    """Held while one process creates (or replaces) the store at a path."""

    def __init__(self, store: Path, wait_seconds: float) -> None:
        self._path = lock_path(store)
        deadline = time.monotonic() + wait_seconds
        while True:
            held = self._try_lock(store)
            if held is not None:
                self._file: TextIO | None = held
                return
            if time.monotonic() >= deadline:
                raise StoreError(
                    f"another writer is creating the store {store}; gave up waiting for it after "
                    f"{wait_seconds:g} s (the store timeout)"
                )
            time.sleep(_POLL_SECONDS)

    def _try_lock(self, store: Path) -> TextIO | None:
        """The lock file, locked, or None when another process holds it."""
        try:
            file = self._path.open("a")
        except OSError as exc:
            raise StoreError(f"cannot create store {store}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # The holder before us removes the file when it is done; a lock on a removed file
            # excludes nobody, so it counts only if the path still names the file we locked.
            if os.fstat(file.fileno()).st_ino == os.stat(self._path).st_ino:
                return file
        except (BlockingIOError, FileNotFoundError):
            pass
        file.close()
        return None

    def release(self) -> None:
        if self._file is not None:
            self._path.unlink(missing_ok=True)  # while still holding it (see _try_lock)
            self._file.close()  # closing the file drops the lock
            self._file = None


def publish(staging: Path, store: Path, *, replace: bool) -> None:
    """Move the finished staging file to `store`: over what is there with `replace`, otherwise
    only if nothing is there (a file that appeared meanwhile is refused, never replaced)."""
    if replace:
        os.replace(staging, store)
        return
    try:
        os.link(staging, store)
    except FileExistsError:
        raise StoreError(
            f"{store} appeared while this store was being built; refusing to replace it (it is left as it is)"
        ) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        # a file system without hard links: the lock keeps other creators out; check, then move
        if os.path.lexists(store):
            raise StoreError(
                f"{store} appeared while this store was being built; refusing to replace it (it is left as it is)"
            ) from None
        os.replace(staging, store)
        return
    staging.unlink()
