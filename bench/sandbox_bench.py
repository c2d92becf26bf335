"""Sending to `nearrpc serve --sandbox` (issue 45, item 7), on one server, in one run:

    python -m bench.sandbox_bench [--count 200] [--transfers 2000] [--signers 8] [--connections 4]

One `serve --sandbox` over a fresh sample chain (automine: each send final when answered),
listening on 127.0.0.1, pinned to --server-cpu; this process, the client, to --load-cpu. The
accounts and keys are the plugin's facts (nearrpc.testing: the sample's funded accounts).
Rows, each `broadcast_tx_commit` at 1 connection (a transaction signed just before it is sent,
outside the timing), p50 and p99 over --count sends:
- a transfer of 1 yoctoNEAR;
- a call of the sample counter's `increment`;
- near-sdk's fungible token `ft_transfer`, when the reference contracts are there
  ($NEARRPC_REFERENCE_DIR/contracts/new_fungible_token.wasm): deployed and initialized
  (`new_default_meta`), the receiver's `storage_deposit` at the contract's own bound, first;
- `sandbox_snapshot`, and `sandbox_revert` to it after one transfer, --snapshots times each.
Then transfers per second: --transfers transfers from --signers accounts, pre-signed (nonces
increasing per signer) in batches small enough to stay within the chain's transaction validity
period, sent by --connections connections at once (each signer's on one connection, in nonce
order), each `broadcast_tx_commit`; the rate is the transfers over the time spent sending.
Every answer must be a success: a send that is not stops nothing but is counted and shown.
The issue's goals are printed against the figures: a transfer committed at p50 <= 5 ms,
>= 300 transfers a second, a snapshot and a revert <= 20 ms each (p50). Loopback only; the
server is stopped at the end. Run on a quiet machine (docs/BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.store_bench import pin
from nearrpc.sandbox.runtime import model
from nearrpc.sandbox.runtime.encode import sign_transaction
from nearrpc.testing.facts import FundedAccount
from nearrpc.testing.server import running_server

COUNTER = "counter.localnet"
TGAS = 10**12
# The goals.
TRANSFER_P50_MS = 5.0
TRANSFERS_PER_SECOND = 300.0
SNAPSHOT_MS = 20.0
# Transactions pre-signed on one block hash at most per connection: each commit makes a few
# blocks, and the sample's transaction_validity_period is 100 blocks.
BATCH_PER_CONNECTION = 20


@dataclass(frozen=True)
class Row:
    label: str
    times_ms: list[float]
    errors: int

    def line(self) -> str:
        if not self.times_ms:
            return f"{self.label:<34} {0:>6} {'-':>9} {'-':>9} {self.errors:>7}"
        p50, p99 = percentile(self.times_ms, 50), percentile(self.times_ms, 99)
        return f"{self.label:<34} {len(self.times_ms):>6} {p50:>9.2f} {p99:>9.2f} {self.errors:>7}"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def body(method: str, params: object) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "bench", "method": method, "params": params}


class Signer:
    """A funded account signing with its key's next nonces (kept here, so many can be pre-signed)."""

    def __init__(self, account: FundedAccount, nonce: int) -> None:
        self.account, self.nonce = account, nonce

    def sign(self, receiver: str, actions: tuple[model.Action, ...], block_hash: str) -> str:
        self.nonce += 1
        tx = model.Transaction(self.account.account_id, self.account.public_key, self.nonce, receiver, block_hash,
                               actions)  # fmt: skip
        return base64.b64encode(sign_transaction(tx, self.account.secret_key)).decode()


