"""A fork under load and faults, against a real upstream `nearrpc serve` behind a steerable
proxy: one upstream request for many concurrent misses of one key; a slow, down or lying
upstream answers INTERNAL_ERROR in bounded time, keeps nothing, never holds a hit back; an
upstream of another chain is refused at start; two replicas over one PostgreSQL store record
the same block at the same moment and both see it."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from nearrpc.store import StoreLocation, open_store
from tests.fork.upstream_proxy import UpstreamProxy, rpc
from tests.support.cli import nearrpc
from tests.support.postgres import PostgresServer
from tests.support.serve_process import Served, serving

pytestmark = [pytest.mark.live, pytest.mark.deep]

FAULT_FLAGS = ("--miss-timeout", "2", "--upstream-retries", "1", "--upstream-timeout", "1")


def stored_block(store: StoreLocation, height: int) -> bool:
    reader = open_store(store, "read")
    try:
        return reader.block_by_height(height) is not None
    finally:
        reader.close()


def internal_error_lines(fork: Served) -> list[str]:
    return [line for line in fork.log_lines() if "INTERNAL_ERROR" in line]


def test_concurrent_misses_of_one_key_make_one_upstream_request(proxy: UpstreamProxy, tmp_path: Path) -> None:
    with serving("--store", tmp_path / "f.sqlite", "--upstream", proxy.url, log=tmp_path / "fork.log") as fork:
        proxy.delay = 0.5  # all 24 requests arrive while the first one's fetch is under way
        account = {"block_id": 50, "account_id": "alice.localnet"}
        asks = [("block", {"block_id": 50}), ("EXPERIMENTAL_view_account", account)]
        with ThreadPoolExecutor(max_workers=24) as pool:
            replies = list(pool.map(lambda i: rpc(fork.url, *asks[i % 2]), range(24)))
        assert {reply.status_code for reply in replies} == {200}
        assert len({reply.content for reply in replies[0::2]}) == 1 and len({r.content for r in replies[1::2]}) == 1
        assert proxy.asked("block", {"block_id": 50}) == 1
        assert proxy.asked("EXPERIMENTAL_view_account", account) == 1
        metrics = httpx.get(f"{fork.url}/metrics").text
        assert 'nearrpc_upstream_requests_total{method="block",outcome="result"}' in metrics


def test_upstream_concurrency_and_rate_are_bounded(proxy: UpstreamProxy, tmp_path: Path) -> None:
    """12 different misses at once: at most --upstream-concurrency in flight, and no more than
    --upstream-rate a second once the limiter's first second of credit is spent."""
    flags = ("--upstream-concurrency", "2", "--upstream-rate", "4")
    with serving("--store", tmp_path / "f.sqlite", "--upstream", proxy.url, *flags, log=tmp_path / "fork.log") as fork:
        assert rpc(fork.url, "block", {"block_id": 10}).status_code == 200  # the chain check is behind us
        # longer than the rate's spacing (0.25 s): without the cap up to 3 would be in flight, so
        # the cap, not the rate, is what holds them at 2 (each miss is two requests since the
        # hash is checked, which spends the limiter's credit before the burst)
        proxy.delay = 0.6
        before = len(proxy.arrivals)
        with ThreadPoolExecutor(max_workers=12) as pool:
            replies = list(pool.map(lambda height: rpc(fork.url, "block", {"block_id": height}), range(20, 32)))
        assert {reply.status_code for reply in replies} == {200}
        assert proxy.most_in_flight == 2
        arrivals = proxy.arrivals[before:]
        assert len(arrivals) == 24  # each miss asks by height, then by the hash answered (the hash is checked)
        # 4 a second: the 12th request comes at least 2 s after the first (the first 4 may come at once)
        assert arrivals[-1] - arrivals[0] >= 1.9


def test_a_slow_upstream_answers_internal_error_in_bounded_time_and_never_holds_a_hit(
    proxy: UpstreamProxy, tmp_path: Path
) -> None:
    store = tmp_path / "f.sqlite"
    with serving("--store", store, "--upstream", proxy.url, *FAULT_FLAGS, log=tmp_path / "fork.log") as fork:
        assert rpc(fork.url, "block", {"block_id": 10}).status_code == 200  # now a hit
        proxy.delay = 5.0
        with ThreadPoolExecutor(max_workers=1) as pool:
            started = time.monotonic()
            slow = pool.submit(rpc, fork.url, "block", {"block_id": 60})
            time.sleep(0.3)  # the miss is under way
            hit_started = time.monotonic()
            hit = rpc(fork.url, "block", {"block_id": 10})
            hit_seconds = time.monotonic() - hit_started
            missed = slow.result()
            miss_seconds = time.monotonic() - started
        proxy.delay = 0.0
        assert hit.status_code == 200 and hit_seconds < 0.5
        assert missed.status_code == 500 and missed.json()["error"]["cause"]["name"] == "INTERNAL_ERROR"
        assert "within 2 s" in missed.json()["error"]["data"]
        assert 1.9 < miss_seconds < 4.0  # the miss timeout, not the upstream's 5 s nor its retries
        assert len(internal_error_lines(fork)) == 1  # logged once
    assert not stored_block(store, 60)  # nothing kept


