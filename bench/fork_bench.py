"""A read-through fork's hits and misses (issue 19, item 7), printed, never asserted:

    python -m bench.fork_bench [--store BIG.sqlite] [--duration 8s] [--rounds 3] [--keys 20000] [--misses 1000]

One store S (--store, else a synthetic chain of 200,000 blocks and 20,000 accounts x 5 states, as
bench.traffic_bench writes) is served as the upstream U (`nearrpc serve --store S
--answer-cache-mb 0`, on --upstream-cpu); every fork is `nearrpc serve --store F --upstream U
--fork-height H --upstream-rate 0`, H the final height of S (a pinned head, so that `final`
needs no upstream request), over a store F of its own that the fork creates from U.

1. Hits: a fork answers at the throughput of a plain store. tools/bench.sh's requests (the
   sample's block 50 and alice.localnet become S's middle block and one of its accounts) and
   bench.traffic_bench's random rows (--keys different heights, hashes and (account, height)
   states) go to (A) `nearrpc serve --store S` and (B) the fork, both on --server-cpu, wrk on
   --load-cpu, A B A B over --rounds of --duration after a --warmup each. Before that every
   body of a row is sent once through the fork, so all of them are hits (the fork's /metrics
   counts its misses during the measured runs: 0 expected). A fork's account lookup reads its
   "fetched" mark first: the random view_account row shows that cost.
2. Misses: a fork over a fresh, empty store, and U itself, each asked --misses requests one at a
   time over one keep-alive connection (httpx, from --load-cpu), for keys never asked before:
   blocks at distinct heights; view_account at distinct heights whose block the fork fetched
   before (one upstream request per miss); view_account at never-asked heights (two: the block,
   then the account). Direct and fork requests alternate, each on keys of its own, so U answers
   every one from its store (its answer cache is off). Printed: p50/p90/p99 of the time
   direct to U, through the fork, and the difference of those percentiles: the fork's overhead
   per miss (issue 19: at most 2 ms at p50), with the fork's misses and upstream requests per
   request read off its /metrics.

Needs wrk (apt-get install wrk). Loopback only; every server it starts is stopped at the end,
on Ctrl-C and on SIGTERM too.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson
from prometheus_client.parser import text_string_to_metric_families

from bench.store_bench import Run, add_load_flags, bodies_file, compare, pin, random_lookups, rpc, serving, warm
from bench.traffic_bench import big_store
from nearrpc.store import open_store
from tests.support.live_server import LiveServer

_JSON = {"content-type": "application/json"}
_WARM_MISSES = 20  # per miss row and side, before the measured ones: connections, first-call work


@dataclass(frozen=True)
class Chain:
    """What the bench asks of S."""

    earliest: int
    pinned: int  # H: S's final height, where every fork's head is pinned
    middle: int  # a stored height in the middle (tools/bench.sh's block 50)
    account: str  # an account with a state at the fork's final block (tools/bench.sh's alice.localnet)


def chain_of(store: Path) -> Chain:
    reader = open_store(store, "read")
    try:
        info = reader.info()
        head = reader.head()
        assert head is not None and info.earliest_height is not None, f"{store} holds no blocks"
        final = reader.block_by_hash(head.last_final_block)
        assert final is not None, f"{store} lacks its head's final block"
        # the pinned fork's own final block: that of the block at H
        fork_final = reader.block_by_hash(final.last_final_block)
        assert fork_final is not None, f"{store} lacks the final block of the block at {final.height}"
        middle = (info.earliest_height + final.height) // 2
        while reader.block_by_height(middle) is None:
            middle += 1
        account = next(
            (a for a, _, view in reader.iter_account_states()
             if view is not None and reader.account_json(a, fork_final.height) is not None),
            None,
        )  # fmt: skip
        assert account is not None, f"{store} holds no account with a state at height {fork_final.height}"
        return Chain(info.earliest_height, final.height, middle, account)
    finally:
        reader.close()


def hit_rows(store: Path, chain: Chain, keys: int, rng: random.Random) -> dict[str, tuple[str, list[str]]]:
    """label -> (path, bodies): tools/bench.sh's requests, then random keys at or below H."""
    fixed = {
        "genesis_config": ("/", [rpc("genesis_config", None)]),
        "client_config": ("/", [rpc("client_config", None)]),
        "block final": ("/", [rpc("block", {"finality": "final"})]),
        "block by height": ("/", [rpc("block", {"block_id": chain.middle})]),
        "view_account final": ("/", [rpc("EXPERIMENTAL_view_account",
                                          {"account_id": chain.account, "finality": "final"})]),
        "protocol_config final": ("/", [rpc("EXPERIMENTAL_protocol_config", {"finality": "final"})]),
        "block final at /block": ("/block", [rpc("block", {"finality": "final"})]),
    }  # fmt: skip
    randoms = {label: ("/", bodies[:keys]) for label, bodies in random_lookups(store, rng, chain.pinned).items()}
    return {**fixed, **randoms}


