"""PostgreSQL vs SQLite, side by side in one run (docs/BENCHMARKS.md):

1. methods: throughput and p99 of each method over the sample store, SQLite vs PostgreSQL;
2. big store (with --big PATH, an SQLite store from `python -m bench.generate_store`): random
   by-height, by-hash and account lookups on the big store vs the sample store, in both
   backends, and the RSS of each serving process;
3. rates: `store copy` SQLite -> PostgreSQL -> SQLite and `import blocks` into each, blocks/s.

One `nearrpc serve` (1 worker) per store, all pinned to --server-cpu; wrk and the PostgreSQL
server (a throwaway one from the pgserver wheel, as the tests use) on --load-cpu. Rounds
alternate the backends (A B A B ...) and the medians are printed with their ratios. Needs wrk
(apt-get install wrk). Loopback only; everything it starts is stopped at the end.

    python -m bench.store_bench --big /data/big.sqlite --duration 10s --rounds 3
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import orjson

from nearrpc.store import ChainReader, StoredBlock, open_store
from tests.support.live_server import LiveServer, running_server
from tests.support.postgres import PostgresServer, start_server, stop_server

HERE = Path(__file__).resolve().parent
LUA = HERE / "random_bodies.lua"
RANDOM_BODIES = 20_000


@dataclass(frozen=True)
class Run:
    rps: float
    p99_ms: float
    errors: int


def rpc(method: str, params: object, request_id: object = "bench") -> str:
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).decode()


def wrk(url: str, bodies: Path, args: argparse.Namespace, path: str = "/") -> Run:
    """wrk at `url` + `path` (the bodies go there: POST / or a method's own path)."""
    command = ["taskset", "-c", args.load_cpu, "wrk", "-t1", f"-c{args.connections}", f"-d{args.duration}",
               "--latency", "-s", str(LUA), url + path]  # fmt: skip
    out = subprocess.run(command, env={**os.environ, "RPC_BODIES_FILE": str(bodies)}, capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    found = re.search(r"RESULT rps=(\S+) p50_ms=\S+ p99_ms=(\S+) errors=(\d+)", out)
    assert found, out
    return Run(float(found[1]), float(found[2]), int(found[3]))


def pin(pid: int, cpu: str) -> None:
    subprocess.run(["taskset", "-a", "-p", "-c", cpu, str(pid)], check=True, capture_output=True)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def compare(
    label: str, servers: dict[str, LiveServer], bodies: Path | dict[str, Path], args: argparse.Namespace,
    path: str = "/",
) -> dict[str, Run]:
    """A B A B rounds of a load on each server (the same bodies, or each its own); the medians."""
    each = bodies if isinstance(bodies, dict) else dict.fromkeys(servers, bodies)
    runs: dict[str, list[Run]] = {name: [] for name in servers}
    warm = argparse.Namespace(**{**vars(args), "duration": args.warmup})
    for name, server in servers.items():
        wrk(server.url, each[name], warm, path)
    for round_index in range(args.rounds):
        order = list(servers) if round_index % 2 == 0 else list(servers)[::-1]
        for name in order:
            runs[name].append(wrk(servers[name].url, each[name], args, path))
    medians = {
        name: Run(statistics.median(r.rps for r in got), statistics.median(r.p99_ms for r in got),
                  sum(r.errors for r in got))
        for name, got in runs.items()
    }  # fmt: skip
    cells = "  ".join(f"{name} {run.rps:8.0f}/s p99 {run.p99_ms:6.2f} ms err {run.errors}"
                      for name, run in medians.items())  # fmt: skip
    print(f"{label:34s} {cells}", flush=True)
    return medians


def bodies_file(folder: Path, name: str, bodies: list[str]) -> Path:
    path = folder / f"{name}.jsonl"
    path.write_text("\n".join(bodies) + "\n")
    return path


def final_block(reader: ChainReader) -> StoredBlock:
    """The store's final block (its head's last final block), which the benches ask about."""
    head = reader.head()
    assert head is not None, "the store holds no blocks"
    final = reader.block_by_hash(head.last_final_block)
    assert final is not None, "the store lacks its head's final block"
    return final


def sample_bodies(store: Path) -> dict[str, list[str]]:
    """Bodies that each answer a result on the sample store: fixed references, stored heights,
    accounts that exist at the final block."""
    reader = open_store(store, "read")
    try:
        heights = [block.height for block, canonical in reader.iter_blocks() if canonical]
        final = final_block(reader)
        accounts = sorted({account for account, _, _ in reader.iter_account_states()
                           if reader.account_json(account, final.height) is not None})  # fmt: skip
    finally:
        reader.close()
    return {
        "genesis_config": [rpc("genesis_config", None)],
        "client_config": [rpc("client_config", None)],
        "block final": [rpc("block", {"finality": "final"})],
        "block by height": [rpc("block", {"block_id": h}) for h in heights],
        "protocol_config final": [rpc("EXPERIMENTAL_protocol_config", {"finality": "final"})],
        "view_account final": [rpc("EXPERIMENTAL_view_account", {"account_id": a, "finality": "final"})
                               for a in accounts],
    }  # fmt: skip


def random_lookups(store: Path | str, rng: random.Random, top: int | None = None) -> dict[str, list[str]]:
    """Random by-height, by-hash and account lookups that each find what they ask for: stored
    heights, their hashes, and (account, height) pairs of stored states; at or below `top` (a
    fork's pinned head) when given."""
    reader = open_store(store, "read")
    try:
        info = reader.info()
        assert info.earliest_height is not None and info.latest_height is not None
        highest = info.latest_height if top is None else min(top, info.latest_height)
        blocks: list[StoredBlock] = []
        while len(blocks) < RANDOM_BODIES:
            block = reader.block_by_height(rng.randint(info.earliest_height, highest))
            if block is not None:
                blocks.append(block)
        states: list[tuple[str, int]] = []  # a uniform sample of the stored states (reservoir)
        for seen, (account, height, view) in enumerate(reader.iter_account_states()):
            if view is None or height > highest:
                continue
            if len(states) < RANDOM_BODIES:
                states.append((account, height))
            elif (slot := rng.randrange(seen + 1)) < RANDOM_BODIES:
                states[slot] = (account, height)
    finally:
        reader.close()
    return {
        "random block by height": [rpc("block", {"block_id": block.height}) for block in blocks],
        "random block by hash": [rpc("block", {"block_id": block.hash}) for block in blocks],
        "random view_account at height": [
            rpc("EXPERIMENTAL_view_account", {"account_id": account, "block_id": height}) for account, height in states
        ],
    }


def timed(command: list[str]) -> float:
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{done.stderr}")
    return time.monotonic() - started


def nearrpc(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "nearrpc", *map(str, args)]


def serving(
    stack: ExitStack, stores: dict[str, Path | str], folder: Path, cpu: str, *extra: str
) -> dict[str, LiveServer]:
    """A server per store (stopped when `stack` closes), each pinned to `cpu`. Unchecked at start:
    the quick check of a big store takes minutes (README, "Operating it")."""
    servers = {}
    for name, where in stores.items():
        servers[name] = stack.enter_context(
            running_server(where, folder / f"{name}.log", "--store-check", "off", *extra)
        )
        pin(servers[name].pid, cpu)
    return servers


def warm(*paths: Path) -> None:
    """Read files (or every file under folders) once, so lookups start from the page cache."""
    for path in paths:
        for file in [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]:
            with file.open("rb") as data:
                while data.read(1 << 20):
                    pass


def export_blocks(store: Path, count: int, path: Path) -> int:
    """The genesis config and the first `count` blocks of `store` as a JSON-lines import file."""
    reader = open_store(store, "read")
    written = 0
    try:
        with path.open("wb") as out:
            out.write((reader.genesis_config_json() or b"") + b"\n")
            for block, canonical in reader.iter_blocks():
                if written == count:
                    break
                if canonical:
                    out.write(block.view_json + b"\n")
                    written += 1
    finally:
        reader.close()
    return written


def compare_methods(sample: Path, sample_pg: str, folder: Path, args: argparse.Namespace) -> None:
    with ExitStack() as stack:
        servers = serving(stack, {"sqlite": sample, "postgresql": sample_pg}, folder, args.server_cpu)
        for label, bodies in sample_bodies(sample).items():
            medians = compare(label, servers, bodies_file(folder, label.replace(" ", "_"), bodies), args)
            print(f"{'':34s} postgresql/sqlite throughput {medians['postgresql'].rps / medians['sqlite'].rps:.2f}")


def add_load_flags(parser: argparse.ArgumentParser, *, duration: str) -> None:
    """The flags `wrk` and `compare` read: how long, how often, how wide, on which cores."""
    parser.add_argument("--duration", default=duration)
    parser.add_argument("--warmup", default="2s", help="per server, before the measured rounds")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--server-cpu", default="0")
    parser.add_argument("--load-cpu", default="1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--big", type=Path, help="a big SQLite store (python -m bench.generate_store)")
    add_load_flags(parser, duration="10s")
    parser.add_argument("--import-blocks", type=int, default=20_000, help="blocks for the import rate")
    parser.add_argument("--no-methods", action="store_true", help="skip section 1 (methods over the sample store)")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("bench: wrk not found (apt-get install wrk)")
    folder = Path(tempfile.mkdtemp(prefix="nearrpc-store-bench-"))
    rng = random.Random(20250602)
    database: PostgresServer = start_server()
    try:
        pin(int((database.data / "postmaster.pid").read_text().split()[0]), args.load_cpu)
        sample = folder / "sample.sqlite"
        subprocess.run(nearrpc("sample", sample), check=True, capture_output=True)
        sample_pg = database.create_database("sample")
        subprocess.run(nearrpc("store", "copy", sample, sample_pg), check=True, capture_output=True)
        print(f"== 1. methods over the sample store: SQLite vs PostgreSQL ({args.rounds} rounds of "
              f"{args.duration}, {args.connections} connections, server on cpu {args.server_cpu})")
        if args.no_methods:
            print("skipped (--no-methods)")
        else:
            compare_methods(sample, sample_pg, folder, args)
        if args.big is None:
            print("== 2., 3.: give --big PATH (python -m bench.generate_store PATH) for the big-store figures")
            return
        print("== 3. rates (blocks/s)")
        big_reader = open_store(args.big, "read")
        big_info = big_reader.info()
        big_reader.close()
        big_pg = database.create_database("big")
        seconds = timed(nearrpc("store", "copy", args.big, big_pg))
        print(f"store copy SQLite -> PostgreSQL: {big_info.block_count / seconds:.0f} blocks/s "
              f"({big_info.block_count} blocks, {big_info.account_state_count} account states, {seconds:.0f} s)")
        back = folder / "back.sqlite"
        seconds = timed(nearrpc("store", "copy", big_pg, back))
        print(f"store copy PostgreSQL -> SQLite: {big_info.block_count / seconds:.0f} blocks/s ({seconds:.0f} s)")
        back.unlink()
        exported = export_blocks(args.big, args.import_blocks, folder / "blocks.jsonl")
        seconds = timed(nearrpc("import", "blocks", folder / "blocks.jsonl", "--store", folder / "imported.sqlite"))
        print(f"import blocks into SQLite: {exported / seconds:.0f} blocks/s ({exported} blocks)")
        imported_pg = database.create_database("imported")
        seconds = timed(nearrpc("import", "blocks", folder / "blocks.jsonl", "--store", imported_pg))
        print(f"import blocks into PostgreSQL: {exported / seconds:.0f} blocks/s ({exported} blocks)")
        print("== 2. random lookups: big store vs sample store, per backend (answer cache off: every "
              "request is a store lookup)")
        stores: dict[str, Path | str] = {
            "sample-sqlite": sample, "big-sqlite": args.big, "sample-postgresql": sample_pg, "big-postgresql": big_pg,
        }  # fmt: skip
        lookups = {name: random_lookups(store, rng) for name, store in stores.items()}
        warm(args.big, database.data)
        with ExitStack() as stack:
            servers = serving(stack, stores, folder, args.server_cpu, "--answer-cache-mb", "0")
            for label in lookups["big-sqlite"]:
                for backend in ("sqlite", "postgresql"):
                    pair = [f"sample-{backend}", f"big-{backend}"]
                    files = {name: bodies_file(folder, f"{name}-{label.replace(' ', '_')}", lookups[name][label])
                             for name in pair}  # fmt: skip
                    medians = compare(f"{label} [{backend}]", {name: servers[name] for name in pair}, files, args)
                    ratio = medians[f"big-{backend}"].rps / medians[f"sample-{backend}"].rps
                    print(f"{'':34s} big/sample throughput ({backend}) {ratio:.2f}")
        print("== 2b. RSS of a serving process on the big store, default settings (answer cache on), "
              "after each random load once")
        with ExitStack() as stack:
            big_servers = serving(stack, {"big-sqlite": args.big, "big-postgresql": big_pg}, folder, args.server_cpu)
            for name, server in big_servers.items():
                for label, bodies in lookups[name].items():
                    wrk(server.url, bodies_file(folder, f"rss-{name}-{label.replace(' ', '_')}", bodies), args)
                print(f"RSS of the {name} serving process after its runs: {rss_mb(server.pid):.0f} MB")
    finally:
        stop_server(database)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
