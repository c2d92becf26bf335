"""A store file replaced while `nearrpc serve` reads it (service/store/sqlite_serving.py, SqliteServingReader).

The replacements an operator makes: a store built elsewhere and moved into place, `nearrpc
sample --force`, and, by mistake, a file that is no store. Under load: no request may fail, and
the new file's head is answered within a second of the move.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import orjson
import pytest

from nearrpc.sample import build_sample_store
from nearrpc.sample.synthetic import SyntheticShape, write_synthetic_chain
from tests.support.cli import nearrpc
from tests.support.live_server import LiveServer, running_server
from tests.support.load import Outcome, run_load, tally

pytestmark = [pytest.mark.live, pytest.mark.deep]

FINAL = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "block", "params": {"finality": "final"}})
SAMPLE_FINAL_HEIGHT = 108  # the sample chain's head is 110, its last final block 108
SYNTHETIC = SyntheticShape(blocks=150, accounts=3, states=2)  # head 149, last final block 147
NOTICED_WITHIN_SECONDS = 1.0


def final_height(server: LiveServer) -> int:
    answer = httpx.post(server.url, content=FINAL, headers={"content-type": "application/json"}, timeout=10)
    assert answer.status_code == 200, answer.text
    return int(orjson.loads(answer.content)["result"]["header"]["height"])


@contextmanager
def under_load(server: LiveServer, seconds: float) -> Iterator[list[Outcome]]:
    """Requests for the final block from 4 threads for `seconds`; their outcomes once it ends."""
    outcomes: list[Outcome] = []
    load = threading.Thread(target=lambda: outcomes.extend(run_load(server.url, [FINAL], threads=4, seconds=seconds)))
    load.start()
    try:
        time.sleep(0.5)  # the load is under way before anything is replaced
        yield outcomes
    finally:
        load.join()


def seconds_until(server: LiveServer, height: int) -> float:
    started = time.monotonic()
    while final_height(server) != height:
        assert time.monotonic() - started < 10, "the new store was never served"
        time.sleep(0.02)
    return time.monotonic() - started


def test_a_store_moved_into_place_and_a_forced_sample_are_served_within_a_second(tmp_path: Path) -> None:
    store = tmp_path / "served.sqlite"
    build_sample_store(store)
    with running_server(store, tmp_path / "server.log") as server:
        assert final_height(server) == SAMPLE_FINAL_HEIGHT
        with under_load(server, seconds=4.0) as outcomes:
            write_synthetic_chain(tmp_path / "built-elsewhere.sqlite", SYNTHETIC)
            os.replace(tmp_path / "built-elsewhere.sqlite", store)
            moved = seconds_until(server, SYNTHETIC.blocks - 3)
            forced = nearrpc("sample", store, "--force")
            assert forced.returncode == 0, forced.stderr
            sampled = seconds_until(server, SAMPLE_FINAL_HEIGHT)
        assert httpx.get(f"{server.url}/health").status_code == 200
    print(f"\nnew store served after {moved:.2f} s (moved into place), {sampled:.2f} s (sample --force); "
          f"load: {tally(outcomes)}")  # fmt: skip
    assert moved < NOTICED_WITHIN_SECONDS and sampled < NOTICED_WITHIN_SECONDS
    assert outcomes and set(tally(outcomes)) == {(200, "result")}


def test_a_file_that_is_no_store_is_not_served_and_the_log_says_why_once(tmp_path: Path) -> None:
    store = tmp_path / "served.sqlite"
    build_sample_store(store)
    log = tmp_path / "server.log"
    with running_server(store, log) as server:
        with under_load(server, seconds=2.0) as outcomes:
            (tmp_path / "mistake.sqlite").write_text("not a store\n")
            os.replace(tmp_path / "mistake.sqlite", store)
            time.sleep(1.0)  # four file checks: the old store goes on being served
            assert final_height(server) == SAMPLE_FINAL_HEIGHT
        assert set(tally(outcomes)) == {(200, "result")}
        assert httpx.get(f"{server.url}/health").status_code == 200
        # then a real store moved into place is followed as usual
        write_synthetic_chain(tmp_path / "fixed.sqlite", SYNTHETIC)
        os.replace(tmp_path / "fixed.sqlite", store)
        assert seconds_until(server, SYNTHETIC.blocks - 3) < NOTICED_WITHIN_SECONDS
    refusals = [line for line in log.read_text().splitlines() if "cannot be served" in line]
    assert len(refusals) == 1, log.read_text()
    assert " ERROR nearrpc.store: " in refusals[0] and "still serving the store as it was when opened" in refusals[0]


def _status_head(server: LiveServer) -> int:
    answer = httpx.get(f"{server.url}/status", timeout=10)
    assert answer.status_code == 200, answer.text
    return int(answer.json()["sync_info"]["latest_block_height"])


def _metrics_head(server: LiveServer) -> float:
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    (line,) = (line for line in text.splitlines() if line.startswith("nearrpc_store_head_height "))
    return float(line.split()[1])


def test_status_and_metrics_follow_a_replaced_store_without_any_json_rpc_request(tmp_path: Path) -> None:
    """An operator's dashboard and a balancer's checks may be all a server hears: /status and
    /metrics notice the replacement themselves (no JSON-RPC request ever arrives here)."""
    store = tmp_path / "served.sqlite"
    build_sample_store(store)
    with running_server(store, tmp_path / "server.log") as server:
        assert (_status_head(server), _metrics_head(server)) == (110, 110)
        write_synthetic_chain(tmp_path / "built-elsewhere.sqlite", SYNTHETIC)
        os.replace(tmp_path / "built-elsewhere.sqlite", store)
        started = time.monotonic()
        while _status_head(server) != SYNTHETIC.blocks - 1:
            assert time.monotonic() - started < 10, "/status never showed the new store"
            time.sleep(0.05)
        assert _metrics_head(server) == SYNTHETIC.blocks - 1
        assert httpx.get(f"{server.url}/health", timeout=10).status_code == 200