def outcome_of(content: bytes) -> str:
    """What an answer was: "result", or the JSON-RPC error's cause name."""
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        return "not json"
    if isinstance(body, dict) and "result" in body:
        return "result"
    error = body.get("error") if isinstance(body, dict) else None
    cause = error.get("cause") if isinstance(error, dict) else None
    return str(cause.get("name")) if isinstance(cause, dict) else "error"


async def _send_all(url: str, bodies: list[str], concurrency: int) -> Counter[str]:
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency), timeout=60.0) as client:

        async def one(body: str) -> str:
            async with gate:
                try:
                    response = await client.post(url, content=body, headers=_JSON)
                except httpx.TransportError as failure:
                    return type(failure).__name__
                return outcome_of(response.content)

        return Counter(await asyncio.gather(*(one(body) for body in bodies)))


def send_all(url: str, bodies: list[str], concurrency: int) -> Counter[str]:
    """Each body once, `concurrency` at a time; the outcomes counted. Ctrl-C cancels what is left."""
    return asyncio.run(_send_all(url, bodies, concurrency))


def fork_counts(url: str) -> Counter[str]:
    """A fork's lookups by outcome ("hit", "miss") and its upstream requests ("upstream"), so far."""
    counts: Counter[str] = Counter()
    for family in text_string_to_metric_families(httpx.get(f"{url}/metrics", timeout=10.0).text):
        for sample in family.samples:
            if sample.name == "nearrpc_fork_lookups_total":
                counts[sample.labels["outcome"]] += int(sample.value)
            elif sample.name == "nearrpc_upstream_requests_total":
                counts["upstream"] += int(sample.value)
    return counts


def fork_flags(upstream: LiveServer, chain: Chain) -> tuple[str, ...]:
    # no bound on the upstream's rate: the default (20 a second) would hold the warm-up back, and
    # the misses would measure the bound, not the fork
    return ("--upstream", upstream.url + "/", "--fork-height", str(chain.pinned), "--upstream-rate", "0",
            "--upstream-concurrency", "8")  # fmt: skip


@dataclass(frozen=True)
class Setup:
    store: Path  # S
    chain: Chain
    upstream: LiveServer  # U
    folder: Path  # bodies and logs
    forks: Path  # the forks' stores


