"""bench.sandbox_bench in its shortest form, so it does not rot: it starts `serve --sandbox`, sends
each row's transactions and the rate's, snapshots and reverts, and prints its rows and the
issue's goals. Speed is never asserted here (a shared machine's figures mean nothing); what is
asserted is that every row was measured, every send was a success, and the goals are printed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import reference_dir

ROOT = Path(__file__).resolve().parents[2]
ROWS = ["transfer commit (1 conn)", "increment commit (1 conn)", "sandbox_snapshot",
        "sandbox_revert (after a transfer)"]  # fmt: skip


@pytest.mark.live
@pytest.mark.deep  # a server sent transactions from several connections: a scenario
def test_sandbox_bench_prints_rows_rate_and_goals() -> None:
    cpus = sorted(os.sched_getaffinity(0))
    command = [sys.executable, "-m", "bench.sandbox_bench", "--count", "3", "--warmup", "1", "--snapshots", "2",
               "--transfers", "12", "--signers", "3", "--connections", "2",
               "--server-cpu", str(cpus[0]), "--load-cpu", str(cpus[-1])]  # fmt: skip
    env = {**os.environ, "NEARRPC_REFERENCE_DIR": str(reference_dir())}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr

    token = (reference_dir() / "contracts" / "new_fungible_token.wasm").is_file()
    rows = [*ROWS[:2], "ft_transfer commit (1 conn)", *ROWS[2:]] if token else ROWS
    for row in rows:
        found = re.search(rf"^{re.escape(row)} +(\d+) +([\d.]+) +([\d.]+) +(\d+)$", out, re.MULTILINE)
        assert found, out
        assert int(found[1]) == (2 if row.startswith("sandbox_") else 3), found[0]
        assert float(found[2]) <= float(found[3]) and int(found[4]) == 0, found[0]
    if not token:
        assert "ft_transfer: skipped" in out
    rate = re.search(r"^transfers per second: (\d+) \(12 transfers, 3 signers, 2 connections, .*errors 0\)$", out,
                     re.MULTILINE)  # fmt: skip
    assert rate and int(rate[1]) > 0, out
    goals = re.findall(r"^  (.+?) +goal (.+?) +(met|MISSED)$", out, re.MULTILINE)
    assert [goal for _, goal, _ in goals] == ["<= 5 ms", ">= 300", "<= 20 ms", "<= 20 ms"], out