class Client:
    """One keep-alive connection to the sandbox."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=60.0, limits=httpx.Limits(max_connections=1))

    def call(self, method: str, params: object) -> dict[str, Any]:
        answer: dict[str, Any] = self.http.post("/", json=body(method, params)).json()
        return answer

    def result(self, method: str, params: object) -> dict[str, Any]:
        answer = self.call(method, params)
        if "result" not in answer:
            raise SystemExit(f"bench: {method} answered {json.dumps(answer)[:500]}")
        result: dict[str, Any] = answer["result"]
        return result

    def final_hash(self) -> str:
        return str(self.result("block", {"finality": "final"})["header"]["hash"])

    def signer(self, account: FundedAccount) -> Signer:
        key = self.result("query", {"request_type": "view_access_key", "account_id": account.account_id,
                                    "public_key": account.public_key, "finality": "final"})  # fmt: skip
        return Signer(account, int(key["nonce"]))

    def view(self, contract: str, method: str, args: object) -> Any:
        found = self.result("query", {"request_type": "call_function", "account_id": contract, "method_name": method,
                                      "args_base64": base64.b64encode(json.dumps(args).encode()).decode(),
                                      "finality": "final"})  # fmt: skip
        return json.loads(bytes(found["result"]))


def succeeded(answer: dict[str, Any]) -> bool:
    status = answer.get("result", {}).get("status", {})
    if "SuccessValue" not in status:
        return False
    return all("Failure" not in o["outcome"]["status"] for o in answer["result"]["receipts_outcome"])


def commit(client: Client, signed: str) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    answer = client.call("broadcast_tx_commit", [signed])
    return (time.perf_counter() - started) * 1000, answer


def latency(client: Client, label: str, count: int, warmup: int, make: Callable[[str], str]) -> Row:
    """`count` commits of `make(block_hash)` at 1 connection (after `warmup` untimed ones)."""
    times: list[float] = []
    errors = 0
    for index in range(warmup + count):
        signed = make(client.final_hash())
        elapsed, answer = commit(client, signed)
        if not succeeded(answer):
            errors += 1
            if errors == 1:
                print(f"{label}: not a success: {json.dumps(answer)[:500]}")
        elif index >= warmup:
            times.append(elapsed)
    return Row(label, times, errors)


def function_call(method: str, args: object, deposit: int = 0, gas: int = 30 * TGAS) -> model.FunctionCall:
    return model.FunctionCall(method_name=method, args=json.dumps(args).encode(), gas=gas, deposit=deposit)


def prepare_token(client: Client, code: bytes, token: Signer, owner: Signer, holder: Signer) -> bool:
    """near-sdk's fungible token on `token`'s account, `owner` holding the supply and `holder`
    registered with the contract's own storage bound; False (and why) when a step fails."""
    token_id = token.account.account_id
    init = function_call("new_default_meta", {"owner_id": owner.account.account_id, "total_supply": "10" + "0" * 30},
                         gas=100 * TGAS)  # fmt: skip
    _, answer = commit(client, token.sign(token_id, (model.DeployContract(code=code), init), client.final_hash()))
    if not succeeded(answer):
        print(f"ft_transfer: deploying the token failed: {json.dumps(answer)[:500]}")
        return False
    bound = int(client.view(token_id, "storage_balance_bounds", {})["min"])
    deposit = function_call("storage_deposit", {"account_id": holder.account.account_id}, deposit=bound)
    _, answer = commit(client, holder.sign(token_id, (deposit,), client.final_hash()))
    if not succeeded(answer):
        print(f"ft_transfer: storage_deposit failed: {json.dumps(answer)[:500]}")
        return False
    return True


def snapshots(client: Client, signer: Signer, receiver: str, count: int) -> tuple[Row, Row]:
    """`sandbox_snapshot`, a transfer, `sandbox_revert` to the snapshot: the first and last timed."""
    taken: list[float] = []
    reverted: list[float] = []
    errors = 0
    for _ in range(count):
        started = time.perf_counter()
        snapshot = client.call("sandbox_snapshot", {})
        taken.append((time.perf_counter() - started) * 1000)
        _, answer = commit(client, signer.sign(receiver, (model.Transfer(deposit=1),), client.final_hash()))
        errors += not succeeded(answer)
        started = time.perf_counter()
        back = client.call("sandbox_revert", {"snapshot_id": snapshot.get("result", {}).get("snapshot_id")})
        reverted.append((time.perf_counter() - started) * 1000)
        if "result" not in back:
            errors += 1
            print(f"sandbox_revert: {json.dumps(back)[:500]}")
        signer.nonce -= 1  # the transfer is undone, its nonce with it
    return Row("sandbox_snapshot", taken, 0), Row("sandbox_revert (after a transfer)", reverted, errors)


async def _send_all(url: str, lanes: list[list[str]]) -> tuple[float, int]:
    """Each lane's transactions in order on a connection of its own, all lanes at once: the
    seconds it took and how many answers were not a success."""
    errors = 0

    async def lane(signed: list[str]) -> None:
        nonlocal errors
        async with httpx.AsyncClient(base_url=url, timeout=60.0) as http:
            for one in signed:
                answer = (await http.post("/", json=body("broadcast_tx_commit", [one]))).json()
                if not succeeded(answer):
                    errors += 1
                    if errors == 1:
                        print(f"throughput: not a success: {json.dumps(answer)[:500]}")

    started = time.perf_counter()
    await asyncio.gather(*(lane(signed) for signed in lanes))
    return time.perf_counter() - started, errors


