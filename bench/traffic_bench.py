"""Real traffic beside a repeated request, on SQLite and PostgreSQL, side by side in one run:

    python -m bench.traffic_bench [--store BIG.sqlite] [--duration 8s] [--rounds 3]

A repeated request is answered from the answer cache after its first time; real traffic asks
for many different blocks and accounts, and most of its requests are store lookups. Each row
sends 20,000 different bodies picked at random (bench/random_bodies.lua), but the first, which
repeats one: a block by height, by hash, an account's state at a random stored height and at
`final`. Picked at random, bodies come back: once the answer cache is full it keeps a key seen
twice, so a random row's later requests are partly cache hits (up to about half of them with the
default 64 MiB, ~10,000 block answers, for 20,000 keys), and a faster server sees more of them in
its seconds. The last row asks for every stored block by hash (200,000 keys: ~5% hits), which
shows the store's own lookups best. Both servers run with their defaults (answer cache on), one
worker, pinned to --server-cpu; wrk and the PostgreSQL server (the pgserver wheel's, as the tests
use) to --load-cpu. Rounds alternate the backends (A B A B ...); the medians are printed with two
ratios: each row against the repeated request on the same backend, and PostgreSQL against
SQLite. Without --store it writes a synthetic chain of 200,000 blocks and 20,000 accounts x 5
states first (bench.generate_store's kind). Needs wrk; loopback only; everything it starts is
stopped at the end.

With --soak SECONDS it then sends all the random rows' bodies, mixed, to each backend in turn for
that long, and prints the serving process's RSS every --rss-every seconds: the memory a serving
process settles at under real traffic (issue 21 asks for at most 200 MB after 5 minutes over
1,000,000 blocks: `--store` a store of `python -m bench.generate_store`, `--soak 300`).
"""

from __future__ import annotations

import argparse
import atexit
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from bench.store_bench import (
    LUA,
    RANDOM_BODIES,
    Run,
    add_load_flags,
    bodies_file,
    compare,
    final_block,
    nearrpc,
    pin,
    random_lookups,
    rpc,
    rss_mb,
    serving,
    warm,
)
from nearrpc.sample.synthetic import SyntheticShape, write_synthetic_chain
from nearrpc.store import open_store
from tests.support.live_server import LiveServer
from tests.support.postgres import start_server, stop_server

DEFAULT_SHAPE = SyntheticShape(blocks=200_000, accounts=20_000, states=5)


def big_store(given: Path | None, folder: Path) -> Path:
    """The store a bench serves: the one given, else a synthetic chain of DEFAULT_SHAPE written
    into `folder` now (a minute or so)."""
    if given is not None:
        return given
    store = folder / "big.sqlite"
    print(f"== writing {DEFAULT_SHAPE.blocks} blocks, {DEFAULT_SHAPE.accounts} x {DEFAULT_SHAPE.states} "
          f"states to {store}", flush=True)  # fmt: skip
    write_synthetic_chain(store, DEFAULT_SHAPE)
    return store
REPEATED = "repeated block by height"
EVERY_BLOCK = "every block by hash"


def final_accounts(store: Path, rng: random.Random) -> list[str]:
    """Bodies asking for the state at `final` of accounts that have one there."""
    reader = open_store(store, "read")
    try:
        final = final_block(reader)
        accounts = sorted({account for account, _, view in reader.iter_account_states() if view is not None})
        rng.shuffle(accounts)
        existing = [a for a in accounts[: RANDOM_BODIES * 2] if reader.account_json(a, final.height) is not None]
    finally:
        reader.close()
    return [rpc("EXPERIMENTAL_view_account", {"account_id": a, "finality": "final"}) for a in existing[:RANDOM_BODIES]]


def repeated_block(store: Path) -> str:
    """One body, sent over and over: the stored block nearest the middle of the chain."""
    reader = open_store(store, "read")
    try:
        info = reader.info()
        assert info.earliest_height is not None and info.latest_height is not None
        height = (info.earliest_height + info.latest_height) // 2
        while reader.block_by_height(height) is None:
            height += 1
    finally:
        reader.close()
    return rpc("block", {"block_id": height})


def every_block_by_hash(store: Path, rng: random.Random) -> list[str]:
    """A body for each stored block, by hash, shuffled: so many keys that few come back while
    the answer cache is full, and the row shows the store's own lookups."""
    reader = open_store(store, "read")
    try:
        hashes = [block.hash for block, _ in reader.iter_blocks()]
    finally:
        reader.close()
    rng.shuffle(hashes)
    return [rpc("block", {"block_id": block_hash}) for block_hash in hashes]


def rows(store: Path, rng: random.Random) -> dict[str, list[str]]:
    lookups = random_lookups(store, rng)
    return {
        REPEATED: [repeated_block(store)], **lookups, "random view_account at final": final_accounts(store, rng),
        EVERY_BLOCK: every_block_by_hash(store, rng),
    }  # fmt: skip


