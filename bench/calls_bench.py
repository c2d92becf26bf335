"""Contract view calls beside a `view_account` hit, on one server, in one run (issue 34):

    python -m bench.calls_bench [--duration 8s] [--rounds 3] [--connections 32]

Three rows over the sample store, all `query` at `final` through POST /:
- `view_account` of token.localnet, repeated: an answer-cache hit, the row the others are
  measured against;
- `ft_balance_of` of token.localnet for one holder, repeated: executed once, then a hit;
- `ft_balance_of` with distinct arguments at every request (bench/random_bodies.lua): three in four
  ask for an account id never asked before (no balance: the contract reads a missing key), one
  in four a holder's balance with a member the contract skips, so no two requests share params
  and the answer cache answers none of them: each one is a fresh execution on Wasmtime.
Each row runs at --connections (throughput, p50, p99) and at 1 connection (the latency of one
call alone). One `nearrpc serve` (1 worker, defaults: answer cache and metrics on) pinned to
--server-cpu, wrk to --load-cpu. Rounds alternate the rows' order (A B C, C B A, ...); the
throughput ratios are medians of the per-round ratios against the `view_account` hit of the same
round. The issue's goals are printed against the figures: a fresh execution at most 1 ms p50, at
least 0.3 of the hit's throughput, a repeated call at the hit's speed (0.9 of it, here). Before
the rounds every row's body is sent once and its answer shown; a row whose answer is not a
result stops the bench. Needs wrk; loopback only; the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson

from bench.store_bench import add_load_flags, bodies_file, final_block, nearrpc, rpc, serving
from nearrpc.store import open_store

HERE = Path(__file__).resolve().parent
LUA = HERE / "random_bodies.lua"
TOKEN = "token.localnet"
ARGS_MARK = "@ARGS@"  # random_bodies.lua puts fresh arguments there at each request
HIT = "view_account hit (repeated)"
REPEATED = "ft_balance_of repeated"
FRESH = "ft_balance_of distinct args"
CALL_RESULT = '"result":['  # a call's result bytes; a failed call is a result with an "error" text
# The goals for the fresh row, and "at hit speed" read as 0.9 of the hit's throughput.
FRESH_P50_MS = 1.0
FRESH_SHARE = 0.3
REPEATED_SHARE = 0.9
_runs = itertools.count(1)  # names each wrk run, so fresh arguments never repeat an earlier run's


@dataclass(frozen=True)
class Row:
    bodies: list[str]
    expect: str  # what every answer must hold to count as a success


@dataclass(frozen=True)
class Run:
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    requests: int


def call(args: str) -> str:
    params = {"request_type": "call_function", "account_id": TOKEN, "method_name": "ft_balance_of",
              "args_base64": args, "finality": "final"}  # fmt: skip
    return rpc("query", params)


def balance_args(account: str) -> str:
    return base64.b64encode(orjson.dumps({"account_id": account})).decode()


def holders(store: Path) -> list[str]:
    """The accounts holding a token balance at the final block, largest first (the token's
    state: "b" + account id -> u128 little-endian)."""
    reader = open_store(store, "read")
    try:
        final = final_block(reader)
        rows = reader.contract_state(TOKEN, b"b", final.height, 10_000)
    finally:
        reader.close()
    balances = {key[1:].decode(): int.from_bytes(value, "little") for key, value in rows}
    found = sorted((account for account, amount in balances.items() if amount > 0), key=lambda a: -balances[a])
    if not found:
        sys.exit(f"bench: no account holds a balance of {TOKEN} at the final block of {store}")
    return found


def rows(store: Path) -> dict[str, Row]:
    view = {"request_type": "view_account", "account_id": TOKEN, "finality": "final"}
    return {
        HIT: Row([rpc("query", view)], '"amount"'),
        REPEATED: Row([call(balance_args(holders(store)[0]))], CALL_RESULT),
        FRESH: Row([call(ARGS_MARK)], CALL_RESULT),
    }


def show_answers(url: str, table: dict[str, Row], store: Path) -> None:
    """Each row's body once (the fresh row's with a holder's and a new account's arguments), its
    answer shown; a row that does not answer a result stops the bench before any figure."""
    samples = [(label, row.bodies[0], row.expect) for label, row in table.items() if ARGS_MARK not in row.bodies[0]]
    template, expect = table[FRESH].bodies[0], table[FRESH].expect
    for account in (holders(store)[-1], "fresh-check.localnet"):
        samples.append((f"{FRESH} ({account})", template.replace(ARGS_MARK, balance_args(account)), expect))
    with httpx.Client(timeout=10.0) as client:
        for label, body, expect in samples:
            answer = client.post(url + "/", content=body, headers={"Content-Type": "application/json"})
            if answer.status_code != 200 or expect not in answer.text:
                sys.exit(f"bench: {label} is not answered a result: HTTP {answer.status_code} {answer.text[:300]}")
            result = orjson.loads(answer.content)["result"]
            shown = bytes(result["result"]).decode() if "result" in result else f"amount {result['amount']}"
            print(f"answer: {label}: HTTP 200, {shown} at height {result['block_height']}", flush=True)


def wrk(url: str, row: Row, connections: int, duration: str, args: argparse.Namespace, folder: Path) -> Run:
    bodies = bodies_file(folder, "bodies", row.bodies)
    # a 5 s timeout (wrk: 2 s): a slow answer is measured, not dropped as an error
    command = ["taskset", "-c", args.load_cpu, "wrk", "-t1", f"-c{connections}", f"-d{duration}", "--timeout", "5s",
               "--latency", "-s", str(LUA), url + "/"]  # fmt: skip
    environment = {**os.environ, "RPC_BODIES_FILE": str(bodies), "RPC_EXPECT": row.expect, "RPC_RUN": f"r{next(_runs)}",
                   "CALL_HOLDERS": ",".join(args.holders)}  # fmt: skip
    out = subprocess.run(command, env=environment, capture_output=True, text=True, check=True).stdout
    found = re.search(r"RESULT rps=(\S+) p50_ms=(\S+) p99_ms=(\S+) errors=(\d+) requests=(\d+)", out)
    if found is None:
        sys.exit(f"bench: wrk printed no RESULT line:\n{out}")
    return Run(float(found[1]), float(found[2]), float(found[3]), int(found[4]), int(found[5]))


def executions(url: str) -> float | None:
    """The view calls the server executed, from /metrics (None: it counts none there)."""
    text = httpx.get(url + "/metrics", timeout=10.0).text
    counted = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("nearrpc_view_calls_total{") and 'path="local"' in line]  # fmt: skip
    return sum(counted) if counted else None


def measure(url: str, table: dict[str, Row], args: argparse.Namespace, folder: Path) -> dict[str, list[Run]]:
    """Per row: its runs at --connections, then (key "<row> 1c") its runs at 1 connection."""
    runs: dict[str, list[Run]] = {key: [] for label in table for key in (label, f"{label} 1c")}
    for round_index in range(args.rounds):
        order = list(table) if round_index % 2 == 0 else list(table)[::-1]
        for label in order:
            runs[label].append(wrk(url, table[label], args.connections, args.duration, args, folder))
            runs[f"{label} 1c"].append(wrk(url, table[label], 1, args.latency_duration, args, folder))
        print(f"round {round_index + 1}: " + ", ".join(f"{label} {runs[label][-1].rps:.0f}/s" for label in order),
              flush=True)  # fmt: skip
    return runs


def median_ratio(runs: dict[str, list[Run]], label: str) -> float:
    return statistics.median(row.rps / hit.rps for row, hit in zip(runs[label], runs[HIT], strict=True))


def report(runs: dict[str, list[Run]], connections: int) -> list[str]:
    lines = [
        f"{'row':30} {'rps':>8} {'/ hit':>6} {f'p50/p99 ms ({connections} conns)':>24} "
        f"{'p50/p99 ms (1 conn)':>20} {'errors':>7} {'requests':>9}"
    ]
    for label in (HIT, REPEATED, FRESH):
        wide, one = runs[label], runs[f"{label} 1c"]
        lines.append(
            f"{label:30} {statistics.median(r.rps for r in wide):8.0f} {median_ratio(runs, label):6.2f} "
            f"{statistics.median(r.p50_ms for r in wide):15.3f}/{statistics.median(r.p99_ms for r in wide):<8.3f} "
            f"{statistics.median(r.p50_ms for r in one):11.3f}/{statistics.median(r.p99_ms for r in one):<8.3f} "
            f"{sum(r.errors for r in wide + one):7d} {sum(r.requests for r in wide + one):9d}"
        )
    fresh_p50 = statistics.median(r.p50_ms for r in runs[f"{FRESH} 1c"])
    goals = [
        (f"fresh execution p50 (1 connection) {fresh_p50:.3f} ms", f"<= {FRESH_P50_MS} ms", fresh_p50 <= FRESH_P50_MS),
        (f"fresh / hit throughput {median_ratio(runs, FRESH):.2f}", f">= {FRESH_SHARE}",
         median_ratio(runs, FRESH) >= FRESH_SHARE),
        (f"repeated / hit throughput {median_ratio(runs, REPEATED):.2f}", f">= {REPEATED_SHARE} (hit speed)",
         median_ratio(runs, REPEATED) >= REPEATED_SHARE),
    ]  # fmt: skip
    lines.append("goals (issue 34):")
    lines += [f"  {figure:48} goal {goal:20} {'met' if met else 'MISSED'}" for figure, goal, met in goals]
    lines.append("/ hit: median of the per-round ratios to the view_account hit; latencies: medians of the rounds")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_load_flags(parser, duration="8s")
    parser.add_argument("--latency-duration", help="each row's run at 1 connection (default: --duration)")
    args = parser.parse_args()
    args.latency_duration = args.latency_duration or args.duration
    if shutil.which("wrk") is None:
        sys.exit("bench: wrk not found (apt-get install wrk)")
    folder = Path(tempfile.mkdtemp(prefix="nearrpc-calls-bench-"))
    try:
        store = folder / "sample.sqlite"
        subprocess.run(nearrpc("sample", store), check=True, capture_output=True)
        args.holders = holders(store)
        table = rows(store)
        with ExitStack() as stack:
            server = serving(stack, {"sample": store}, folder, args.server_cpu)["sample"]
            show_answers(server.url, table, store)
            print(f"== view calls beside a view_account hit ({args.rounds} rounds of {args.duration} at "
                  f"{args.connections} connections and {args.latency_duration} at 1; server on cpu "
                  f"{args.server_cpu}, wrk on cpu {args.load_cpu}, answer cache on)", flush=True)  # fmt: skip
            for row in table.values():  # warm-up, not counted
                wrk(server.url, row, args.connections, args.warmup, args, folder)
            before = executions(server.url)
            runs = measure(server.url, table, args, folder)
            after = executions(server.url)
            print("\n".join(report(runs, args.connections)))
            fresh = sum(r.requests for r in runs[FRESH] + runs[f"{FRESH} 1c"])
            if before is not None and after is not None:
                print(
                    f"executions counted by the server during the rounds: {after - before:.0f} "
                    f"(the fresh row's requests: {fresh})"
                )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
