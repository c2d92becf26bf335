"""A server the suite starts ends with the test process that started it, also when that process
is killed outright (a CI timeout kills pytest with its workers; the servers, in sessions of their
own, were left running: tests/support/orphans.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import REPO

pytestmark = pytest.mark.live

# A stand-in for a pytest worker: starts a server as the suite's fixtures do, says its pid, waits.
_TEST_PROCESS = """
import sys, time
from pathlib import Path
from tests.support.live_server import running_server
from tests.support.serve_process import serving
folder = Path(sys.argv[1])
with running_server(folder / "sample.sqlite", folder / "a.log") as first:
    with serving("--store", folder / "sample.sqlite", log=folder / "b.log") as second:
        print(first.pid, second.pid, flush=True)
        time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:  # a zombie is an ended process
        return stat.read().split(") ", 1)[1][0] != "Z"


def test_servers_end_when_the_test_process_is_killed(sample_store: Path, tmp_path: Path) -> None:
    (tmp_path / "sample.sqlite").symlink_to(sample_store)
    with subprocess.Popen([sys.executable, "-c", _TEST_PROCESS, str(tmp_path)], cwd=REPO,
                          stdout=subprocess.PIPE, text=True) as tests:  # fmt: skip
        assert tests.stdout is not None
        pids = [int(pid) for pid in tests.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(pid) for pid in pids), pids
        tests.send_signal(signal.SIGKILL)  # no finally block, no fixture teardown runs
    deadline = time.monotonic() + 60  # a bound on waiting, not a speed check: they end in well under a second
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in pids if _alive(pid)]
    for pid in left:  # leave nothing behind on failure either
        os.kill(pid, signal.SIGKILL)
    assert not left, f"servers still running after their test process was killed: {left}"
