"""Issue 43's attacks against one `nearrpc serve`, each while a legitimate client measures:

    python -m bench.attacks [--seconds 15] [--only NAME ...]

The server runs on 127.0.0.1 over a copy of the sample store with four contracts deployed
beside the sample's (WAT below, at the head): `spin` loops until its gas limit, `reads` reads
distinct storage keys in a loop, `big` returns 4 MiB, `flood` writes 16 MiB registers in a
loop. It is started with `--max-connections 50` (so one address holds at most 25, the default
share). Each attack runs `--seconds` (at most about 15 s each, loopback only, every socket and
thread ended with it):

- `gas-loops`: 8 concurrent calls of `spin`, each asked again as soon as answered;
- `storage-loops`: 2 concurrent calls of `reads` (issue 43 saw two leave nothing answered);
- `returns-4mb`: 16 concurrent calls of `big`;
- `register-flood`: 8 concurrent calls of `flood`;
- `conn-idle`: 200 connections that connect and send nothing (reconnecting when closed);
- `conn-churn`: 200 connections opened and closed as fast as they go;
- `conn-slow`: 200 connections sending their headers a byte every half second.

The attacker's connections come from 127.0.0.2 and the legitimate client's from 127.0.0.3
(Linux answers on all of 127/8), as from two hosts. Meanwhile the legitimate client, on
kept-alive connections opened before the attack, asks in turn `block` final and a fresh view
call (`ft_balance_of` of an account id never asked before, so no cached answer serves it), and
opens a new connection once a second (which must be let in), and the server's RSS is read every
0.2 s. Printed per attack: the legitimate answers and failures, p50 / p99 of each kind, the
worst RSS, and what the attacker got (answers, refusals). Issue 43's goal is printed beside
them: p99 within 1 s and RSS under 600 MB. A figure is only a measurement on a quiet machine
(docs/BENCHMARKS.md); `--seconds 2` is a smoke run, not one.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import itertools
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import base58
import httpx
import orjson
import wasmtime

from bench.store_bench import rss_mb
from nearrpc.sample import build_sample_store, sample_chain
from nearrpc.store import open_store
from tests.support.live_server import LiveServer, running_server
from tests.support.sample_facts import sample_facts

GOAL_P99_S = 1.0
GOAL_RSS_MB = 600.0
MAX_CONNECTIONS = 50
ATTACKER_ADDRESS = "127.0.0.2"  # the source address of every attacker connection and call
LEGITIMATE_ADDRESS = "127.0.0.3"  # and of the legitimate client's: another host as the server sees it
ATTACK_TIMEOUT_S = 60.0  # an attacker's request waits this long at most

_IMPORTS = """
  (import "env" "storage_read" (func $storage_read (param i64 i64 i64) (result i64)))
  (import "env" "value_return" (func $value_return (param i64 i64)))
  (import "env" "write_register" (func $write_register (param i64 i64 i64)))
  (import "env" "register_len" (func $register_len (param i64) (result i64)))