def hits(setup: Setup, args: argparse.Namespace) -> None:
    store, chain, upstream, folder = setup.store, setup.chain, setup.upstream, setup.folder
    rows = hit_rows(store, chain, args.keys, random.Random(20250602))
    print(f"== 1. hits: plain store (A) against a warmed fork (B), {args.rounds} rounds of {args.duration}, "
          f"{args.connections} connections, servers on cpu {args.server_cpu}; fork pinned at {chain.pinned}",
          flush=True)  # fmt: skip
    results: dict[str, tuple[dict[str, Run], int]] = {}
    with ExitStack() as stack:
        servers = serving(stack, {"plain": store}, folder, args.server_cpu)
        servers |= serving(stack, {"fork": setup.forks / "fork-hits.sqlite"}, folder, args.server_cpu,
                           *fork_flags(upstream, chain))  # fmt: skip
        fork = servers["fork"]
        started = time.monotonic()
        for label, (path, bodies) in rows.items():
            got = send_all(fork.url + path, bodies, args.warm_concurrency)
            if set(got) != {"result"}:
                sys.exit(f"bench: warming the fork with {label!r} answered {dict(got)}; see {fork.log}")
        print(f"warmed the fork: {sum(len(b) for _, b in rows.values())} bodies in {time.monotonic() - started:.0f} s, "
              f"{fork_counts(fork.url)['miss']} misses", flush=True)  # fmt: skip
        for label, (path, bodies) in rows.items():
            before = fork_counts(fork.url)["miss"]
            medians = compare(label, servers, bodies_file(folder, label.replace(" ", "_").replace("/", ""), bodies),
                              args, path)  # fmt: skip
            results[label] = (medians, fork_counts(fork.url)["miss"] - before)
    header = (f"{'request (' + str(args.connections) + ' connections)':34} {'plain rps':>9} {'fork rps':>9} "
              f"{'fork/plain':>10} {'p99 ms plain/fork':>17} {'errors':>6} {'fork misses':>11}")  # fmt: skip
    print(header)
    print("-" * len(header))
    for label, (runs, misses) in results.items():
        plain, forked = runs["plain"], runs["fork"]
        print(f"{label:34} {plain.rps:9.0f} {forked.rps:9.0f} {forked.rps / plain.rps:10.2f} "
              f"{plain.p99_ms:8.2f}/{forked.p99_ms:<8.2f} {plain.errors + forked.errors:>6} {misses:>11}")  # fmt: skip
    print(
        f"rps and p99: medians of the rounds; random rows: {len(rows['random block by height'][1])} bodies each "
        "(random keys, repeats possible), every one sent through the fork before; fork misses: during the row's "
        "runs (0: every request was a hit)"
    )


States = list[tuple[str, int]]  # (account, height)


@dataclass(frozen=True)
class MissRow:
    label: str
    direct: list[str]  # to U, each body once
    fork: list[str]  # to the fork, each body once, alternating with `direct`
    before: list[str]  # sent to the fork first, unmeasured (blocks the row's lookups need)
    warm: int  # the first pairs are not measured


def _never_asked(store: Path, chain: Chain, states: int, blocks: int, rng: random.Random) -> tuple[States, list[int]]:
    """Up to `states` stored (account, height) states, each at a height of its own, and up to
    `blocks` heights of other stored blocks; all below H (a fork stores the block at H when it
    starts), in random order."""
    reader = open_store(store, "read")
    try:
        by_height = {height: account for account, height, view in reader.iter_account_states()
                     if view is not None and height < chain.pinned}  # fmt: skip
        with_state = sorted(by_height)
        rng.shuffle(with_state)
        picked = [h for h in with_state[: states * 2] if reader.block_by_height(h) is not None][:states]
        others = [h for h in range(chain.earliest, chain.pinned) if h not in by_height]
        rng.shuffle(others)
        heights = [h for h in others[: blocks * 2] if reader.block_by_height(h) is not None][:blocks]
    finally:
        reader.close()
    return [(by_height[h], h) for h in picked], heights


