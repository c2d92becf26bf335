"""View calls through a fork of another `nearrpc serve` over the sample chain (issue 34 item 5):
byte-identical answers at two heights, the state a call reads fetched once and kept (a small
state whole in one request, issue 43 item 2), the same answers replayed with the upstream stopped,
and the verify mode's count of differences, 0 against an honest upstream."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any, Final

import httpx
import pytest

from nearrpc.store import open_store
from tests.fork.test_fork_replay import Answers, ask, differences, empty_store
from tests.fork.upstream_proxy import UpstreamProxy
from tests.support.backends import BACKENDS
from tests.support.cli import nearrpc
from tests.support.serve_process import Served, serving

pytestmark = [pytest.mark.live, pytest.mark.deep]

HEIGHTS: Final = (30, 100)  # alice's balance and the count differ between them
# what the calls below read (service/sample/contracts/*.wat): the count, and alice's balance
READ_KEYS: Final = {("counter.localnet", b"STATE"), ("token.localnet", b"balice.localnet")}
# both states are small (storage usage within nearcore's default view limit): each is fetched
# whole in one view_state per height, the keys no call read (the total supply) with it
UNREAD_KEY: Final = ("token.localnet", b"t")


def _holds_whole_states(kept: set[tuple[str, bytes]]) -> bool:
    return READ_KEYS | {UNREAD_KEY} <= kept and {account for account, _ in kept} == {"counter.localnet",
                                                                                    "token.localnet"}


def _rpc(method: str, params: dict[str, Any]) -> tuple[str, str]:
    return "/", json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})


def _call(account: str, method: str, args: bytes, height: int, *, experimental: bool = False) -> tuple[str, str]:
    params = {"block_id": height, "account_id": account, "method_name": method,
              "args_base64": base64.b64encode(args).decode()}  # fmt: skip
    if experimental:
        return _rpc("EXPERIMENTAL_call_function", params)
    return _rpc("query", {"request_type": "call_function", **params})


def calls(height: int) -> list[tuple[str, str]]:
    return [
        _call("counter.localnet", "get_num", b"", height),
        _call("token.localnet", "ft_balance_of", b'{"account_id":"alice.localnet"}', height),
        _call("token.localnet", "ft_balance_of", b'{"account_id":"alice.localnet"}', height, experimental=True),
        _call("token.localnet", "ft_metadata", b"", height, experimental=True),
    ]


def listings(height: int) -> list[tuple[str, str]]:
    token_balances = {"request_type": "view_state", "block_id": height, "account_id": "token.localnet",
                      "prefix_base64": base64.b64encode(b"b").decode()}  # fmt: skip
    return [
        _rpc("query", token_balances),
        _rpc("EXPERIMENTAL_view_state", {"block_id": height, "account_id": "counter.localnet", "prefix_base64": ""}),
    ]


def _kept_keys(store: Path | str) -> set[tuple[str, bytes]]:
    reader = open_store(store, "read")
    try:
        return {(account, key) for account, key, _, _ in reader.iter_contract_data()}
    finally:
        reader.close()


def _kept_answers(store: Path) -> list[tuple[str, bytes]]:
    reader = open_store(store, "read")
    try:
        return sorted(reader.iter_kept_answers())
    finally:
        reader.close()


def _metric(fork: Served, name: str) -> float:
    text = httpx.get(fork.url + "/metrics", timeout=10.0).text
    found = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name)]
    return sum(found)


def _results(answers: Answers) -> list[Any]:
    return [json.loads(body) for _, body in answers.values()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_calls_through_a_fork_answer_the_upstreams_bytes_lazily_then_replay_offline(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    store = empty_store(backend, tmp_path, request)
    asked_calls = [request for height in HEIGHTS for request in calls(height)]
    direct = ask(upstream.url, asked_calls)
    results = _results(direct)
    assert all("result" in answer for answer in results), results
    assert results[0] != results[4] and results[1] != results[5]  # the two heights hold two states
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "fork.log") as fork:
        assert differences(direct, ask(fork.url, asked_calls)) == []
        # lazily: the states of the two contracts called, each small enough for one listing
        assert _holds_whole_states(_kept_keys(store))
        state_asks = sum(count for key, count in proxy.requests().items() if '"request_type": "view_state"' in key)
        assert state_asks == 2 * len(HEIGHTS)  # one per contract and height, not one per key read
        asked_state = proxy.total()
        assert differences(direct, ask(fork.url, asked_calls)) == []
        assert proxy.total() == asked_state  # asked again: nothing more from the upstream
        assert _metric(fork, 'nearrpc_view_calls_total{path="local"') >= len(asked_calls)
        asked_listings = [request for height in HEIGHTS for request in listings(height)]
        direct_listings = ask(upstream.url, asked_listings)
        assert differences(direct_listings, ask(fork.url, asked_listings)) == []
    proxy.down = True  # the upstream stopped: a new fork process over the store answers alone
    everything = {**direct, **direct_listings}
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "replay.log") as replay:
        assert differences(everything, ask(replay.url, list(everything))) == []
    with serving("--store", store, log=tmp_path / "plain.log") as plain:  # and a plain server over it
        assert differences(everything, ask(plain.url, list(everything))) == []


def test_verify_mode_counts_no_difference_against_an_honest_upstream_and_names_a_lie(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    honest = calls(HEIGHTS[0])
    lied_about = _call("counter.localnet", "get_num", b"", HEIGHTS[1])
    direct = ask(upstream.url, [*honest, lied_about])
    with serving("--store", tmp_path / "fork.sqlite", "--upstream", proxy.url, "--verify-calls",
                 log=tmp_path / "fork.log") as fork:  # fmt: skip
        assert differences({key: direct[key] for key in honest}, ask(fork.url, honest)) == []
        assert _metric(fork, "nearrpc_view_call_differences_total") == 0

        def lie(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
            params = request.get("params") or {}
            if params.get("request_type") == "call_function" and "result" in answer:
                answer["result"]["result"] = list(b"1234567")
            return answer

        proxy.rewrite = lie
        # the local answer stands; the upstream's differs: counted and logged, naming the call
        assert ask(fork.url, [lied_about]) == {lied_about: direct[lied_about]}
        assert _metric(fork, "nearrpc_view_call_differences_total") == 1
        logged = [line for line in fork.log_lines() if "verify-calls" in line and "differs" in line]
        assert len(logged) == 1 and "counter.localnet.get_num" in logged[0], fork.log_lines()[-5:]
    # the upstream's answers were kept verbatim: with it stopped, a new fork compares with them
    # (the kept lie included) and asks nothing
    proxy.rewrite = None
    proxy.down = True
    with serving("--store", tmp_path / "fork.sqlite", "--upstream", proxy.url, "--verify-calls",
                 log=tmp_path / "replay.log") as replay:  # fmt: skip
        asked = proxy.total()
        assert differences(direct, ask(replay.url, [*honest, lied_about])) == []
        assert _metric(replay, "nearrpc_view_call_differences_total") == 1
        assert not [line for line in replay.log_lines() if "no upstream answer" in line]
        assert proxy.total() == asked
    copied = tmp_path / "copied.sqlite"
    done = nearrpc("store", "copy", tmp_path / "fork.sqlite", copied)
    assert done.returncode == 0, done.stderr
    assert _kept_answers(copied) == _kept_answers(tmp_path / "fork.sqlite") != []


def test_verify_calls_without_an_upstream_is_refused(tmp_path: Path, sample_store: Path) -> None:
    done = nearrpc("serve", "--store", sample_store, "--verify-calls", "--port", "0")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "nearrpc serve: --verify-calls compares view calls with a fork's upstream: it needs --upstream (and "
        "--record-mode new)"
    ]


def _asks_state(request: dict[str, Any]) -> bool:
    params = request.get("params") or {}
    return request.get("method") == "EXPERIMENTAL_view_state" or params.get("request_type") == "view_state"


@pytest.mark.parametrize("lie", ["wrong block hash", "invalid shape", "oversized"])
def test_a_lying_view_state_is_not_kept(upstream: Served, proxy: UpstreamProxy, tmp_path: Path, lie: str) -> None:
    store = tmp_path / "fork.sqlite"
    request = _call("counter.localnet", "get_num", b"", HEIGHTS[1])
    direct = ask(upstream.url, [request])
    block = {"jsonrpc": "2.0", "id": 1, "method": "block", "params": {"block_id": HEIGHTS[1]}}
    block_hash = httpx.post(upstream.url, json=block, timeout=10.0).json()["result"]["header"]["hash"]

    def rewrite(asked: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        if _asks_state(asked) and "result" in answer:
            if lie == "wrong block hash":
                answer["result"]["block_hash"] = "11111111111111111111111111111111"
            else:
                answer["result"]["values"] = [{"key": "not base64!", "value": 7}]
        return answer

    def oversized(asked: dict[str, Any]) -> tuple[int, bytes, dict[str, str]] | None:
        if not _asks_state(asked):
            return None
        # well-formed, for the right block, and over the 1 MB a fork reads (--upstream-max-answer-mb)
        filler = base64.b64encode(bytes(1_200_000)).decode()
        body = {"jsonrpc": "2.0", "id": asked.get("id"), "result": {"values": [{"key": "U1RBVEU=", "value": filler}],
                "block_hash": block_hash, "block_height": HEIGHTS[1]}}  # fmt: skip
        return 200, json.dumps(body).encode(), {}

    if lie == "oversized":
        proxy.intercept = oversized
    else:
        proxy.rewrite = rewrite
    with serving("--store", store, "--upstream", proxy.url, "--upstream-max-answer-mb", "1", "--upstream-retries", "0",
                 log=tmp_path / "fork.log") as fork:  # fmt: skip
        (status, body), = ask(fork.url, [request]).values()
        assert status == 500 and b"INTERNAL_ERROR" in body, body  # nearcore: internal errors are 500
        assert {"wrong block hash": b"the state is of block", "invalid shape": b"the answer is refused",
                "oversized": b"the answer is over 1 MB"}[lie] in body  # fmt: skip
        assert ("counter.localnet", b"STATE") not in _kept_keys(store)
        proxy.rewrite = proxy.intercept = None  # honest again: asked again, and kept
        time.sleep(0.1)
        assert ask(fork.url, [request]) == direct
        assert ("counter.localnet", b"STATE") in _kept_keys(store)


def test_a_state_the_upstream_refuses_as_too_large_is_marked_and_not_asked_again(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """nearcore refuses view_state for an account whose storage is over its limit, whatever the
    prefix: the fork keeps that as a mark (no rows) and raises ContractStateTooLarge, which
    the handlers answer with the upstream's own call_function (kept, so asked once)."""
    store = tmp_path / "fork.sqlite"
    request = _call("counter.localnet", "get_num", b"", HEIGHTS[1])
    (_, direct), = ask(upstream.url, [request]).values()

    def too_large(asked: dict[str, Any]) -> tuple[int, bytes, dict[str, str]] | None:
        if not _asks_state(asked):
            return None
        info = {"contract_account_id": "counter.localnet", "block_height": HEIGHTS[1], "block_hash": "x"}
        error = {"name": "HANDLER_ERROR", "cause": {"name": "TOO_LARGE_CONTRACT_STATE", "info": info},
                 "code": -32000, "message": "Server error", "data": "State of contract counter.localnet is too large"}
        return 200, json.dumps({"jsonrpc": "2.0", "id": asked.get("id"), "error": error}).encode(), {}

    proxy.intercept = too_large
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "fork.log") as fork:
        (_, body), = ask(fork.url, [request]).values()
        assert body == direct, body
        assert b'"result":[' in body
        state_asks = sum(proxy.asked("query", params) for params in _state_params(proxy))
        assert state_asks == 1
        time.sleep(2.1)  # past the settle window: the mark in the store answers
        (_, again), = ask(fork.url, [request]).values()
        assert again == body
        assert sum(proxy.asked("query", params) for params in _state_params(proxy)) == 1
        metrics = httpx.get(f"{fork.url}/metrics", timeout=10.0).text
        assert 'nearrpc_view_calls_total{path="upstream",reason="state_too_large"}' in metrics
    assert _kept_keys(store) == set()
    reader = open_store(store, "read")
    try:
        assert reader.fetched(f"contract-state-too-large/counter.localnet/{HEIGHTS[1]}")
    finally:
        reader.close()