def table(results: dict[str, dict[str, Run]]) -> list[str]:
    lines = [
        f"{'request (32 connections)':32} {'sqlite rps':>10} {'/ repeated':>10} {'postgresql rps':>14} "
        f"{'/ repeated':>10} {'pg/sqlite':>9} {'p99 ms sqlite/pg':>17} {'errors':>7}"
    ]
    base = results[REPEATED]
    for label, runs in results.items():
        lite, pg = runs["sqlite"], runs["postgresql"]
        lines.append(
            f"{label:32} {lite.rps:10.0f} {lite.rps / base['sqlite'].rps:10.2f} {pg.rps:14.0f} "
            f"{pg.rps / base['postgresql'].rps:10.2f} {pg.rps / lite.rps:9.2f} "
            f"{lite.p99_ms:8.2f}/{pg.p99_ms:<8.2f} {lite.errors + pg.errors:>7}"
        )
    return lines


def soak(server: LiveServer, name: str, bodies: Path, args: argparse.Namespace) -> None:
    """Random traffic for --soak seconds; the server's RSS every --rss-every seconds and at the end."""
    command = ["taskset", "-c", args.load_cpu, "wrk", "-t1", f"-c{args.connections}", f"-d{args.soak}s",
               "-s", str(LUA), server.url + "/"]  # fmt: skip
    started = time.monotonic()
    load = subprocess.Popen(command, env={**os.environ, "RPC_BODIES_FILE": str(bodies)}, stdout=subprocess.PIPE,
                            text=True)  # fmt: skip
    readings = []
    while load.poll() is None:
        left = args.soak - (time.monotonic() - started)
        if left <= 0:  # wrk is ending: one reading then
            load.wait()
        else:
            time.sleep(min(args.rss_every, left))
        readings.append(f"{time.monotonic() - started:.0f} s {rss_mb(server.pid):.0f} MB")
    out = load.stdout.read() if load.stdout else ""
    result = next((line for line in out.splitlines() if line.startswith("RESULT")), "no RESULT line")
    print(f"soak {name}: {result}", flush=True)
    print(f"soak {name}: RSS " + ", ".join(readings), flush=True)


def delayed(url: str, port: int, args: argparse.Namespace) -> str:
    """The URL of the database through a delaying proxy (on --load-cpu; stopped at exit)."""
    command = [sys.executable, "-m", "bench.latency_proxy", "--to", str(port), "--delay-ms", str(args.db_delay_ms)]
    proxy = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    atexit.register(proxy.terminate)
    pin(proxy.pid, args.load_cpu)
    line = proxy.stdout.readline() if proxy.stdout else ""
    if not line.startswith("listening "):
        sys.exit(f"bench: the latency proxy did not start ({line!r})")
    return url.replace(f":{port}/", f":{line.split()[1]}/")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, help="an SQLite store (python -m bench.generate_store); default: 200k")
    add_load_flags(parser, duration="8s")
    parser.add_argument("--soak", type=int, default=0, help="seconds of mixed random traffic per backend, then RSS")
    parser.add_argument("--rss-every", type=int, default=30)
    parser.add_argument("--no-table", action="store_true", help="only the soak")
    parser.add_argument("--db-delay-ms", type=float, default=0.0,
                        help="PostgreSQL 'on another host': this much delay each way (bench.latency_proxy)")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("bench: wrk not found (apt-get install wrk)")
    if args.store is not None and not args.store.is_file():
        sys.exit(f"bench: no store file at {args.store} (python -m bench.generate_store {args.store} writes one)")
    folder = Path(tempfile.mkdtemp(prefix="nearrpc-traffic-bench-"))
    database = start_server()
    try:
        pin(int((database.data / "postmaster.pid").read_text().split()[0]), args.load_cpu)
        store = big_store(args.store, folder)
        copy = database.create_database("traffic")
        subprocess.run(nearrpc("store", "copy", store, copy), check=True, capture_output=True)
        if args.db_delay_ms > 0:
            copy = delayed(copy, database.port, args)
            print(f"== PostgreSQL through bench.latency_proxy: +{args.db_delay_ms} ms each way", flush=True)
        bodies = rows(store, random.Random(20250602))
        warm(store, database.data)
        print(f"== real traffic against a repeated request ({args.rounds} rounds of {args.duration}, "
              f"{args.connections} connections, servers on cpu {args.server_cpu}, answer cache on)",
              flush=True)  # fmt: skip
        results: dict[str, dict[str, Run]] = {}
        with ExitStack() as stack:
            servers = serving(stack, {"sqlite": store, "postgresql": copy}, folder, args.server_cpu)
            if not args.no_table:
                for label, texts in bodies.items():
                    results[label] = compare(label, servers, bodies_file(folder, label.replace(" ", "_"), texts), args)
                print("\n".join(table(results)))
                print("ratios: medians of the rounds; '/ repeated' against the first row on the same backend")
            if args.soak:
                mixed = [text for label, texts in bodies.items() if label not in (REPEATED, EVERY_BLOCK)
                         for text in texts]  # fmt: skip
                random.Random(1).shuffle(mixed)
                for name, server in servers.items():
                    soak(server, name, bodies_file(folder, "mixed", mixed), args)
    finally:
        stop_server(database)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
