"""The serving reader's connection pool on a real PostgreSQL: connections go to the waiting
lookups in the order they asked, also when the lookup that gives one back asks again at once
(under steady load that lookup took it every time, and a waiter timed out)."""

from __future__ import annotations

import asyncio
import time

from nearrpc.store import StoreOptions
from nearrpc.store.pg_pool import ConnectionPool
from tests.support.postgres import PostgresServer


def test_a_released_connection_goes_to_the_oldest_waiter(postgres: PostgresServer) -> None:
    async def scenario() -> list[str]:
        pool = ConnectionPool(postgres.url("postgres"), StoreOptions(pool_size=1, timeout=5))
        served: list[str] = []
        try:
            first = await pool.acquire()

            async def lookup(name: str) -> None:
                conn = await pool.acquire()
                served.append(name)
                pool.release(conn, broken=False)

            waiters = [asyncio.create_task(lookup(name)) for name in ("b", "c", "d")]
            await asyncio.sleep(0.05)  # all three are waiting, in this order
            pool.release(first, broken=False)
            again = asyncio.create_task(lookup("a again"))  # asks right after giving it back
            await asyncio.gather(*waiters, again)
        finally:
            await pool.close()
        return served

    assert asyncio.run(scenario()) == ["b", "c", "d", "a again"]


def test_steady_load_starves_no_lookup(postgres: PostgresServer) -> None:
    # 32 lookups in a loop over 2 connections for 3 s, each allowed 1 s to get one
    async def scenario() -> int:
        pool = ConnectionPool(postgres.url("postgres"), StoreOptions(pool_size=2, timeout=1))
        done = 0
        stop = time.monotonic() + 3

        async def loop() -> None:
            nonlocal done
            while time.monotonic() < stop:
                conn = await pool.acquire()
                try:
                    await (await conn.execute("SELECT 1")).fetchone()
                finally:
                    pool.release(conn, broken=False)
                done += 1

        try:
            await asyncio.gather(*(loop() for _ in range(32)))
        finally:
            await pool.close()
        return done

    assert asyncio.run(scenario()) > 1000