def _state_params(proxy: UpstreamProxy) -> list[dict[str, Any]]:
    """The view_state params the fork can have sent for counter.localnet's state at HEIGHTS[1] (a
    small state: all of it, no prefix)."""
    block = {"jsonrpc": "2.0", "id": 1, "method": "block", "params": {"block_id": HEIGHTS[1]}}
    block_hash = httpx.post(proxy.target, json=block, timeout=10.0).json()["result"]["header"]["hash"]
    prefix = base64.b64encode(b"").decode()
    return [{"request_type": "view_state", "block_id": block_hash, "account_id": "counter.localnet",
             "prefix_base64": prefix}]  # fmt: skip


def test_view_state_is_asked_through_query_and_an_untracked_shard_keeps_nothing(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """As the recorder: `query view_state` only (nearcore's EXPERIMENTAL_view_state answers a shard
    it does not track with an HTTP 500); UNAVAILABLE_SHARD keeps nothing, and is asked again."""
    asked_calls = calls(HEIGHTS[0])
    direct = ask(upstream.url, asked_calls)

    def untracked(asked: dict[str, Any]) -> tuple[int, bytes, dict[str, str]] | None:
        if not _asks_state(asked):
            return None
        error = {"name": "HANDLER_ERROR", "cause": {"name": "UNAVAILABLE_SHARD", "info": {"shard_id": 1}},
                 "code": -32000, "message": "Server error", "data": "Shard 1 is not tracked"}  # fmt: skip
        return 200, json.dumps({"jsonrpc": "2.0", "id": asked.get("id"), "error": error}).encode(), {}

    proxy.intercept = untracked
    store = tmp_path / "fork.sqlite"
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "fork.log") as fork:
        (status, body), = ask(fork.url, asked_calls[:1]).values()
        assert status == 500 and b"UNAVAILABLE_SHARD" in body, body
        assert _kept_keys(store) == set()
        proxy.intercept = None
        assert differences(direct, ask(fork.url, asked_calls)) == []
    assert _holds_whole_states(_kept_keys(store))
    methods = {key.split(" ", 1)[0] for key in proxy.requests()}
    assert "EXPERIMENTAL_view_state" not in methods
    through_query = sum(count for key, count in proxy.requests().items() if '"request_type": "view_state"' in key)
    assert through_query == 3  # the shard refused once, then each contract's state once