def miss_rows(store: Path, chain: Chain, misses: int, rng: random.Random) -> list[MissRow]:
    """Three rows of never-asked keys; each row's keys split into direct and fork halves."""
    each = misses + _WARM_MISSES
    states, heights = _never_asked(store, chain, 4 * each, 2 * each, rng)
    warm = _WARM_MISSES
    if len(states) < 4 * each or len(heights) < 2 * each:
        each = min(len(states) // 4, len(heights) // 2)
        warm = min(warm, each // 4)
        print(f"bench: {store} is small: {each - warm} misses per row", flush=True)

    def account(pairs: States) -> list[str]:
        return [rpc("EXPERIMENTAL_view_account", {"account_id": a, "block_id": h}) for a, h in pairs]

    fetched, unfetched, heights = states[: 2 * each], states[2 * each : 4 * each], heights[: 2 * each]
    return [
        MissRow("block by height", [rpc("block", {"block_id": h}) for h in heights[0::2]],
                [rpc("block", {"block_id": h}) for h in heights[1::2]], [], warm),
        MissRow("view_account, block fetched before", account(fetched[0::2]), account(fetched[1::2]),
                [rpc("block", {"block_id": h}) for _, h in fetched[1::2]], warm),
        MissRow("view_account, block not fetched", account(unfetched[0::2]), account(unfetched[1::2]), [], warm),
    ]  # fmt: skip


@contextmanager
def pinned_here(cpu: str) -> Iterator[None]:
    """This process (the client) on `cpu` for a while."""
    was = os.sched_getaffinity(0)
    pin(os.getpid(), cpu)
    try:
        yield
    finally:
        pin(os.getpid(), ",".join(map(str, sorted(was))))


def _timed(client: httpx.Client, body: str) -> tuple[float, str]:
    started = time.perf_counter()
    response = client.post("/", content=body, headers=_JSON)
    return (time.perf_counter() - started) * 1000, outcome_of(response.content)


def percentiles(values: list[float]) -> tuple[float, float, float]:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return cuts[49], cuts[89], cuts[98]


def measure(row: MissRow, upstream: LiveServer, fork: LiveServer) -> tuple[list[float], list[float], Counter[str]]:
    """Direct and fork requests in turn (order swapped every pair), one connection each; the
    times in ms of the measured ones and the outcomes."""
    direct_ms: list[float] = []
    fork_ms: list[float] = []
    outcomes: Counter[str] = Counter()
    one = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    with httpx.Client(base_url=upstream.url, limits=one, timeout=60.0) as direct, \
            httpx.Client(base_url=fork.url, limits=one, timeout=60.0) as forked:  # fmt: skip
        for index, (to_direct, to_fork) in enumerate(zip(row.direct, row.fork, strict=False)):
            pair = [(direct, to_direct, direct_ms, "direct"), (forked, to_fork, fork_ms, "fork")]
            for client, body, times, side in pair if index % 2 == 0 else pair[::-1]:
                took, outcome = _timed(client, body)
                outcomes[f"{side} {outcome}"] += 1
                if index >= row.warm:
                    times.append(took)
    return direct_ms, fork_ms, outcomes


def _cells(values: tuple[float, float, float]) -> str:
    return "/".join(f"{value:.2f}" for value in values)


def misses(setup: Setup, args: argparse.Namespace) -> None:
    chain, upstream, folder = setup.chain, setup.upstream, setup.folder
    rows = miss_rows(setup.store, chain, args.misses, random.Random(7))
    print(f"== 2. misses: {args.misses} never-asked keys per row, one at a time, direct to the upstream (its answer "
          f"cache off, cpu {args.upstream_cpu}) and through a fork over an empty store (cpu {args.server_cpu}), "
          f"alternating; client on cpu {args.load_cpu}", flush=True)  # fmt: skip
    header = (f"{'never-asked key (one connection)':36} {'n':>5} {'direct p50/p90/p99 ms':>21}  "
              f"{'fork p50/p90/p99 ms':>21}  {'overhead p50/p90/p99':>21}  {'misses':>6} {'upstr.':>6} "
              f"{'errors':>6}")  # fmt: skip
    lines = [header, "-" * len(header)]
    with ExitStack() as stack:
        fork = serving(stack, {"fork-misses": setup.forks / "fork-misses.sqlite"}, folder, args.server_cpu,
                       *fork_flags(upstream, chain))["fork-misses"]  # fmt: skip
        for row in rows:
            if row.before:
                got = send_all(fork.url + "/", row.before, 4)
                if set(got) != {"result"}:
                    sys.exit(f"bench: fetching the blocks for {row.label!r} answered {dict(got)}; see {fork.log}")
            before = fork_counts(fork.url)
            with pinned_here(args.load_cpu):
                direct_ms, fork_ms, outcomes = measure(row, upstream, fork)
            counts = fork_counts(fork.url) - before
            print(f"{row.label}: {dict(outcomes)}", flush=True)
            if len(fork_ms) < 2:
                lines.append(f"{row.label:36} too few keys")
                continue
            direct_p, fork_p = percentiles(direct_ms), percentiles(fork_ms)
            overhead = (fork_p[0] - direct_p[0], fork_p[1] - direct_p[1], fork_p[2] - direct_p[2])
            asked = min(len(row.direct), len(row.fork))  # fork requests, the warm-up's included
            errors = sum(n for what, n in outcomes.items() if not what.endswith(" result"))
            lines.append(f"{row.label:36} {len(fork_ms):>5} {_cells(direct_p):>21}  {_cells(fork_p):>21}  "
                         f"{_cells(overhead):>21}  {counts['miss'] / asked:6.2f} {counts['upstream'] / asked:6.2f} "
                         f"{errors:>6}")  # fmt: skip
    print("\n".join(lines))
    print(
        "overhead: the fork's percentile minus the direct one (issue 19's goal: at most 2 ms at p50); misses, "
        "upstr.: the fork's lookups that missed and its requests to the upstream, per fork request"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, help="an SQLite store (python -m bench.generate_store); default: "
                        "a synthetic 200,000-block store written first")  # fmt: skip
    add_load_flags(parser, duration="8s")
    parser.add_argument("--upstream-cpu", help="where the upstream runs (default: --load-cpu)")
    parser.add_argument("--keys", type=int, default=20_000, help="bodies per random row of part 1 (at most 20,000)")
    parser.add_argument("--warm-concurrency", type=int, default=8, help="requests in flight when warming the fork")
    parser.add_argument("--misses", type=int, default=1000, help="measured requests per row of part 2, each side")
    parser.add_argument("--fork-folder", type=Path, help="where the forks' stores are written (default: a temporary "
                        "folder; /dev/shm, a tmpfs, takes the disk's flush at each commit out of a miss)")  # fmt: skip
    parser.add_argument("--no-hits", action="store_true", help="skip part 1")
    parser.add_argument("--no-misses", action="store_true", help="skip part 2")
    args = parser.parse_args()
    args.upstream_cpu = args.upstream_cpu or args.load_cpu
    if shutil.which("wrk") is None and not args.no_hits:
        sys.exit("bench: wrk not found (apt-get install wrk)")
    if args.store is not None and not args.store.is_file():
        sys.exit(f"bench: no store file at {args.store} (python -m bench.generate_store {args.store} writes one)")
    # SIGTERM as Ctrl-C: the servers (each in a session of its own) are stopped on the way out
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    folder = Path(tempfile.mkdtemp(prefix="nearrpc-fork-bench-"))
    forks = folder if args.fork_folder is None else Path(tempfile.mkdtemp(prefix="nearrpc-fork-bench-",
                                                                          dir=args.fork_folder))  # fmt: skip
    try:
        store = big_store(args.store, folder)
        chain = chain_of(store)
        warm(store)
        with ExitStack() as stack:
            upstream = serving(stack, {"upstream": store}, folder, args.upstream_cpu, "--answer-cache-mb", "0")
            setup = Setup(store, chain, upstream["upstream"], folder, forks)
            if not args.no_hits:
                hits(setup, args)
            if not args.no_misses:
                misses(setup, args)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(forks, ignore_errors=True)


if __name__ == "__main__":
    main()
