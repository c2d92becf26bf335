"""The serving reader's connections: a fixed number of read-only psycopg connections handed
out first come, first served.

Why not psycopg_pool: measured on this path (random-key lookups, 32 in flight, 4
connections), its bookkeeping (locks, statistics, the connection's transaction context) cost
a third of the throughput; an asyncio.Queue of connections gives the raw driver's speed. What
it keeps simple on purpose: a broken connection is closed and replaced at once; a pool short
of connections (failed attempts) tries again at most every `RETRY_SECONDS` while lookups
ask; and when the database is gone the reader's watcher closes the whole pool (waiting
lookups fail at once) and opens a new one when it is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any, Final

import psycopg

from nearrpc.store.base import StoreOptions, StoreUnavailableError
from nearrpc.store.pg_connect import connect_kwargs, describe_target, reason

RETRY_SECONDS: Final = 0.5


class ConnectionPool:
    def __init__(self, location: str, options: StoreOptions) -> None:
        self._location = location
        self._options = options
        self._idle: asyncio.Queue[psycopg.AsyncConnection[Any] | None] = asyncio.Queue()
        self._count = 0  # connections open, lent or being opened
        self._waiting = 0  # lookups waiting for a connection
        self._closed = False
        self._last_failure = 0.0
        self._failure = "no connection yet"
        self._tasks: set[asyncio.Task[None]] = set()

    def _background(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def fill(self) -> None:
        """Open connections (in the background) up to the pool size."""
        if time.monotonic() - self._last_failure < RETRY_SECONDS:
            return
        while not self._closed and self._count < self._options.pool_size:
            self._count += 1
            self._background(self._open_one())

    async def _open_one(self) -> None:
        try:
            conn = await psycopg.AsyncConnection.connect(
                self._location, **connect_kwargs(self._options, read_only=True)
            )
        except (psycopg.Error, OSError) as exc:
            self._count -= 1
            self._last_failure = time.monotonic()
            self._failure = reason(exc, self._location)
            return
        if self._closed:
            self._count -= 1
            await conn.close()
        else:
            self._idle.put_nowait(conn)

    def _unavailable(self, why: str) -> StoreUnavailableError:
        return StoreUnavailableError(f"PostgreSQL {describe_target(self._location)}: {why}")

    async def acquire(self) -> psycopg.AsyncConnection[Any]:
        """An idle connection; waits (in arrival order) up to the timeout for one."""
        if self._closed:
            raise self._unavailable("the connection pool is closed")
        if self._waiting == 0 and not self._idle.empty():
            conn = self._idle.get_nowait()
        else:
            self.fill()
            self._waiting += 1
            try:
                async with asyncio.timeout(self._options.timeout):
                    conn = await self._idle.get()
            except TimeoutError:
                raise self._unavailable(
                    f"no connection free within {self._options.timeout} s (last failure: {self._failure})"
                ) from None
            finally:
                self._waiting -= 1
        if conn is None:  # put there by close() to wake the waiting
            raise self._unavailable("the connection pool was closed")
        return conn

    def release(self, conn: psycopg.AsyncConnection[Any], *, broken: bool) -> None:
        """Give a connection back; a broken one is closed and replaced."""
        usable = not broken and not conn.closed and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        if usable and not self._closed:
            self._idle.put_nowait(conn)
            return
        self._count -= 1
        self._background(self._close_one(conn))
        if not self._closed:
            self._last_failure = 0.0  # a replacement now, whatever failed before
            self.fill()

    @staticmethod
    async def _close_one(conn: psycopg.AsyncConnection[Any]) -> None:
        with contextlib.suppress(Exception):
            await conn.close()

    async def close(self) -> None:
        """Close every idle connection; lookups waiting for one fail now, those holding one
        close it when they give it back."""
        self._closed = True
        idle = []
        while not self._idle.empty():
            conn = self._idle.get_nowait()
            if conn is not None:
                idle.append(conn)
        for _ in range(self._waiting):
            self._idle.put_nowait(None)
        for conn in idle:
            self._count -= 1
            await self._close_one(conn)
        for task in list(self._tasks):
            with contextlib.suppress(Exception):
                await task
