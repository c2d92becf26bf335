"""bench.real_calls_bench in its shortest form, so it does not rot: a small real-contracts store, a
real `nearrpc serve`, every row measured with no failed answer, each row's sample answer the
one the store was written with (the bench stops otherwise), the restart rows and the goals
printed. Speed is never asserted (a shared machine's figures mean nothing)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import reference_dir
from tests.support.debian import ensure_package

ROOT = Path(__file__).resolve().parents[2]
# 100 tokens: the page of 500 is left out (a call of a second would leave a 1 s run without answers)
ROWS = ("view_account hit (repeated)", "sample ft_balance_of fresh", "real ft_balance_of fresh", "nft_token fresh",
        "nft_tokens limit 50 fresh")  # fmt: skip


@pytest.mark.live
@pytest.mark.reference
@pytest.mark.deep  # a load generator against servers: a scenario
@pytest.mark.long(0.8)  # a store, a server, 10 short wrk runs, 2 restarts
def test_real_calls_bench_prints_every_row_and_the_restart() -> None:
    if not (reference_dir() / "contracts" / "new_non_fungible_token.wasm").is_file():
        pytest.skip("the example contracts are not in the reference folder (set NEARRPC_REFERENCE_DIR)")
    ensure_package("wrk", lambda: shutil.which("wrk"))
    cpus = sorted(os.sched_getaffinity(0))
    command = [sys.executable, "-m", "bench.real_calls_bench", "--duration", "1s", "--latency-duration", "1s",
               "--warmup", "1s", "--rounds", "1", "--connections", "4", "--holders", "60", "--nfts", "100",
               "--server-cpu", str(cpus[0]), "--load-cpu", str(cpus[-1])]  # fmt: skip
    environment = {**os.environ, "NEARRPC_REFERENCE_DIR": str(reference_dir())}
    done = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=600, check=False)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr

    answered = re.findall(r"^answer: (.+?): HTTP 200, ", out, re.MULTILINE)
    assert answered == list(ROWS), out
    for row in ROWS:
        found = re.search(rf"^{re.escape(row)} +(\d+) +([\d.]+) +([\d.]+) +[\d.]+/[\d.]+ +[\d.]+/[\d.]+ +(\d+) +(\d+)$",
                          out, re.MULTILINE)  # fmt: skip
        assert found, out
        assert int(found[5]) > 0 and int(found[4]) == 0, f"{row}: no requests or failed answers\n{out}"
    counted = re.search(r"during the rounds: (\d+) \(the fresh rows' requests: (\d+)\)", out)
    assert counted and int(counted[1]) >= int(counted[2]) > 0, out
    assert re.search(r"^restarted server, first nft_token of nft.localnet .*: [\d.]+ ms", out, re.MULTILINE), out
    assert re.search(r"^the same without the cache .*: [\d.]+ ms", out, re.MULTILINE), out
    goals = re.findall(r"^  (.+?) +[\d.]+  goal (\S+) +(met|MISSED)$", out, re.MULTILINE)
    assert [goal for _, goal, _ in goals] == ["0.3", "0.4", "50"], out
