"""A `nearrpc serve` process for tests: started on a free loopback port, stopped cleanly.

The server is the installed command (`python -m nearrpc serve --port 0`), run as a user runs
it; its port is read from the line it prints once its socket is bound. Everything it prints
goes to a log file, which the pytest plugin attaches to failing tests.

With an upstream, the server is a fork (`--record-mode new`, NEARRPC_UPSTREAM): what the store
lacks is fetched from the node and kept, so the store becomes a cassette that a later server
without the upstream replays. A fork's facts are asked of the server (`read_served_facts`),
as are those of a store a fork wrote: its rows hold only what was asked.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx

from nearrpc.store import StoreLocation, describe_location, is_file_location, open_store
from nearrpc.testing.facts import ChainFacts, FundedAccount, is_fork_store, read_chain_facts, read_served_facts

# the line `nearrpc serve` prints once its socket is bound
_BOUND = re.compile(r"at http://([^/\s]+):(\d+)/")
_STOP_SECONDS = 15.0


class ServerError(Exception):
    """The server did not start; the message carries its log."""


@dataclass(frozen=True, slots=True, repr=False)
class NearrpcServer:
    url: str  # http://127.0.0.1:PORT, no trailing slash
    store: StoreLocation  # a file path, or a postgresql:// URL
    log: Path
    pid: int
    facts: ChainFacts

    def __repr__(self) -> str:
        # pytest prints a failing test's fixtures: a database URL's password stays out of it
        return (f"NearrpcServer(url={self.url!r}, store={describe_location(self.store)!r}, log={self.log!r}, "
                f"pid={self.pid})")

    def log_size(self) -> int:
        return self.log.stat().st_size if self.log.exists() else 0

    def log_since(self, offset: int) -> str:
        with self.log.open("rb") as stream:
            stream.seek(offset)
            return stream.read().decode("utf-8", "replace")


def _command(
    store: StoreLocation, sample: bool, upstream: str | None, fork_height: int | None, sandbox: bool
) -> list[str]:
    command = [sys.executable, "-m", "nearrpc", "serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "info",
               "--access-log"]
    if sandbox:  # a sandbox writes the store it is given: the caller hands it a copy of its own
        command.append("--sandbox")
    if is_file_location(store):  # a database URL, which may carry a password, goes in the environment
        command += ["--store", str(store)]
    if upstream is not None:  # the URL itself goes in the environment (`_environment`)
        command += ["--record-mode", "new"]
        if fork_height is not None:  # without an upstream, the store's head is the one there is
            command += ["--fork-height", str(fork_height)]
    return [*command, "--sample"] if sample else command


def _environment(store: StoreLocation, upstream: str | None) -> dict[str, str]:
    """The server's environment: none of the caller's NEARRPC_* settings (they are for their own
    server), and the URLs, which may carry a key or a password: an environment is private to its
    user, a command line is not (any user on the machine can list it)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("NEARRPC_")}
    if not is_file_location(store):
        env["NEARRPC_STORE"] = os.fspath(store)
    return env if upstream is None else {**env, "NEARRPC_UPSTREAM": upstream}


def _facts(url: str, store: StoreLocation, forks: bool) -> ChainFacts:
    return read_served_facts(url) if forks or is_fork_store(store) else read_chain_facts(store)


def _sandbox_start(store: StoreLocation, sample: bool, env: dict[str, str]) -> int:
    """The height of the store's head before a sandbox starts on it (the sample chain built there
    first when asked): a sandbox begins by making that block final, which its facts wait for."""
    if sample and is_file_location(store) and not Path(store).exists():
        built = subprocess.run([sys.executable, "-m", "nearrpc", "sample", os.fspath(store)], env=env,
                               capture_output=True, text=True, check=False)  # fmt: skip
        if built.returncode != 0:
            raise ServerError(f"nearrpc sample {store} exited with {built.returncode}:\n{built.stderr}")
    reader = open_store(store, "read")
    try:
        head = reader.head()
    finally:
        reader.close()
    if head is None:
        raise ServerError(f"{describe_location(store)} holds no block for a sandbox to build on")
    return head.height


