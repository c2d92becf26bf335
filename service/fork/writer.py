"""The fork's writes: one batch per fetched answer, on a thread of its own.

A store writer's connection belongs to the thread that opened it (SQLite's rule), and a write
must not hold the event loop: the writer is opened, used and closed on one worker thread, and
the loop awaits each batch. A batch that fails (the spec refuses the answer, the store cannot
write) rolls back whole: nothing of that answer is kept. Commits do not wait for the disk: what a
fork keeps can be fetched again, and a miss should not wait several milliseconds for an fsync.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from nearrpc.store import (
    ACCOUNTS_CHOSEN,
    ChainReader,
    ChainWriter,
    StoreLocation,
    StoreOptions,
    StoreVersion,
    WriteBatch,
    open_store,
)

Writes = Callable[[WriteBatch], None]


@dataclasses.dataclass(frozen=True, slots=True)
class AfterReading:
    """Writes planned from the store as committed, read on the writer's thread just before the
    batch: no other write of this fork falls between what was read and what is written."""

    plan: Callable[[ChainReader], Writes]


Keep = Writes | AfterReading  # what a fetched answer writes


class ForkWriter:
    def __init__(self, location: StoreLocation, options: StoreOptions | None) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nearrpc-fork-writer")
        self._writer: ChainWriter | None = None
        # opened now, before the server reads: SQLite switches a store to WAL mode on the first
        # writer's open, which waits for readers that are inside a read
        self._executor.submit(self._open, location, options).result()

    def _open(self, location: StoreLocation, options: StoreOptions | None) -> None:
        # what a fork keeps can be fetched again: its commits do not wait for the disk (a power
        # cut may lose the last few; the store stays consistent)
        relaxed = dataclasses.replace(options or StoreOptions(), durable_commits=False)
        self._writer = open_store(location, "write", relaxed)

    def _write(self, writes: Keep) -> StoreVersion:
        assert self._writer is not None  # opened in __init__, on this thread
        if isinstance(writes, AfterReading):
            writes = writes.plan(self._writer.reader())
        with self._writer.batch() as batch:
            writes(batch)
            # a fork holds the accounts it was asked for, each at the heights asked: its store
            # says so (`store.held`), so a plain server over it never takes a row it lacks for
            # "no such account"; with every batch, so a store forked before the mark gets it too
            batch.put_fetched(ACCOUNTS_CHOSEN)
        return self._writer.reader().version()

    async def write(self, writes: Keep) -> StoreVersion:
        """Run `writes` in one batch: committed whole when this returns, or not at all; the
        store's change counters after it."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._write, writes)

    def _close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def close(self) -> None:
        self._executor.submit(self._close).result()
        self._executor.shutdown()
