"""Where a real contract's view call spends its time, in process (no HTTP, no load generator):

    python -m bench.real_profile [--call ft_balance_of|nft_token|nft_tokens] [--limit 500]
                                 [--calls 200] [--store STORE] [--profile]

Over bench.real_contracts_store's store (built in a temporary folder with its default shape,
or --store, one it wrote with that shape), each call with other arguments (ft_balance_of:
holders in turn; nft_token: tokens in turn; nft_tokens: the first --limit tokens), its module
compiled before, two ways:
- executor: ViewEngine.run_view with the store's reader asked directly (a thread that reads the
  store itself), the reads it is asked counted and timed;
- runner: the server's ViewRunner over the store's serving reader on an event loop (inline on
  the loop while the call fits a slice; else on a worker thread, each read a trip to the loop).
Prints ms per call for both, wall clock and CPU time (the process's, all threads: on a shared
machine the CPU figure moves less with the load), and the executor's reads per call and their
share of its time.
--profile: the executor's calls under cProfile, its 25 costliest functions by own time
(profiling inflates the host functions' share: read it against the ms printed without it).
A profile, not a benchmark: figures on a shared machine are for comparing rows of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import hashlib
import json
import pstats
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

from bench.real_contracts_store import CODES, FT, NFT, Shape, build_real_store, plan, reference_contracts
from nearrpc.contracts import GasCosts, ViewContext, ViewEngine
from nearrpc.methods.view_calls import ViewRunner
from nearrpc.store import ChainReader, open_store

CONFIG = Path(__file__).resolve().parent.parent / "tests/fixtures/EXPERIMENTAL_protocol_config/finality_final.json"


@dataclass
class _CountingState:
    """The store's contract values of one account, asked directly; counts and times the reads."""

    reader: ChainReader
    account_id: str
    height: int
    reads: int = 0
    seconds: float = 0.0

    def storage_read(self, key: bytes) -> bytes | None:
        started = time.perf_counter()
        value = self.reader.contract_value(self.account_id, key, self.height)
        self.seconds += time.perf_counter() - started
        self.reads += 1
        return value


def arguments(call: str, limit: int, count: int) -> tuple[str, list[bytes]]:
    """The account called and each call's arguments."""
    contracts = plan(Shape())
    if call == "ft_balance_of":
        holders = list(contracts.balances)
        return FT, [orjson.dumps({"account_id": holders[i % len(holders)]}) for i in range(count)]
    if call == "nft_token":
        return NFT, [orjson.dumps({"token_id": str(i % len(contracts.tokens))}) for i in range(count)]
    return NFT, [orjson.dumps({"from_index": "0", "limit": limit, "nonce": str(i)}) for i in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--call", choices=["ft_balance_of", "nft_token", "nft_tokens"], default="ft_balance_of")
    parser.add_argument("--limit", type=int, default=500, help="nft_tokens' limit")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--store", type=Path, help="a store bench.real_contracts_store wrote (default shape)")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="nearrpc-real-profile-"))
    try:
        store = args.store or folder / "real.sqlite"
        if args.store is None:
            build_real_store(store, Shape())
        account, calls = arguments(args.call, args.limit, args.calls + 1)
        code = (reference_contracts() / CODES[account]).read_bytes()
        code_hash = hashlib.sha256(code).hexdigest()
        config = json.loads(json.loads(CONFIG.read_text())["response"]["body"])["result"]
        costs = GasCosts.from_protocol_config(config)
        reader = open_store(store, "read")
        head = reader.head()
        assert head is not None, "the store holds blocks"
        context = ViewContext(account, head.height, 1, 1, 30 * 10**24, 0, 800_000, bytes(32))
        state = _CountingState(reader, account, head.height)
        engine = ViewEngine()
        first = engine.run_view(code, code_hash, args.call, calls[0], context, state, costs)
        state.reads, state.seconds = 0, 0.0
        started, cpu = time.perf_counter(), time.process_time()
        for body in calls[1:]:
            engine.run_view(code, code_hash, args.call, body, context, state, costs)
        executor = (time.perf_counter() - started) / args.calls
        executor_cpu = (time.process_time() - cpu) / args.calls
        runner, runner_cpu = asyncio.run(_runner_ms(store, code, code_hash, args.call, calls, context, costs))
        print(f"{args.call} on {account} ({len(code):,d} B of code, {len(first.result):,d} B answered, "
              f"{first.burnt_gas / 1e12:.1f} Tgas), {args.calls} calls:")  # fmt: skip
        reads, read_ms = state.reads / args.calls, state.seconds / args.calls * 1000
        print(f"  executor, reading the store directly: {executor * 1000:8.3f} ms a call ({executor_cpu * 1000:.3f} "
              f"ms CPU); the state asked {reads:.0f} reads a call, {read_ms:.3f} ms of it")  # fmt: skip
        print(f"  the server's ViewRunner:              {runner:8.3f} ms a call ({runner_cpu:.3f} ms CPU)")
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            for body in calls[1:]:
                engine.run_view(code, code_hash, args.call, body, context, state, costs)
            profiler.disable()
            stats = pstats.Stats(profiler)
            total: int = stats.total_calls  # type: ignore[attr-defined]  # set by Stats, not declared
            print(f"== cProfile of the executor's calls: {total / args.calls:.0f} function calls a call")
            stats.sort_stats("tottime").print_stats(25)
        reader.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def _runner_ms(
    store: Path, code: bytes, code_hash: str, method: str, calls: list[bytes], context: ViewContext, costs: GasCosts
) -> tuple[float, float]:
    """ms a call through the ViewRunner: wall clock, and the process's CPU time."""
    serving = open_store(store, "serve")
    runner = ViewRunner()
    try:
        await runner.run(serving, code, code_hash, method, calls[0], context, costs)  # compiles, finds its path
        started, cpu = time.perf_counter(), time.process_time()
        for body in calls[1:]:
            await runner.run(serving, code, code_hash, method, body, context, costs)
        count = len(calls) - 1
        return (time.perf_counter() - started) / count * 1000, (time.process_time() - cpu) / count * 1000
    finally:
        runner.close()
        await serving.close()


if __name__ == "__main__":
    main()
