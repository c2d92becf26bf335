"""`nearrpc serve --workers 1` against `--workers 2` on this 2-core machine, side by side, and how
the connections spread over the workers (issue 11, item 5).

Nothing is pinned here: two workers are meant to use both cores, so wrk shares them with the
server, and the figure is what one machine of two cores serves, not a per-core ratio. Rounds
alternate 1 2 2 1 ..., each after a warm-up. While wrk runs, `ss` lists the established
connections on the port with the process that holds each, which is how they spread.

    python -m bench.workers_bench --duration 10s --rounds 3 --connections 32

Needs wrk (apt-get install wrk). Loopback only; the servers it starts are stopped at the end.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import tempfile
import threading
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

from bench.store_bench import LUA, bodies_file, rpc
from nearrpc.sample import build_sample_store
from tests.support.serve_process import Served, serving

_PEER_PROCESS = re.compile(r'users:\(\("[^"]*",pid=(\d+)')


def spread(port: int) -> Counter[int]:
    """Established connections to `port`, by the pid of the process that accepted them."""
    listed = subprocess.run(["ss", "-tnpH", "state", "established", f"( sport = :{port} )"], capture_output=True,
                            text=True, check=True).stdout  # fmt: skip
    return Counter(int(found[1]) for line in listed.splitlines() if (found := _PEER_PROCESS.search(line)))


Result = tuple[float, float, int, Counter[int]]  # req/s, p99 ms, errors, connections per worker


def load(served: Served, bodies: Path, args: argparse.Namespace, duration: str) -> Result:
    """wrk against the server: rps, p99 ms, errors, and connections per worker seen mid-run."""
    port = int(served.url.rsplit(":", 1)[1])
    seen: Counter[int] = Counter()

    def sample() -> None:
        time.sleep(1.0)  # wrk has opened its connections by then
        seen.update(spread(port))

    sampler = threading.Thread(target=sample)
    sampler.start()
    command = ["wrk", "-t1", f"-c{args.connections}", f"-d{duration}", "-s", str(LUA), served.url + "/"]
    out = subprocess.run(command, env={"RPC_BODIES_FILE": str(bodies)}, capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    sampler.join()
    found = re.search(r"RESULT rps=(\S+) p50_ms=\S+ p99_ms=(\S+) errors=(\d+)", out)
    assert found, out
    return float(found[1]), float(found[2]), int(found[3]), seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", default="10s")
    parser.add_argument("--warmup", default="3s")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nearrpc-workers-") as work, ExitStack() as stack:
        folder = Path(work)
        store = folder / "sample.sqlite"
        build_sample_store(store)
        bodies = bodies_file(folder, "block_final", [rpc("block", {"finality": "final"})])
        servers = {
            workers: stack.enter_context(serving("--store", store, "--workers", str(workers), "--log-level", "warning",
                                                 log=folder / f"serve-{workers}.log"))
            for workers in (1, 2)
        }  # fmt: skip
        for served in servers.values():
            load(served, bodies, args, args.warmup)
        results: dict[int, list[Result]] = {1: [], 2: []}
        for round_index in range(args.rounds):
            order = (1, 2) if round_index % 2 == 0 else (2, 1)
            for workers in order:
                results[workers].append(load(servers[workers], bodies, args, args.duration))
        print(f"block final, {args.connections} connections, {args.rounds} rounds of {args.duration}, unpinned "
              "(wrk shares the 2 cores)")
        for workers, runs in results.items():
            rps = statistics.median(run[0] for run in runs)
            p99 = statistics.median(run[1] for run in runs)
            errors = sum(run[2] for run in runs)
            spreads = ["/".join(str(n) for n in sorted(run[3].values(), reverse=True)) for run in runs]
            print(f"  --workers {workers}: {rps:8.0f} req/s  p99 {p99:6.2f} ms  errors {errors}  "
                  f"connections per worker by round: {', '.join(spreads)}")
        one = statistics.median(run[0] for run in results[1])
        two = statistics.median(run[0] for run in results[2])
        print(f"  2 workers / 1 worker: {two / one:.2f}")


if __name__ == "__main__":
    main()
