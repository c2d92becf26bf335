"""Where a store lookup's time goes, in process: random `block` requests by hash and by height
against one repeated request (an answer-cache hit), through the application as uvicorn calls it
(build_app over the store's serving reader, without the socket), side by side in one run:

    python -m bench.lookup_profile STORE [--requests 20000] [--rounds 5] [--profile hash|height|hit]

STORE: an SQLite store of bench.generate_store (or any store location). The rows alternate in
each round (hit, height, hash, hit, ...) and the CPU time per request (process_time) is the
median of the rounds; the ratios are what to compare (a hit's cost over a lookup's, as
bench.traffic_bench prints them from wrk's rates, without the HTTP and the load generator).
`--profile` runs one row under cProfile and prints its 25 costliest functions (--sort, own time by default) and
the function calls per request: a count that does not depend on how busy the machine is. Without it, every
row's calls per request are printed too, and its wall-clock time: above the CPU time on a quiet machine,
the process waited (store pages read from disk, which stall the event loop).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bench.store_bench import random_lookups
from bench.traffic_bench import repeated_block
from nearrpc.http.app import build_app
from nearrpc.store import open_store

Call = Callable[[bytes], Awaitable[None]]


def asgi_caller(app: Any) -> Call:
    """One POST / of `body` through `app`, as uvicorn hands it over; fails on a non-200 answer."""

    async def call(body: bytes) -> None:
        scope = {
            "type": "http", "method": "POST", "path": "/", "raw_path": b"/", "query_string": b"",
            "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))],
            "http_version": "1.1", "scheme": "http", "root_path": "",
            "server": ("127.0.0.1", 3030), "client": ("127.0.0.1", 50000),
        }  # fmt: skip
        status = 0

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        await app(scope, receive, send)
        if status != 200:
            sys.exit(f"bench: HTTP {status} for {body[:200]!r}")

    return call


async def cpu_per_request(call: Call, bodies: list[bytes]) -> tuple[float, float]:
    """CPU seconds and wall-clock seconds a request: on a quiet machine the difference is time the
    process waited (pages of the store read from disk block the event loop: SQLite reads inline)."""
    started, wall = time.process_time(), time.perf_counter()
    for body in bodies:
        await call(body)
    return (time.process_time() - started) / len(bodies), (time.perf_counter() - wall) / len(bodies)


async def run(args: argparse.Namespace) -> None:
    lookups = random_lookups(args.store, random.Random(20250602))
    rows = {
        "repeated block by height (hit)": [repeated_block(args.store).encode()] * args.requests,
        "random block by height": [text.encode() for text in lookups["random block by height"][: args.requests]],
        "random block by hash": [text.encode() for text in lookups["random block by hash"][: args.requests]],
    }
    reader = open_store(args.store, "serve")
    warm = asgi_caller(build_app(reader))
    for bodies in rows.values():  # the store's pages and the interpreter's caches
        for body in bodies:
            await warm(body)
    if args.profile:
        label = {"hit": 0, "height": 1, "hash": 2}[args.profile]
        name, bodies = list(rows.items())[label]
        call = asgi_caller(build_app(reader))  # a fresh answer cache: every lookup misses
        profiler = cProfile.Profile(time.process_time)  # CPU time: no waits for the disk or other jobs
        profiler.enable()
        for body in bodies:
            await call(body)
        profiler.disable()
        stats = pstats.Stats(profiler)
        calls: int = stats.total_calls  # type: ignore[attr-defined]  # set by Stats, not declared
        print(f"== cProfile of {len(bodies)} x {name}: {calls / len(bodies):.0f} function calls a request")
        stats.sort_stats(args.sort).print_stats(25)
        await reader.close()
        return
    seconds: dict[str, list[float]] = {name: [] for name in rows}
    walls: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(args.rounds):
        for name, bodies in rows.items():  # a fresh answer cache each time: every lookup misses
            cpu, wall = await cpu_per_request(asgi_caller(build_app(reader)), bodies)
            seconds[name].append(cpu)
            walls[name].append(wall)
    call_counts = {name: await calls_per_request(asgi_caller(build_app(reader)), got) for name, got in rows.items()}
    await reader.close()
    hit = statistics.median(seconds["repeated block by height (hit)"])
    print(f"{'request (in process, CPU time)':34} {'us/request':>10} {'hit / this':>10} {'calls/request':>13} "
          f"{'wall us':>8}")  # fmt: skip
    for name, values in seconds.items():
        median = statistics.median(values)
        print(f"{name:34} {median * 1e6:10.1f} {hit / median:10.2f} {call_counts[name]:13.1f} "
              f"{statistics.median(walls[name]) * 1e6:8.1f}")  # fmt: skip
    print(f"medians of {args.rounds} rounds of {args.requests} requests; 'hit / this' is the share of a cache hit's "
          "rate this row reaches; calls/request: Python function calls (cProfile's count, one more pass), "
          "which no load on the machine changes; wall us: the same requests by the clock (CPU time plus "
          "waits)")  # fmt: skip


async def calls_per_request(call: Call, bodies: list[bytes]) -> float:
    """Function calls a request makes, counted by cProfile over one pass of `bodies`."""
    profiler = cProfile.Profile()
    profiler.enable()
    for body in bodies:
        await call(body)
    profiler.disable()
    total: int = pstats.Stats(profiler).total_calls  # type: ignore[attr-defined]  # set by Stats, not declared
    return total / len(bodies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("store", help="a store of bench.generate_store")
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", choices=["hit", "height", "hash"])
    parser.add_argument("--sort", default="tottime", help="pstats order of the profile (tottime, cumulative, ...)")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
