"""The serving reader's lookups on threads other than the event loop's (a view call on a worker
thread reads its contract's storage): each thread reads on a connection of its own, opened on it,
so a read is a plain call on that thread rather than a trip to the event loop and back (tens of
microseconds each, thousands in a storage-heavy view).

As on the loop (sqlite_serving.py), a thread's reads share a read transaction (a third of an
SQLite lookup is taking the lock and reading the header page again), one per view call (its
snapshot taken after the call's block was resolved), which lasts at most `VERSION_CHECK_SECONDS`:
the event loop ends it by a timer, so a worker gone idle never holds a snapshot that keeps a
writer's WAL from being folded back. A thread's connection is opened on the
file the server serves (its identity checked before and after the open) and dropped when the
server follows a replaced file; `ThreadReaders.read` returns `REPLACED` when the file at the path
is not the one served, and the caller reads on the loop instead.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

from nearrpc.store.base import StoreError
from nearrpc.store.sqlite import SqliteChainReader, open_reader

log = logging.getLogger("nearrpc.store")

VERSION_CHECK_SECONDS: Final = 0.001  # the longest a thread's read transaction lasts (as on the loop)


class Replaced:
    """The file at the store's path is not the one served (replaced, not followed yet)."""


REPLACED: Final = Replaced()


class _ThreadReader:
    """One thread's connection; `lock` is held while a lookup runs on it, so the loop's timer
    ends its read transaction between lookups."""

    def __init__(self, reader: SqliteChainReader, generation: int) -> None:
        self.reader = reader
        self.generation = generation
        self.lock = threading.Lock()
        self.reading = False  # a read transaction is open
        self.call = -1  # the call it was opened for (its snapshot is as new as that call needs)
        self.closed = False

    def end_read(self) -> None:
        with self.lock:
            if self.reading and not self.closed:
                self.reading = False
                try:
                    self.reader.end_read()
                except StoreError as failure:  # the thread's next lookup meets the cause
                    log.error("%s", failure)

    def close(self) -> None:
        with self.lock:
            if not self.closed:
                self.closed = True
                self.reader.close()


class _Local(threading.local):
    reader: _ThreadReader | None = None


class ThreadReaders:
    """The per-thread connections of one served store file."""

    def __init__(self, path: Path, file_identity: Callable[[Path], tuple[int, int]]) -> None:
        self._path = path
        self._file_identity = file_identity
        self._local = _Local()
        self._opened: list[_ThreadReader] = []  # every thread's, to close them
        self._lock = threading.Lock()
        self._closed = False

    def read(
        self,
        lookup: Callable[[SqliteChainReader], bytes | None],
        identity: tuple[int, int],
        generation: int,
        loop: asyncio.AbstractEventLoop | None,
        call: int,
    ) -> bytes | Replaced | None:
        """`lookup` run on this thread's connection to the file of `identity` (opened now when the
        thread has none of `generation`), inside a read transaction the loop ends by a timer (no
        loop: each lookup its own transaction); REPLACED when that file is no longer at the path.
        A read of another `call` than the open transaction's begins a new one: the call's block
        was resolved on the loop before it was handed over, and a snapshot taken before that
        might not hold the block's rows yet."""
        mine = self._local.reader
        if mine is None or mine.generation != generation or mine.closed:
            opened = self._open(identity, generation)
            if opened is None:
                return REPLACED
            mine = self._local.reader = opened
        with mine.lock:
            if mine.closed:
                raise StoreError(f"{self._path}: the store was closed")
            if mine.reading and mine.call != call:
                mine.reading = False
                mine.reader.end_read()
            if not mine.reading and loop is not None and self._end_later(loop, mine):
                mine.reader.begin_read()
                mine.reading, mine.call = True, call
            return lookup(mine.reader)

    def _end_later(self, loop: asyncio.AbstractEventLoop, mine: _ThreadReader) -> bool:
        """Have the loop end `mine`'s read transaction VERSION_CHECK_SECONDS from now; False
        when the loop is closed (the lookup then runs in a transaction of its own)."""
        try:
            loop.call_soon_threadsafe(loop.call_later, VERSION_CHECK_SECONDS, mine.end_read)
        except RuntimeError:
            return False
        return True

    def _open(self, identity: tuple[int, int], generation: int) -> _ThreadReader | None:
        previous = self._local.reader
        if previous is not None:
            previous.close()
        # the same file as the server's connection: the path's identity before and after the open
        # is the one served, so the file opened is that one
        try:
            if self._file_identity(self._path) != identity:
                return None
            reader = open_reader(self._path)
            if self._file_identity(self._path) != identity:
                reader.close()
                return None
        except OSError:
            return None
        opened = _ThreadReader(reader, generation)
        with self._lock:
            if self._closed:
                opened.close()
                raise StoreError(f"{self._path}: the store was closed")
            self._opened = [kept for kept in self._opened if not kept.closed]
            self._opened.append(opened)
        return opened

    def drop(self) -> None:
        """Close every thread's connection (the server follows a replaced file): each thread
        opens the new one at its next lookup."""
        with self._lock:
            opened, self._opened = self._opened, []
        for reader in opened:
            reader.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self.drop()
