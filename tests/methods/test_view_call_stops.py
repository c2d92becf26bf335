"""A view call stopped, through a real `nearrpc serve` (issue 43 items 1-2): past
`--view-call-timeout` a looping call is answered as nearcore answers a query its view client did
not answer in time (INTERNAL_ERROR "Timeout", HTTP 500), long before its gas limit; a client that
disconnects while its call runs stops the execution (counted as `cancelled`, not run on to its
deadline); a `block` request answers meanwhile; a server told to stop answers the call under way
at once that it is shutting down. The loop is `crawl`, which runs seconds before its gas limit."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.methods.test_view_call_limits import LOOP, _query_call, _write_accounts
from tests.support.live_server import LiveServer, running_server
from tests.support.rpc import call, checked
from tests.support.sample_facts import SampleFacts, sample_facts

pytestmark = pytest.mark.live

FACTS: SampleFacts = sample_facts()


@pytest.fixture(scope="module")
def live(sample_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    folder = tmp_path_factory.mktemp("stops")
    path = folder / "stops.sqlite"
    path.write_bytes(sample_store.read_bytes())
    _write_accounts(path)
    with running_server(path, folder / "server.log", "--view-call-timeout", "0.5") as server:
        yield server


def _stopped(http: httpx.Client, reason: str) -> float:
    text = http.get("/metrics").text
    found = re.search(rf'nearrpc_view_calls_total\{{path="local",reason="{reason}"\}} ([0-9.]+)', text)
    return float(found.group(1)) if found else 0.0


def test_a_loop_past_its_deadline_is_answered_timeout(live: LiveServer) -> None:
    with httpx.Client(base_url=live.url, timeout=60) as http:
        before = _stopped(http, "deadline")
        answer = checked(call(http, "query", _query_call(LOOP, "crawl")), "query")
        assert answer.status == 500
        assert answer.error["cause"] == {"name": "INTERNAL_ERROR", "info": {"error_message": "Timeout"}}
        assert _stopped(http, "deadline") == before + 1


def test_a_client_that_disconnects_stops_its_call(live: LiveServer) -> None:
    address = urlsplit(live.url)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "query",
                       "params": {**_query_call(LOOP, "crawl"), "block_id": FACTS.head_height}}).encode()  # fmt: skip
    request = (
        f"POST / HTTP/1.1\r\nhost: {address.hostname}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode() + body
    with httpx.Client(base_url=live.url, timeout=60) as http:
        before = (_stopped(http, "cancelled"), _stopped(http, "deadline"))
        with socket.create_connection((address.hostname or "", address.port or 80)) as client:
            client.sendall(request)
            time.sleep(0.15)  # the call runs on a worker
            block = checked(call(http, "block", {"block_id": FACTS.head_height}), "block")
            assert block.status == 200  # answered while the call runs
        for _ in range(100):
            if _stopped(http, "cancelled") > before[0]:
                break
            time.sleep(0.05)
        # stopped because its client left, not run on to its deadline
        assert (_stopped(http, "cancelled"), _stopped(http, "deadline")) == (before[0] + 1, before[1])


def test_a_call_running_when_the_server_stops_is_answered_and_stopped(sample_store: Path, tmp_path: Path) -> None:
    path = tmp_path / "stopping.sqlite"
    path.write_bytes(sample_store.read_bytes())
    _write_accounts(path)
    # a deadline far off: only the stop ends the call before its gas limit
    with running_server(path, tmp_path / "server.log", "--view-call-timeout", "60") as server:
        with httpx.Client(base_url=server.url, timeout=60) as http, ThreadPoolExecutor(1) as pool:
            looping = pool.submit(call, http, "query", _query_call(LOOP, "crawl"))
            time.sleep(0.3)  # the call runs on a worker
            os.killpg(server.pid, signal.SIGTERM)
            answer = looping.result(timeout=30)
    assert answer.status == 500, answer
    assert answer.error["cause"]["info"] == {
        "error_message": "the server is shutting down: it runs no more view calls"
    }  # not GasLimitExceeded: stopped, not run to its end
