"""Real contracts' view calls beside a `view_account` hit, on one server, in one run (issue 44 item 4):

    python -m bench.real_calls_bench [--duration 8s] [--rounds 3] [--connections 32]
                                     [--holders 5000] [--nfts 1000]

Over bench.real_contracts_store's store (the sample chain plus near-sdk-rs's example fungible
token, NFT and status message with realistic state; needs the reference folder's contracts), all
`query` at `final` through POST /, every call row with fresh arguments at every request (a
"nonce" member the contract skips, bench/random_bodies.lua), so the answer cache answers none:
- `view_account` of token.localnet, repeated: an answer-cache hit, the row the others are
  measured against;
- the sample token's `ft_balance_of` (token.localnet, hand-written WAT), as bench.calls_bench's
  fresh row;
- the real token's `ft_balance_of` (ft.localnet), each request a holder of the --holders in turn,
  from a random point per thread: real traffic, not one key;
- the real NFT's `nft_token` (every token in turn), and `nft_tokens`' first page (from_index 0)
  of 50 and of 500 tokens: a later page costs more, as the contract walks its TreeMap from the
  smallest id past from_index tokens; the 500 runs at no more than 2 connections (a call of
  most of a second at 32 connections would only queue);
- a restarted server's first call of a known contract: after the rounds, --rounds times, a new
  server on the same store (its compiled contracts kept on disk beside it by the first) answers a
  view_account, then nft_token of the 252 kB NFT, each timed; a server with --compiled-cache off
  does the same for the compile it replaces.
Each wrk row runs at --connections (throughput, p50, p99) and at 1 connection; rounds alternate
the rows' order; ratios are medians of the per-round ratios to the hit of the same round (the
restart row: its first call over the hit's p50 at 1 connection). Before the rounds each call
row's arguments are sent once and the answer compared with what the store was written with. One
`nearrpc serve` (1 worker, defaults) pinned to --server-cpu, wrk to --load-cpu. Needs wrk.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson

from bench.calls_bench import ARGS_MARK, CALL_RESULT, LUA, TOKEN, Run, executions, holders
from bench.real_contracts_store import FT, NFT, RealContracts, Shape, build_real_store, plan, reference_contracts
from bench.store_bench import add_load_flags, bodies_file, pin, rpc, serving
from tests.support.live_server import running_server

HIT = "view_account hit (repeated)"
SAMPLE = "sample ft_balance_of fresh"
REAL = "real ft_balance_of fresh"
TOKEN_ROW = "nft_token fresh"
PAGE_50 = "nft_tokens limit 50 fresh"
PAGE_500 = "nft_tokens limit 500 fresh"
HEAVY_CONNECTIONS = 2
RESTART_ACCOUNT, RESTART_METHOD = NFT, "nft_token"
# the goals, as figures of the team's machine (this class of machine is slower: say which)
GOALS = {SAMPLE: ("/ hit", 0.3), REAL: ("p50 ms 1 conn", 0.4), PAGE_500: ("p50 ms 1 conn", 300.0)}
RESTART_GOAL_MS = 50.0
_runs = itertools.count(1)


@dataclass(frozen=True)
class Row:
    body: str
    expect: str
    templates: tuple[str, ...] = ()  # CALL_ARGS_FILE's lines; none: the sample token's fresh arguments
    wide: int | None = None  # a cap on --connections
    sample: tuple[str, bytes] | None = None  # arguments sent before the rounds and their exact answer


def call(account: str, method: str, args: str) -> str:
    params = {"request_type": "call_function", "account_id": account, "method_name": method, "args_base64": args,
              "finality": "final"}  # fmt: skip
    return rpc("query", params)


def _templates(entries: list[dict[str, object]]) -> tuple[str, ...]:
    return tuple(orjson.dumps({**entry, "nonce": "@NONCE@"}).decode() for entry in entries)


def _listing(contracts: RealContracts, start: int, limit: int) -> bytes:
    return b"[" + b",".join(token.json() for token in contracts.tokens_by_id[start : start + limit]) + b"]"


def rows(contracts: RealContracts, nfts: int) -> dict[str, Row]:
    view = {"request_type": "view_account", "account_id": TOKEN, "finality": "final"}
    holder_ids = list(contracts.balances)
    random.Random(4).shuffle(holder_ids)
    probe = holder_ids[0]
    table = {
        HIT: Row(rpc("query", view), '"amount"'),
        SAMPLE: Row(call(TOKEN, "ft_balance_of", ARGS_MARK), CALL_RESULT),
        REAL: Row(call(FT, "ft_balance_of", ARGS_MARK), CALL_RESULT,
                  _templates([{"account_id": holder} for holder in holder_ids]),
                  sample=(f'{{"account_id":"{probe}"}}', f'"{contracts.balances[probe]}"'.encode())),
        TOKEN_ROW: Row(call(NFT, "nft_token", ARGS_MARK), CALL_RESULT,
                       _templates([{"token_id": str(index)} for index in range(nfts)]),
                       sample=('{"token_id":"1"}', contracts.tokens[1].json())),
    }  # fmt: skip
    for label, limit, wide in ((PAGE_50, 50, None), (PAGE_500, 500, HEAVY_CONNECTIONS)):
        if nfts >= limit:
            first_page = _templates([{"from_index": "0", "limit": limit}])
            table[label] = Row(call(NFT, "nft_tokens", ARGS_MARK), CALL_RESULT, first_page, wide,
                               (f'{{"from_index":"0","limit":{limit}}}', _listing(contracts, 0, limit)))  # fmt: skip
    return table


def show_answers(url: str, table: dict[str, Row]) -> None:
    """Each row's body once, the call rows with their sample arguments, each answer compared with
    what the store holds; a wrong or failed answer stops the bench before any figure."""
    with httpx.Client(timeout=60.0) as client:
        for label, row in table.items():
            args = row.sample[0] if row.sample else '{"account_id":"fresh-check.localnet"}'
            body = row.body.replace(ARGS_MARK, base64.b64encode(args.encode()).decode())
            answer = client.post(url + "/", content=body, headers={"Content-Type": "application/json"})
            result = orjson.loads(answer.content).get("result", {}) if answer.status_code == 200 else {}
            got = bytes(result["result"]) if "result" in result else None
            if row.expect not in answer.text or (row.sample is not None and got != row.sample[1]):
                sys.exit(f"bench: {label} is not answered as the store holds: HTTP {answer.status_code} "
                         f"{answer.text[:300]}")  # fmt: skip
            shown = f"amount {result['amount']}" if got is None else f"{len(got)} bytes, {got[:60].decode()}"
            print(f"answer: {label}: HTTP 200, {shown} at height {result['block_height']}", flush=True)


def wrk(url: str, row: Row, connections: int, duration: str, args: argparse.Namespace, folder: Path) -> Run:
    bodies = bodies_file(folder, "bodies", [row.body])
    command = ["taskset", "-c", args.load_cpu, "wrk", "-t1", f"-c{connections}", f"-d{duration}", "--timeout", "30s",
               "--latency", "-s", str(LUA), url + "/"]  # fmt: skip
    environment = {**os.environ, "RPC_BODIES_FILE": str(bodies), "RPC_EXPECT": row.expect, "RPC_RUN": f"r{next(_runs)}",
                   "CALL_HOLDERS": ",".join(args.sample_holders)}  # fmt: skip
    if row.templates:
        environment["CALL_ARGS_FILE"] = str(bodies_file(folder, "arguments", list(row.templates)))
    out = subprocess.run(command, env=environment, capture_output=True, text=True, check=True).stdout
    found = re.search(r"RESULT rps=(\S+) p50_ms=(\S+) p99_ms=(\S+) errors=(\d+) requests=(\d+)", out)
    if found is None:
        sys.exit(f"bench: wrk printed no RESULT line:\n{out}")
    return Run(float(found[1]), float(found[2]), float(found[3]), int(found[4]), int(found[5]))


def width(row: Row, connections: int) -> int:
    return min(connections, row.wide or connections)


def measure(url: str, table: dict[str, Row], args: argparse.Namespace, folder: Path) -> dict[str, list[Run]]:
    """Per row: its runs at its width, then (key "<row> 1c") its runs at 1 connection."""
    runs: dict[str, list[Run]] = {key: [] for label in table for key in (label, f"{label} 1c")}
    for round_index in range(args.rounds):
        order = list(table) if round_index % 2 == 0 else list(table)[::-1]
        for label in order:
            runs[label].append(wrk(url, table[label], width(table[label], args.connections), args.duration, args,
                                   folder))  # fmt: skip
            runs[f"{label} 1c"].append(wrk(url, table[label], 1, args.latency_duration, args, folder))
        print(f"round {round_index + 1}: " + ", ".join(f"{label} {runs[label][-1].rps:.1f}/s" for label in order),
              flush=True)  # fmt: skip
    return runs


@dataclass(frozen=True)
class Restart:
    account_ms: float  # the new server's first request: a view_account
    first_call_ms: float  # then its first call of the known contract


def _timed(client: httpx.Client, url: str, body: str, expect: str) -> float:
    started = time.perf_counter()
    answer = client.post(url + "/", content=body, headers={"Content-Type": "application/json"})
    elapsed = (time.perf_counter() - started) * 1000
    if answer.status_code != 200 or expect not in answer.text:
        sys.exit(f"bench: a restarted server's answer is not a result: {answer.text[:300]}")
    return elapsed


def restarts(store: Path, folder: Path, args: argparse.Namespace, *extra: str) -> list[Restart]:
    """--rounds new servers on `store`, each asked a view_account then its first call."""
    view = rpc("query", {"request_type": "view_account", "account_id": RESTART_ACCOUNT, "finality": "final"})
    first = call(RESTART_ACCOUNT, RESTART_METHOD, base64.b64encode(b'{"token_id":"0"}').decode())
    found = []
    for index in range(args.rounds):
        log = folder / f"restart-{index}{'-'.join(extra)}.log"
        with running_server(store, log, "--store-check", "off", *extra) as server, httpx.Client(timeout=60) as client:
            pin(server.pid, args.server_cpu)
            found.append(Restart(_timed(client, server.url, view, '"amount"'),
                                 _timed(client, server.url, first, CALL_RESULT)))  # fmt: skip
    return found


def median_ratio(runs: dict[str, list[Run]], label: str) -> float:
    return statistics.median(row.rps / hit.rps for row, hit in zip(runs[label], runs[HIT], strict=True))


def report(runs: dict[str, list[Run]], table: dict[str, Row], args: argparse.Namespace) -> list[str]:
    lines = [f"{'row':28} {'conns':>5} {'rps':>8} {'/ hit':>7} {'p50/p99 ms':>20} {'p50/p99 ms (1 conn)':>22} "
             f"{'errors':>7} {'requests':>9}"]  # fmt: skip
    for label, row in table.items():
        wide, one = runs[label], runs[f"{label} 1c"]
        lines.append(
            f"{label:28} {width(row, args.connections):5d} {statistics.median(r.rps for r in wide):8.1f} "
            f"{median_ratio(runs, label):7.4f} "
            f"{statistics.median(r.p50_ms for r in wide):11.3f}/{statistics.median(r.p99_ms for r in wide):<8.3f} "
            f"{statistics.median(r.p50_ms for r in one):13.3f}/{statistics.median(r.p99_ms for r in one):<8.3f} "
            f"{sum(r.errors for r in wide + one):7d} {sum(r.requests for r in wide + one):9d}"
        )
    return lines


def restart_report(loaded: list[Restart], compiled: list[Restart], hit_p50: float) -> list[str]:
    first = statistics.median(r.first_call_ms for r in loaded)
    compile_first = statistics.median(r.first_call_ms for r in compiled)
    return [
        f"restarted server, first {RESTART_METHOD} of {RESTART_ACCOUNT} (compiled cache on disk): {first:.1f} ms "
        f"median of {[round(r.first_call_ms, 1) for r in loaded]}; {first / hit_p50:.0f} x the hit's p50 at 1 "
        f"connection ({hit_p50:.3f} ms); its first request, a view_account: "
        f"{statistics.median(r.account_ms for r in loaded):.1f} ms",
        f"the same without the cache (--compiled-cache off, a compile): {compile_first:.1f} ms median of "
        f"{[round(r.first_call_ms, 1) for r in compiled]}",
    ]


def goals(runs: dict[str, list[Run]], restart_ms: float) -> list[str]:
    figures: list[tuple[str, float, float, Callable[[float, float], bool]]] = []
    for label, (what, goal) in GOALS.items():
        if label not in runs:
            continue
        if what == "/ hit":
            figures.append((f"{label} {what}", median_ratio(runs, label), goal, lambda a, b: a >= b))
        else:
            value = statistics.median(r.p50_ms for r in runs[f"{label} 1c"])
            figures.append((f"{label} {what}", value, goal, lambda a, b: a <= b))
    figures.append(("restarted server's first call ms", restart_ms, RESTART_GOAL_MS, lambda a, b: a <= b))
    lines = ["goals (issue 44, figures of the team's machine; this one may be slower):"]
    for name, value, goal, met in figures:
        lines.append(f"  {name:44} {value:10.3f}  goal {goal:<8g} {'met' if met(value, goal) else 'MISSED'}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_load_flags(parser, duration="8s")
    parser.add_argument("--latency-duration", help="each row's run at 1 connection (default: --duration)")
    parser.add_argument("--holders", type=int, default=Shape.holders)
    parser.add_argument("--nfts", type=int, default=Shape.nfts)
    args = parser.parse_args()
    args.latency_duration = args.latency_duration or args.duration
    if shutil.which("wrk") is None:
        sys.exit("bench: wrk not found (apt-get install wrk)")
    shape = Shape(args.holders, args.nfts, min(Shape.statuses, args.holders))
    folder = Path(tempfile.mkdtemp(prefix="nearrpc-real-calls-bench-"))
    try:
        store = folder / "real.sqlite"
        try:
            build_real_store(store, shape, reference_contracts())
        except FileNotFoundError as missing:
            sys.exit(f"bench: {missing}")
        args.sample_holders = holders(store)
        table = rows(plan(shape), args.nfts)
        with ExitStack() as stack:
            server = serving(stack, {"real": store}, folder, args.server_cpu)["real"]
            show_answers(server.url, table)
            print(f"== real contracts' view calls beside a view_account hit ({args.rounds} rounds of "
                  f"{args.duration} at {args.connections} connections ({PAGE_500}: {HEAVY_CONNECTIONS}) and "
                  f"{args.latency_duration} at 1; server on cpu {args.server_cpu}, wrk on cpu {args.load_cpu}; "
                  f"{args.holders} holders, {args.nfts} NFTs)", flush=True)  # fmt: skip
            for row in table.values():  # warm-up, not counted
                wrk(server.url, row, width(row, args.connections), args.warmup, args, folder)
            before = executions(server.url)
            runs = measure(server.url, table, args, folder)
            after = executions(server.url)
        print("\n".join(report(runs, table, args)))
        fresh = sum(r.requests for label in table if label != HIT for r in runs[label] + runs[f"{label} 1c"])
        if before is not None and after is not None:
            print(f"executions counted by the server during the rounds: {after - before:.0f} (the fresh rows' "
                  f"requests: {fresh})")  # fmt: skip
        loaded = restarts(store, folder, args)
        compiled = restarts(store, folder, args, "--compiled-cache", "off")
        hit_p50 = statistics.median(r.p50_ms for r in runs[f"{HIT} 1c"])
        print("\n".join(restart_report(loaded, compiled, hit_p50)))
        print("\n".join(goals(runs, statistics.median(r.first_call_ms for r in loaded))))
        print("/ hit: median of the per-round ratios to the view_account hit; latencies: medians of the rounds")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