"""
CONTRACTS = {
    # a host call each turn (register_len, the cheapest): seconds of calls to its 300 Tgas, where a
    # bare wasm loop burns them in tens of milliseconds once compiled
    "spin.localnet": ("spin", '(func (export "spin") (loop $l (drop (call $register_len (i64.const 0))) (br $l)))'),
    "reads.localnet": (
        "reads",
        '(func (export "reads") (local $i i64) (loop $l (i64.store (i32.const 0) (local.get $i))'
        " (drop (call $storage_read (i64.const 8) (i64.const 0) (i64.const 0)))"
        " (local.set $i (i64.add (local.get $i) (i64.const 1))) (br $l)))",
    ),
    "big.localnet": ("big", '(func (export "big") (call $value_return (i64.const 4194304) (i64.const 0)))'),
    "flood.localnet": (
        "flood",
        '(func (export "flood") (local $i i64) (loop $l'
        " (call $write_register (local.get $i) (i64.const 16777216) (i64.const 0))"
        " (local.set $i (i64.and (i64.add (local.get $i) (i64.const 1)) (i64.const 63))) (br $l)))",
    ),
}


def _wasm(body: str) -> bytes:
    return bytes(wasmtime.wat2wasm(f'(module {_IMPORTS} (memory (export "memory") 80) {body})'))


def deploy(path: Path) -> int:
    """The attack contracts written into the store at its head, as accounts of their own; the head
    height, at which they are asked."""
    facts = sample_facts()
    counter = [row for row in sample_chain().account_states if row.account_id == facts.contract_account]
    base = orjson.loads(counter[-1].view_json or b"{}")
    with open_store(path, "write") as writer, writer.batch() as batch:
        for account, (_, body) in CONTRACTS.items():
            code = _wasm(body)
            code_hash = base58.b58encode(hashlib.sha256(code).digest()).decode()
            batch.put_contract_code(code_hash, code)
            view = {**base, "code_hash": code_hash}
            batch.put_account_state(account, facts.head_height, orjson.dumps(view))
    return facts.head_height


def _call_body(account: str, method: str, args: bytes, height: int | None) -> bytes:
    params: dict[str, object] = {"request_type": "call_function", "account_id": account, "method_name": method,
                                 "args_base64": base64.b64encode(args).decode()}  # fmt: skip
    params.update({"finality": "final"} if height is None else {"block_id": height})
    return orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "query", "params": params})


BLOCK = b'{"jsonrpc":"2.0","id":1,"method":"block","params":{"finality":"final"}}'
_fresh = itertools.count()


def fresh_view_body() -> bytes:
    """A view call no earlier request asked (the answer cache cannot serve it)."""
    args = orjson.dumps({"account_id": f"nobody-{time.time_ns()}-{next(_fresh)}.localnet"})
    return _call_body(sample_facts().token_account, "ft_balance_of", args, None)


@dataclass
class Measured:
    block_s: list[float] = field(default_factory=list)
    view_s: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    new_connections: int = 0
    new_connections_refused: int = 0
    rss_mb: list[float] = field(default_factory=list)


class Legitimate:
    """The client measured during an attack: kept-alive connections, and a new one a second."""

    def __init__(self, url: str, pid: int) -> None:
        self._url = url
        self._pid = pid
        self._stop = threading.Event()
        self.measured = Measured()
        self._threads: list[threading.Thread] = []

    def _client(self) -> httpx.Client:
        transport = httpx.HTTPTransport(local_address=LEGITIMATE_ADDRESS)
        return httpx.Client(base_url=self._url, timeout=30, transport=transport)

    def start(self) -> None:
        clients = [self._client() for _ in range(2)]
        for client in clients:  # connected before the attack begins
            client.post("/", content=BLOCK, headers={"content-type": "application/json"})
        self._threads = [
            threading.Thread(target=self._ask, args=(clients[0], self.measured.block_s, lambda: BLOCK)),
            threading.Thread(target=self._ask, args=(clients[1], self.measured.view_s, fresh_view_body)),
            threading.Thread(target=self._new_connections),
            threading.Thread(target=self._rss),
        ]
        for thread in self._threads:
            thread.start()

    def stop(self) -> Measured:
        self._stop.set()
        for thread in self._threads:
            thread.join()
        return self.measured

    def _ask(self, client: httpx.Client, samples: list[float], body: Callable[[], bytes]) -> None:
        try:
            while not self._stop.is_set():
                started = time.monotonic()
                try:
                    answer = client.post("/", content=body(), headers={"content-type": "application/json"})
                    if answer.status_code != 200 or b'"result"' not in answer.content:
                        self.measured.failures.append(f"{answer.status_code} {answer.content[:120]!r}")
                except httpx.HTTPError as failure:
                    self.measured.failures.append(repr(failure))
                samples.append(time.monotonic() - started)
                self._stop.wait(0.02)
        finally:
            client.close()

    def _new_connections(self) -> None:
        while not self._stop.wait(1.0):
            self.measured.new_connections += 1
            try:
                with self._client() as client:
                    answer = client.post("/", content=BLOCK, headers={"content-type": "application/json"})
                if answer.status_code != 200:
                    self.measured.new_connections_refused += 1
            except httpx.HTTPError:
                self.measured.new_connections_refused += 1

    def _rss(self) -> None:
        while not self._stop.wait(0.2):
            with contextlib.suppress(OSError):
                self.measured.rss_mb.append(rss_mb(self._pid))


@dataclass
class AttackerTally:
    answers: int = 0
    refusals: int = 0  # an error answer, a 503, a connection closed on it
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, answered: bool) -> None:
        with self.lock:
            if answered:
                self.answers += 1
            else:
                self.refusals += 1


def _calls(
    url: str, body: bytes, concurrency: int, stop: threading.Event, tally: AttackerTally
) -> list[threading.Thread]:
    def loop() -> None:
        transport = httpx.HTTPTransport(local_address=ATTACKER_ADDRESS)
        with httpx.Client(base_url=url, timeout=ATTACK_TIMEOUT_S, transport=transport) as client:
            while not stop.is_set():
                try:
                    answer = client.post("/", content=body, headers={"content-type": "application/json"})
                    # a call that failed is answered too (a result with an error text); a refusal is an error
                    tally.count(answer.status_code == 200 and b'"result"' in answer.content)
                except httpx.HTTPError:
                    tally.count(False)
                    stop.wait(0.05)

    return [threading.Thread(target=loop) for _ in range(concurrency)]


def _address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def _sockets(url: str, kind: str, stop: threading.Event, tally: AttackerTally) -> list[threading.Thread]:
    """200 attacker connections in 20 threads of 10: idle, churning or slow, from ATTACKER_ADDRESS."""
    address = _address(url)
    source = (ATTACKER_ADDRESS, 0)

    def idle() -> None:
        held: list[socket.socket | None] = [None] * 10
        while not stop.wait(0.05):
            for index, sock in enumerate(held):
                if sock is not None:
                    try:
                        closed = sock.recv(4096, socket.MSG_DONTWAIT) == b""  # closed by the server
                    except (BlockingIOError, TimeoutError):
                        closed = False
                    except OSError:
                        closed = True
                    if not closed:
                        continue
                    sock.close()
                    held[index] = None
                    tally.count(False)
                with contextlib.suppress(OSError):
                    sock = held[index] = socket.create_connection(address, timeout=2, source_address=source)
                    sock.setblocking(False)  # else each recv above waits up to its timeout for data first
                    tally.count(True)
        for sock in held:
            if sock is not None:
                sock.close()

    def churn() -> None:
        while not stop.is_set():
            try:
                with socket.create_connection(address, timeout=2, source_address=source):
                    tally.count(True)
            except OSError:
                tally.count(False)

    def slow() -> None:
        request = b"POST / HTTP/1.1\r\nhost: attacker\r\ncontent-type: application/json\r\nx-padding: " + b"a" * 200
        held: list[tuple[socket.socket, int] | None] = [None] * 10
        while not stop.wait(0.5):
            for index, entry in enumerate(held):
                try:
                    if entry is None:
                        entry = (socket.create_connection(address, timeout=2, source_address=source), 0)
                    sock, sent = entry
                    sock.sendall(request[sent : sent + 1])
                    held[index] = (sock, (sent + 1) % len(request))
                    tally.count(True)
                except OSError:
                    if entry is not None:
                        entry[0].close()
                    held[index] = None
                    tally.count(False)
        for entry in held:
            if entry is not None:
                entry[0].close()

    target = {"idle": idle, "churn": churn, "slow": slow}[kind]
    return [threading.Thread(target=target) for _ in range(20)]


def attacks(url: str, height: int) -> dict[str, Callable[[threading.Event, AttackerTally], list[threading.Thread]]]:
    def calls(account: str, concurrency: int) -> Callable[[threading.Event, AttackerTally], list[threading.Thread]]:
        method = CONTRACTS[account][0]
        return lambda stop, tally: _calls(url, _call_body(account, method, b"", height), concurrency, stop, tally)

    def sockets(kind: str) -> Callable[[threading.Event, AttackerTally], list[threading.Thread]]:
        return lambda stop, tally: _sockets(url, kind, stop, tally)

    return {
        "gas-loops": calls("spin.localnet", 8),
        "storage-loops": calls("reads.localnet", 2),
        "returns-4mb": calls("big.localnet", 16),
        "register-flood": calls("flood.localnet", 8),
        "conn-idle": sockets("idle"),
        "conn-churn": sockets("churn"),
        "conn-slow": sockets("slow"),
    }


def _quantile(samples: list[float], q: float) -> float:
    if not samples:
        return float("nan")
    if len(samples) == 1:
        return samples[0]
    return statistics.quantiles(samples, n=100, method="inclusive")[int(q * 100) - 1]


def run_attack(server: LiveServer, name: str, start: Callable[..., list[threading.Thread]], seconds: float) -> str:
    legitimate = Legitimate(server.url, server.pid)
    legitimate.start()
    stop = threading.Event()
    tally = AttackerTally()
    threads = start(stop, tally)
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    measured = legitimate.stop()
    for thread in threads:
        thread.join(ATTACK_TIMEOUT_S)
    block99, view99 = _quantile(measured.block_s, 0.99), _quantile(measured.view_s, 0.99)
    rss = max(measured.rss_mb, default=float("nan"))
    met = block99 <= GOAL_P99_S and view99 <= GOAL_P99_S and rss < GOAL_RSS_MB and not measured.failures
    return (
        f"{name:15} legit {len(measured.block_s) + len(measured.view_s):5} answers {len(measured.failures):3} failed | "
        f"block p50/p99 {_quantile(measured.block_s, 0.5) * 1e3:7.1f}/{block99 * 1e3:7.1f} ms | "
        f"fresh view p50/p99 {_quantile(measured.view_s, 0.5) * 1e3:7.1f}/{view99 * 1e3:7.1f} ms | "
        f"new conns refused {measured.new_connections_refused}/{measured.new_connections} | "
        f"RSS max {rss:6.0f} MB | attacker {tally.answers} answered, {tally.refusals} refused | "
        f"goal {'met' if met else 'NOT met'}"
        + (f"\n{'':15} first failures: {measured.failures[:3]}" if measured.failures else "")
    )


@contextlib.contextmanager
def attacked_server(folder: Path) -> Iterator[tuple[LiveServer, int]]:
    store = folder / "attacks.sqlite"
    build_sample_store(store)
    height = deploy(store)
    with running_server(store, folder / "server.log", "--max-connections", str(MAX_CONNECTIONS)) as server:
        yield server, height


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=15.0, help="each attack's duration (at most 15)")
    parser.add_argument("--only", nargs="*", help="run only these attacks")
    args = parser.parse_args(argv)
    seconds = min(args.seconds, 15.0)
    folder = Path(tempfile.mkdtemp(prefix="nearrpc-attacks-"))
    try:
        with attacked_server(folder) as (server, height):
            table = attacks(server.url, height)
            unknown = set(args.only or ()) - set(table)
            if unknown:
                parser.error(f"unknown attacks: {sorted(unknown)} (known: {sorted(table)})")
            print(f"nearrpc serve at {server.url}, --max-connections {MAX_CONNECTIONS}, {seconds:g} s per attack; "
                  f"attacker from {ATTACKER_ADDRESS}, legit from {LEGITIMATE_ADDRESS}; "
                  f"goal: legit p99 <= {GOAL_P99_S:g} s, RSS < {GOAL_RSS_MB:g} MB", flush=True)  # fmt: skip
            idle = Legitimate(server.url, server.pid)
            idle.start()
            time.sleep(min(seconds, 3.0))
            quiet = idle.stop()
            print(f"{'(no attack)':15} block p99 {_quantile(quiet.block_s, 0.99) * 1e3:.1f} ms, fresh view p99 "
                  f"{_quantile(quiet.view_s, 0.99) * 1e3:.1f} ms, RSS {max(quiet.rss_mb, default=0):.0f} MB",
                  flush=True)  # fmt: skip
            for name, start in table.items():
                if args.only and name not in args.only:
                    continue
                print(run_attack(server, name, start, seconds), flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
