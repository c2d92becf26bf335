"""Start `nearrpc serve` for real (uvicorn, a store) on a free 127.0.0.1 port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.orphans import end_with_parent
from tests.support.serve_process import wait_until_serving


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True)
class LiveServer:
    url: str  # e.g. http://127.0.0.1:41234
    store: Path | str  # a file, or a postgresql:// URL
    log: Path
    pid: int = 0  # of the `nearrpc serve` process


@contextmanager
def running_server(
    store: Path | str,
    log: Path,
    *extra: str,
    startup_seconds: float = 60.0,
    command: list[str] | None = None,
    cwd: Path | None = None,
) -> Iterator[LiveServer]:
    """`nearrpc serve` (or `command serve`, e.g. an installed script) on `store`, on a port the
    server picks itself (`--port 0`: a port picked here could be taken by a parallel test before
    the server binds it), read off its start-up line."""
    command = [
        *(command or [sys.executable, "-m", "nearrpc"]),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--store",
        str(store),
        "--log-level",
        "warning",
        *extra,
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEARRPC_")}
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            command, stdout=log_file, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True,
            preexec_fn=end_with_parent,
        )
        try:
            url, _ = wait_until_serving(process, log, startup_seconds)
            yield LiveServer(url, store, log, process.pid)
        finally:
            _signal_group(process.pid, signal.SIGTERM)  # a test may have killed it already
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                _signal_group(process.pid, signal.SIGKILL)
                process.wait()


def _signal_group(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except ProcessLookupError:
        pass
