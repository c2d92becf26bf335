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

from nearrpc.store import StoreLocation, describe_location, is_file_location
from nearrpc.testing.facts import ChainFacts, is_fork_store, read_chain_facts, read_served_facts

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


def _command(store: StoreLocation, sample: bool, upstream: str | None, fork_height: int | None) -> list[str]:
    command = [sys.executable, "-m", "nearrpc", "serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "info",
               "--access-log"]
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
    startup_seconds: float = 60.0,
) -> Iterator[NearrpcServer]:
    """Serve `store` until the block ends; with `sample`, the sample chain is built there first
    when no store exists; with `upstream`, as a fork of that node (created from it when no store
    exists), its head pinned at `fork_height` when given."""
    env = _environment(store, upstream)
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            _command(store, sample, upstream, fork_height), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
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
            yield NearrpcServer(found[0], store, log, process.pid, _facts(found[0], store, upstream is not None))
        finally:
            _stop(process)
            copier.join(timeout=_STOP_SECONDS)
