"""bench.calls_bench (tools/bench.sh's view-call table) in its shortest form, so it does not rot:
it runs against a real `nearrpc serve` of the sample store and prints its rows, its goals and the
answers it measured. Speed is never asserted here (a shared machine's figures mean nothing);
what is asserted is that the figures are printed, that every measured answer was a 200 with a
result, and that the distinct-argument row was executed, not answered from the answer cache."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.store_bench import final_block
from nearrpc.store import open_store
from tests.support.debian import ensure_package

ROOT = Path(__file__).resolve().parents[2]
ROWS = ("view_account hit (repeated)", "ft_balance_of repeated", "ft_balance_of distinct args")


def _balance(store: Path, account: str) -> int:
    """The token balance the sample store holds for `account` at its final block."""
    reader = open_store(store, "read")
    try:
        final = final_block(reader)
        value = reader.contract_value("token.localnet", b"b" + account.encode(), final.height)
    finally:
        reader.close()
    return 0 if value is None else int.from_bytes(value, "little")


@pytest.mark.live
@pytest.mark.deep  # a load generator against a server: a scenario
@pytest.mark.long(0.4)  # a sample store, a server, 9 short wrk runs: started first (tests/conftest.py)
def test_calls_bench_prints_rows_goals_and_the_answers_it_measured(sample_store: Path) -> None:
    ensure_package("wrk", lambda: shutil.which("wrk"))
    cpus = sorted(os.sched_getaffinity(0))
    command = [sys.executable, "-m", "bench.calls_bench", "--duration", "1s", "--latency-duration", "1s",
               "--warmup", "1s", "--rounds", "1", "--connections", "4",
               "--server-cpu", str(cpus[0]), "--load-cpu", str(cpus[-1])]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr

    # the answers shown before the rounds: the balances the store holds, "0" for a new account
    answers = dict(re.findall(r"^answer: (.+?): HTTP 200, (.+) at height \d+$", out, re.MULTILINE))
    assert answers["view_account hit (repeated)"].startswith("amount ")
    shown = {label: answers[label] for label in answers if label.startswith("ft_balance_of distinct args (")}
    assert shown.pop("ft_balance_of distinct args (fresh-check.localnet)") == '"0"'
    ((label, answer),) = shown.items()
    holder = label.removeprefix("ft_balance_of distinct args (").removesuffix(")")
    assert answer == f'"{_balance(sample_store, holder)}"' != '"0"'
    assert re.fullmatch(r'"[1-9][0-9]*"', answers["ft_balance_of repeated"])

    # every row measured, each answer a 200 holding what the row expects (errors 0)
    for row in ROWS:
        found = re.search(rf"^{re.escape(row)} +(\d+) +([\d.]+) +([\d.]+)/([\d.]+) +([\d.]+)/([\d.]+) +(\d+) +(\d+)$",
                          out, re.MULTILINE)  # fmt: skip
        assert found, out
        assert int(found[1]) > 0 and int(found[8]) > 0, found[0]
        assert int(found[7]) == 0, f"{row}: answers that were not results\n{out}"
    goals = re.findall(r"^  (.+?) +goal (.+?) +(met|MISSED)$", out, re.MULTILINE)
    assert [goal for _, goal, _ in goals] == ["<= 1.0 ms", ">= 0.3", ">= 0.9 (hit speed)"], out

    # the distinct-argument row was executed at every request, never a cache hit
    counted = re.search(r"during the rounds: (\d+) \(the fresh row's requests: (\d+)\)", out)
    assert counted, out
    assert int(counted[1]) >= int(counted[2]) > 0, counted[0]
