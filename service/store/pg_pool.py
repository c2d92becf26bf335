"""The serving reader's connections: a fixed number of read-only psycopg connections handed
out first come, first served.

Why not psycopg_pool: measured on this path (random-key lookups, 32 in flight, 4
connections), its bookkeeping (locks, statistics, the connection's transaction context) cost
a third of the throughput; a list of idle connections gives the raw driver's speed. A released
connection goes straight to the oldest waiting lookup: with an asyncio.Queue, a lookup that
asked later could take it first, and under steady load one waiter lost every time until its
timeout (a 5 s wait and an INTERNAL_ERROR while 30,000 lookups a second were served). What it
keeps simple on purpose: a broken connection is closed and replaced at once; a pool short
of connections (failed attempts) tries again at most every `RETRY_SECONDS` while lookups
ask; and when the database is gone the reader's watcher closes the whole pool (waiting
lookups fail at once) and opens a new one when it is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from typing import Any, Final

import psycopg

from nearrpc.store.base import StoreOptions, StoreUnavailableError
from nearrpc.store.pg_connect import connect_kwargs, describe_target, reason

RETRY_SECONDS: Final = 0.5


class ConnectionPool:
    def __init__(self, location: str, options: StoreOptions) -> None:
        self._location = location
        self._options = options
        self._idle: deque[psycopg.AsyncConnection[Any]] = deque()
        # lookups waiting for a connection, oldest first; None wakes them to fail (closed pool)
        self._waiters: deque[asyncio.Future[psycopg.AsyncConnection[Any] | None]] = deque()
        self._count = 0  # connections open, lent or being opened
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
            self._hand_over(conn)

    def _hand_over(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """To the oldest lookup still waiting, else to the idle ones."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():  # a waiter that timed out or was cancelled is done
                waiter.set_result(conn)
                return
        self._idle.append(conn)

    def _unavailable(self, why: str) -> StoreUnavailableError:
        return StoreUnavailableError(f"PostgreSQL {describe_target(self._location)}: {why}")

    async def acquire(self) -> psycopg.AsyncConnection[Any]:
        """An idle connection; waits (in arrival order) up to the timeout for one."""
        if self._closed:
            raise self._unavailable("the connection pool is closed")
        if self._idle and not self._waiters:
            return self._idle.popleft()
        self.fill()
        waiter: asyncio.Future[psycopg.AsyncConnection[Any] | None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            async with asyncio.timeout(self._options.timeout):
                conn = await waiter
        except BaseException as exc:  # the timeout, or the lookup's request was cancelled
            if waiter.done() and not waiter.cancelled() and (handed := waiter.result()) is not None:
                self._hand_over(handed)  # handed over as the wait ended: the next one's now
            waiter.cancel()
            if isinstance(exc, TimeoutError):
                raise self._unavailable(
                    f"no connection free within {self._options.timeout} s (last failure: {self._failure})"
                ) from None
            raise
        if conn is None:  # from close(), to wake the waiting
            raise self._unavailable("the connection pool was closed")
        return conn

    def release(self, conn: psycopg.AsyncConnection[Any], *, broken: bool) -> None:
        """Give a connection back; a broken one is closed and replaced."""
        usable = not broken and not conn.closed and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        if usable and not self._closed:
            self._hand_over(conn)
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
        idle = list(self._idle)
        self._idle.clear()
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
        for conn in idle:
            self._count -= 1
            await self._close_one(conn)
        for task in list(self._tasks):
            with contextlib.suppress(Exception):
                await task
