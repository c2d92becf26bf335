"""`nearrpc serve` as an operator starts it: any flags, `--port 0`, the URL read off its
start-up line (`... serving STORE (chain C, head H) at http://HOST:PORT/`)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import httpx

from tests.support.cli import REPO
from tests.support.orphans import end_with_parent

STARTED: Final = re.compile(r"serving (?P<store>.+) \((?P<summary>[^)]*)\) at (?P<url>http://\S+)/$")


def message_of(line: str) -> str:
    """A log line's message: the line itself, or the `message` of a JSON log line."""
    if line.startswith("{"):
        try:
            return str(json.loads(line).get("message", ""))
        except ValueError:
            pass
    return line


@dataclass(frozen=True)
class Served:
    url: str  # without the final slash, e.g. http://127.0.0.1:41234
    log: Path  # stderr and stdout of the server
    started_line: str  # the log line as written (text, or a JSON object)
    pid: int  # of `nearrpc serve` (with --workers N, the supervisor of the workers)

    def log_lines(self) -> list[str]:
        return self.log.read_text(encoding="utf-8", errors="replace").splitlines()


def _environment(env: dict[str, str] | None) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("NEARRPC_")}
    return {**clean, **(env or {})}


def wait_until_serving(
    process: subprocess.Popen[bytes], log: Path, startup_seconds: float, *, until_healthy: bool = True
) -> tuple[str, str]:
    """The URL (without the final slash) and start-up line of a `nearrpc serve` started with
    `--port 0` that writes its log to `log`, once it answers /health (or, not `until_healthy`,
    as soon as the line is written: what a load balancer's first health check meets)."""
    deadline = time.monotonic() + startup_seconds
    url = line = None
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"nearrpc serve exited with {process.returncode}:\n{log.read_text()}")
        if url is None:
            for text in log.read_text(encoding="utf-8", errors="replace").splitlines():
                found = STARTED.search(message_of(text))
                if found:
                    url, line = found["url"], text
        if url is not None and line is not None and not until_healthy:
            return url, line
        if url is not None and line is not None:
            try:
                if httpx.get(f"{url}/health", timeout=1.0).status_code == 200:
                    return url, line
            except httpx.TransportError:
                pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"nearrpc serve did not start in {startup_seconds} s:\n{log.read_text()}")
        time.sleep(0.1)


@contextmanager
def serving(
    *args: str | Path,
    log: Path,
    cwd: Path = REPO,
    env: dict[str, str] | None = None,
    wrapper: Sequence[str] = (),
    startup_seconds: float = 60.0,
    until_healthy: bool = True,
) -> Iterator[Served]:
    """`[wrapper] python -m nearrpc serve --port 0 ARGS` until it answers /health (or has written
    its start-up line: `until_healthy=False`); stopped after."""
    command = [*wrapper, sys.executable, "-m", "nearrpc", "serve", "--port", "0", *map(str, args)]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, cwd=cwd, env=_environment(env),
                                   start_new_session=True, preexec_fn=end_with_parent)
    try:
        url, line = wait_until_serving(process, log, startup_seconds, until_healthy=until_healthy)
        yield Served(url, log, line, process.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):  # a test may have ended it already
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
