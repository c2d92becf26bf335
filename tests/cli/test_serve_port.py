"""`nearrpc serve --port 0` binds a free port and says which, once it can be reached."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.live

BOUND = re.compile(r"at http://([^/\s]+):(\d+)/")


def test_port_zero_prints_the_bound_port_also_with_workers_and_a_quiet_log(sample_store: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEARRPC_")}
    command = [sys.executable, "-m", "nearrpc", "serve", "--port", "0", "--store", str(sample_store),
               "--workers", "2", "--log-level", "warning"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()  # the first line: nothing else is logged at this level
        match = BOUND.search(line)
        assert match, line
        assert f" nearrpc.serve: serving {sample_store} (chain nearrpc-localnet, head 110) at http://" in line
        host, port = match.group(1), int(match.group(2))
        assert host == "127.0.0.1" and port > 0
        # bound before the line was printed; the workers accept on it once they have started
        answer = httpx.get(f"http://{host}:{port}/health", timeout=30.0)
        assert answer.status_code == 200
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.communicate(timeout=30)


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_server_stopped_by_signal_exits_0(sample_store: Path, workers: str, stop: signal.Signals) -> None:
    """The README's exit codes: 0 when served until stopped, however it was stopped and with
    any number of workers (uvicorn re-raises a SIGTERM it handled, so one worker died by it
    outside a container, while two exited 0, as PID 1 in a container does)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEARRPC_")}
    command = [sys.executable, "-m", "nearrpc", "serve", "--port", "0", "--store", str(sample_store),
               "--workers", workers]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        assert process.stderr is not None
        match = BOUND.search(process.stderr.readline())
        assert match, "no start-up line"
        assert httpx.get(f"http://{match.group(1)}:{match.group(2)}/health", timeout=30.0).status_code == 200
        process.send_signal(stop)  # to the server alone, as systemd's or a supervisor's stop does
        _, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