def _wait_final(url: str, height: int, process: subprocess.Popen[bytes], deadline: float) -> None:
    """Wait until the block at `height` (or one above it) is final, as a sandbox makes it."""
    while time.monotonic() < deadline and process.poll() is None:
        answer = httpx.post(url, json={"jsonrpc": "2.0", "id": "nearrpc-facts", "method": "block",
                                       "params": {"finality": "final"}}, timeout=5.0).json()  # fmt: skip
        if int(answer.get("result", {}).get("header", {}).get("height", -1)) >= height:
            return
        time.sleep(0.02)
    raise ServerError(f"the sandbox at {url} did not make the block at {height} final")


def _copy_output(source: IO[bytes], log: IO[bytes], found: list[str], bound: threading.Event) -> None:
    """Write the server's output to the log as it comes; note the URL line when it passes."""
    for line in iter(source.readline, b""):
        log.write(line)
        log.flush()
        if not bound.is_set():
            match = _BOUND.search(line.decode("utf-8", "replace"))
            if match:
                found.append(f"http://{match.group(1)}:{match.group(2)}")
                bound.set()
    source.close()


def _wait_healthy(url: str, process: subprocess.Popen[bytes], deadline: float) -> None:
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"{url}/health", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise ServerError(f"nearrpc serve did not answer {url}/health")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    if hasattr(os, "killpg"):
        os.killpg(process.pid, signal.SIGTERM)
    else:  # pragma: no cover - not POSIX
        process.terminate()
    try:
        process.wait(timeout=_STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def running_server(
    store: StoreLocation,
    log: Path,
    *,
    sample: bool = False,
    upstream: str | None = None,
    fork_height: int | None = None,
    sandbox: bool = False,
    startup_seconds: float = 60.0,
) -> Iterator[NearrpcServer]:
    """Serve `store` until the block ends; with `sample`, the sample chain is built there first
    when no store exists; with `upstream`, as a fork of that node (created from it when no store
    exists), its head pinned at `fork_height` when given; with `sandbox`, as `serve --sandbox`
    (automine: each send is final when answered), writing the store."""
    env = _environment(store, upstream)
    settled_at = _sandbox_start(store, sample, env) if sandbox else None
    sample = sample and not sandbox  # built just above
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            _command(store, sample, upstream, fork_height, sandbox), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            env=env,
            start_new_session=hasattr(os, "killpg"),
        )
        assert process.stdout is not None
        found: list[str] = []
        bound = threading.Event()
        copier = threading.Thread(target=_copy_output, args=(process.stdout, log_file, found, bound), daemon=True)
        copier.start()
        try:
            deadline = time.monotonic() + startup_seconds
            while not bound.wait(0.05):
                if process.poll() is not None or time.monotonic() > deadline:
                    state = f"exited with {process.returncode}" if process.returncode is not None else "did not start"
                    copier.join(timeout=5)
                    raise ServerError(f"nearrpc serve {state}:\n{log.read_text(errors='replace')}")
            _wait_healthy(found[0], process, deadline)
            if settled_at is not None:
                _wait_final(found[0], settled_at, process, deadline)
            yield NearrpcServer(found[0], store, log, process.pid, _facts(found[0], store, upstream is not None))
        finally:
            _stop(process)
            copier.join(timeout=_STOP_SECONDS)


@dataclass(frozen=True, slots=True, repr=False)
class NearrpcSandbox:
    """One test's view of the session's sandbox: the server's `url` and `facts` (the chain as every
    test starts it: each one ends by reverting to the snapshot taken as it started), `funded` (an
    account to sign with: id, public and secret key, balance) and that snapshot's id."""

    server: NearrpcServer
    snapshot_id: str

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def facts(self) -> ChainFacts:
        return self.server.facts

    @property
    def funded(self) -> FundedAccount:
        return self.server.facts.funded_accounts[0]

    def __repr__(self) -> str:
        return f"NearrpcSandbox(url={self.url!r}, snapshot_id={self.snapshot_id!r})"


def sandbox_call(url: str, method: str, params: dict[str, str]) -> dict[str, object]:
    """A `sandbox_*` method's result; ServerError with the answer when there is none."""
    reply = httpx.post(url, json={"jsonrpc": "2.0", "id": "nearrpc-sandbox", "method": method, "params": params},
                       timeout=60.0)  # fmt: skip
    answer = reply.json() if reply.headers.get("content-type", "").startswith("application/json") else None
    if not isinstance(answer, dict) or not isinstance(answer.get("result"), dict):
        raise ServerError(f"{method} answered HTTP {reply.status_code}: {reply.text[:500]}")
    return answer["result"]  # type: ignore[no-any-return]  # a dict, checked just above