def throughput(
    client: Client, url: str, signers: list[Signer], receiver: str, transfers: int, connections: int
) -> tuple[float, int]:
    """Transfers a second and errors: pre-signed batches sent over `connections` at once."""
    seconds, errors, sent = 0.0, 0, 0
    lanes_of = [signers[i::connections] for i in range(connections)]
    while sent < transfers:
        batch = min(transfers - sent, BATCH_PER_CONNECTION * connections)
        block_hash = client.final_hash()
        lanes: list[list[str]] = [[] for _ in range(connections)]
        for index in range(batch):
            lane = index % connections
            owners = lanes_of[lane] or signers
            signer = owners[(index // connections) % len(owners)]
            lanes[lane].append(signer.sign(receiver, (model.Transfer(deposit=1),), block_hash))
        took, failed = asyncio.run(_send_all(url, lanes))
        seconds, errors, sent = seconds + took, errors + failed, sent + batch
    return transfers / seconds, errors


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def reference_token() -> Path | None:
    folder = os.environ.get("NEARRPC_REFERENCE_DIR")
    base = Path(folder) if folder else Path(__file__).resolve().parents[1].parent / "shared" / "reference"
    path = base / "contracts" / "new_fungible_token.wasm"
    return path if path.is_file() else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=200, help="sends timed per latency row")
    parser.add_argument("--warmup", type=int, default=20, help="untimed sends before each latency row")
    parser.add_argument("--snapshots", type=int, default=50, help="snapshot/revert pairs timed")
    parser.add_argument("--transfers", type=int, default=2000, help="transfers sent for the rate")
    parser.add_argument("--signers", type=int, default=8, help="accounts the rate's transfers come from")
    parser.add_argument("--connections", type=int, default=4, help="connections the rate's transfers go over")
    parser.add_argument("--server-cpu", default="0")
    parser.add_argument("--load-cpu", default="1")
    args = parser.parse_args()
    os.sched_setaffinity(0, {int(args.load_cpu)})
    token_code = reference_token()
    with tempfile.TemporaryDirectory(prefix="nearrpc-sandbox-bench-") as folder:
        where = Path(folder)
        with running_server(where / "sandbox.sqlite", where / "server.log", sample=True, sandbox=True) as server:
            pin(server.pid, args.server_cpu)
            funded = server.facts.funded_accounts
            if len(funded) < max(3, args.signers + 1):
                raise SystemExit(f"bench: the sample has {len(funded)} funded accounts, --signers needs one more")
            client = Client(server.url)
            sender, receiver = client.signer(funded[0]), funded[1].account_id
            print(f"sandbox bench: serve --sandbox (automine) pid {server.pid} on cpu {args.server_cpu}, "
                  f"client on cpu {args.load_cpu}, {server.url}")  # fmt: skip
            rows = [
                latency(client, "transfer commit (1 conn)", args.count, args.warmup,
                        lambda h: sender.sign(receiver, (model.Transfer(deposit=1),), h)),
                latency(client, "increment commit (1 conn)", args.count, args.warmup,
                        lambda h: sender.sign(COUNTER, (function_call("increment", {}),), h)),
            ]  # fmt: skip
            if token_code is None:
                print("ft_transfer: skipped (no new_fungible_token.wasm under $NEARRPC_REFERENCE_DIR/contracts)")
            else:
                token, holder = client.signer(funded[2]), client.signer(funded[1])
                if prepare_token(client, token_code.read_bytes(), token, sender, holder):
                    transfer = function_call("ft_transfer", {"receiver_id": receiver, "amount": "1"}, deposit=1)
                    rows.append(latency(client, "ft_transfer commit (1 conn)", args.count, args.warmup,
                                        lambda h: sender.sign(token.account.account_id, (transfer,), h)))  # fmt: skip
            taken, reverted = snapshots(client, sender, receiver, args.snapshots)
            rows += [taken, reverted]
            signers = [client.signer(account) for account in funded[2 : 2 + args.signers]]
            rate, rate_errors = throughput(client, server.url, signers, receiver, args.transfers, args.connections)
            client.http.close()
    print(f"{'row':<34} {'n':>6} {'p50 ms':>9} {'p99 ms':>9} {'errors':>7}")
    for row in rows:
        print(row.line())
    print(f"transfers per second: {rate:.0f} ({args.transfers} transfers, {args.signers} signers, "
          f"{args.connections} connections, broadcast_tx_commit; errors {rate_errors})")  # fmt: skip
    print("goals:")
    transfer_p50 = percentile(rows[0].times_ms, 50) if rows[0].times_ms else float("inf")
    snap_p50 = percentile(taken.times_ms, 50) if taken.times_ms else float("inf")
    revert_p50 = percentile(reverted.times_ms, 50) if reverted.times_ms else float("inf")
    for what, goal, met in (
        ("transfer commit p50", f"<= {TRANSFER_P50_MS:g} ms", transfer_p50 <= TRANSFER_P50_MS),
        ("transfers per second", f">= {TRANSFERS_PER_SECOND:g}", rate >= TRANSFERS_PER_SECOND),
        ("sandbox_snapshot p50", f"<= {SNAPSHOT_MS:g} ms", snap_p50 <= SNAPSHOT_MS),
        ("sandbox_revert p50", f"<= {SNAPSHOT_MS:g} ms", revert_p50 <= SNAPSHOT_MS),
    ):
        print(f"  {what:<24} goal {goal:<10} {verdict(met)}")
    errors = sum(row.errors for row in rows) + rate_errors
    if errors:
        print(f"bench: {errors} sends were not a success", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