def test_an_upstream_that_is_down_fails_misses_and_serves_hits_until_it_is_back(
    proxy: UpstreamProxy, tmp_path: Path
) -> None:
    store = tmp_path / "f.sqlite"
    with serving("--store", store, "--upstream", proxy.url, *FAULT_FLAGS, log=tmp_path / "fork.log") as fork:
        assert rpc(fork.url, "block", {"block_id": 10}).status_code == 200
        proxy.down = True
        started = time.monotonic()
        missed = rpc(fork.url, "block", {"block_id": 70})
        assert missed.status_code == 500 and time.monotonic() - started < 4.0
        assert rpc(fork.url, "block", {"block_id": 10}).status_code == 200
        status = httpx.get(f"{fork.url}/status").json()["nearrpc"]["fork"]
        assert status["upstream_answers"] is False and status["upstream"] == proxy.url
        assert httpx.get(f"{fork.url}/health").status_code == 200  # health is the store's
        assert not stored_block(store, 70)
        proxy.down = False
        assert rpc(fork.url, "block", {"block_id": 70}).status_code == 200
    assert stored_block(store, 70)


def _bad_gas_price(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    if request.get("method") == "block" and "result" in answer:
        answer["result"]["header"]["gas_price"] = 100  # the spec has a string there
    return answer


def test_an_answer_the_spec_refuses_is_never_kept(proxy: UpstreamProxy, tmp_path: Path) -> None:
    store = tmp_path / "f.sqlite"
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "fork.log") as fork:
        proxy.rewrite = _bad_gas_price
        refused = rpc(fork.url, "block", {"block_id": 80})
        assert refused.status_code == 500 and refused.json()["error"]["cause"]["name"] == "INTERNAL_ERROR"
        (logged,) = internal_error_lines(fork)
        assert "gas_price" in logged  # the log names the field that failed
        proxy.rewrite = None
        assert rpc(fork.url, "block", {"block_id": 80}).json()["result"]["header"]["gas_price"] != 100
    assert stored_block(store, 80)


def _other_chain(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    if request.get("method") == "genesis_config":
        answer["result"]["chain_id"] = "othernet"
    return answer


def test_an_upstream_of_another_chain_is_refused_at_start(proxy: UpstreamProxy, tmp_path: Path) -> None:
    store = tmp_path / "f.sqlite"
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "fork.log") as fork:
        assert rpc(fork.url, "block", {"block_id": 10}).status_code == 200
    proxy.rewrite = _other_chain
    done = nearrpc("serve", "--store", store, "--upstream", proxy.url, "--port", "0")
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "'othernet'" in line and "'nearrpc-localnet'" in line and "a fork records only its own chain" in line


def test_two_replicas_over_one_postgresql_store_record_the_same_block_at_once(
    proxy: UpstreamProxy, postgres: PostgresServer, tmp_path: Path
) -> None:
    store = postgres.create_database("replicas")
    with (
        serving("--store", store, "--upstream", proxy.url, log=tmp_path / "a.log") as first,
        serving("--store", store, "--upstream", proxy.url, log=tmp_path / "b.log") as second,
    ):
        proxy.delay = 0.2
        together = threading.Barrier(2)

        def ask(replica: Served) -> httpx.Response:
            together.wait()
            return rpc(replica.url, "block", {"block_id": 90})

        with ThreadPoolExecutor(max_workers=2) as pool:
            replies = list(pool.map(ask, (first, second)))
        proxy.delay = 0.0
        assert [reply.status_code for reply in replies] == [200, 200]
        assert replies[0].content == replies[1].content
        proxy.down = True  # what each recorded, every replica now answers from the store
        for replica in (first, second):
            assert rpc(replica.url, "block", {"block_id": 90}).content == replies[0].content
    with serving("--store", store, log=tmp_path / "plain.log") as plain:
        assert rpc(plain.url, "block", {"block_id": 90}).content == replies[0].content


def test_record_mode_none_serves_the_store_alone(proxy: UpstreamProxy, tmp_path: Path) -> None:
    """VCR's `none`: the upstream is never asked, a miss answers from the store as without a fork."""
    store = tmp_path / "f.sqlite"
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "fork.log") as fork:
        kept = rpc(fork.url, "block", {"block_id": 10}).content
    asked = proxy.total()
    replaying = ("--store", store, "--upstream", proxy.url, "--record-mode", "none")
    with serving(*replaying, log=tmp_path / "none.log") as replay:
        assert rpc(replay.url, "block", {"block_id": 10}).content == kept
        missed = rpc(replay.url, "block", {"block_id": 11})
        assert missed.json()["error"]["cause"]["name"] == "UNKNOWN_BLOCK"  # as from any store without it
        assert "fork" not in httpx.get(f"{replay.url}/status").json()["nearrpc"]
    assert proxy.total() == asked
    assert not stored_block(store, 11)


def test_credentials_in_the_upstream_url_are_never_shown(proxy: UpstreamProxy, tmp_path: Path) -> None:
    """A provider's key in the URL's user, path or query: used to connect, shown nowhere."""
    port = proxy.url.rsplit(":", 1)[1].strip("/")
    secret_url = f"http://keyholder:s3cret-pass@127.0.0.1:{port}/v3/s3cret-path?apikey=s3cret-query"
    with serving("--store", tmp_path / "f.sqlite", "--upstream", secret_url, log=tmp_path / "fork.log") as fork:
        assert rpc(fork.url, "block", {"block_id": 10}).status_code == 200  # the URL works as given
        proxy.down = True
        failed = rpc(fork.url, "block", {"block_id": 12})
        status = httpx.get(f"{fork.url}/status").text
        title = Path(f"/proc/{fork.pid}/cmdline").read_bytes().decode(errors="replace")
        shown = [status, failed.text, fork.log.read_text(), title]
    assert all("s3cret" not in text for text in shown), [text for text in shown if "s3cret" in text]
    assert f"http://127.0.0.1:{port}/…" in status
