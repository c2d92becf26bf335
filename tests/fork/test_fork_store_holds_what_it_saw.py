"""A fork's store served without its upstream claims nothing it did not see (issue 43, item 7).

A fork of a `nearrpc serve` over the sample chain is asked for blocks 100 and 101, two accounts
at 101 (one that exists, one that never does), one access key of a third, and a contract's code
and state. Its store, served plain and with `--record-mode none`, answers what the fork saw as
the upstream did, and every account, key, list, code, state or view call it never asked for as
state it does not hold (nearcore's answer for a shard the node does not track), never as
UNKNOWN_ACCOUNT or an empty list: on both backends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.support.backends import BACKENDS
from tests.support.serve_process import serving

pytestmark = [pytest.mark.live, pytest.mark.deep]

AT = 101
SEEN = "bob.localnet"  # asked at 101 only
ABSENT = "nobody.localnet"  # asked at 101: never exists
KEYED = "alice.localnet"  # one access key asked at 101, never the account or its list
CONTRACT = "counter.localnet"  # code and state asked at 101 (so its account too)
UNSEEN = "carol.localnet"  # exists on the upstream, never asked
NO_KEY = "ed25519:" + "1" * 32


def _post(url: str, method: str, params: Any) -> tuple[int, dict[str, Any]]:
    reply = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, timeout=30.0)
    return reply.status_code, orjson.loads(reply.content)


def _store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Path | str:
    if backend == "sqlite":
        return tmp_path / "fork.sqlite"
    url: str = request.getfixturevalue("postgres").create_database("forkheld")
    return url


def _seen_requests(key: str) -> list[tuple[str, dict[str, Any]]]:
    at = {"block_id": AT}
    return [
        ("block", {"block_id": 100}),
        ("block", at),
        ("EXPERIMENTAL_view_account", {**at, "account_id": SEEN}),
        ("EXPERIMENTAL_view_account", {**at, "account_id": ABSENT}),
        ("EXPERIMENTAL_view_access_key", {**at, "account_id": KEYED, "public_key": key}),
        ("EXPERIMENTAL_view_code", {**at, "account_id": CONTRACT}),
        ("EXPERIMENTAL_view_state", {**at, "account_id": CONTRACT, "prefix_base64": ""}),
        ("EXPERIMENTAL_call_function", {**at, "account_id": CONTRACT, "method_name": "get_num", "args_base64": ""}),
    ]


def _unseen_requests(key: str) -> list[tuple[str, dict[str, Any]]]:
    at = {"block_id": AT}
    return [
        ("EXPERIMENTAL_view_account", {**at, "account_id": UNSEEN}),
        ("EXPERIMENTAL_view_account", {"block_id": 100, "account_id": SEEN}),  # seen at 101 only
        ("EXPERIMENTAL_view_account", {**at, "account_id": KEYED}),  # one of its keys seen, not it
        ("EXPERIMENTAL_view_access_key_list", {**at, "account_id": SEEN}),
        ("EXPERIMENTAL_view_access_key_list", {**at, "account_id": KEYED}),  # one key is not the list
        ("EXPERIMENTAL_view_access_key", {**at, "account_id": KEYED, "public_key": NO_KEY}),
        ("EXPERIMENTAL_view_access_key", {**at, "account_id": UNSEEN, "public_key": key}),
        ("EXPERIMENTAL_view_code", {**at, "account_id": UNSEEN}),
        ("EXPERIMENTAL_view_state", {**at, "account_id": UNSEEN, "prefix_base64": ""}),
        ("EXPERIMENTAL_view_state", {"block_id": 100, "account_id": CONTRACT, "prefix_base64": ""}),
        ("EXPERIMENTAL_call_function", {**at, "account_id": UNSEEN, "method_name": "get_num", "args_base64": ""}),
        ("EXPERIMENTAL_call_function", {**at, "block_id": 100, "account_id": CONTRACT, "method_name": "get_num",
                                        "args_base64": ""}),
    ]


def _query_form(method: str, params: dict[str, Any]) -> dict[str, Any]:
    request_type = {"EXPERIMENTAL_call_function": "call_function"}.get(method, method.removeprefix("EXPERIMENTAL_"))
    return {"request_type": request_type, **params}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_forks_store_served_alone_answers_what_it_never_fetched_as_not_held(
    backend: str, sample_store: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store = _store(backend, tmp_path, request)
    with serving("--store", sample_store, log=tmp_path / "upstream.log") as node:
        keys = _post(node.url, "EXPERIMENTAL_view_access_key_list", {"block_id": AT, "account_id": KEYED})[1]
        key = keys["result"]["keys"][0]["public_key"]
        seen = _seen_requests(key)
        direct = [_post(node.url, method, params) for method, params in seen]
        for method, params in _unseen_requests(key)[:3]:
            # the accounts exist upstream where they are asked: "no such account" would be a false claim
            assert "result" in _post(node.url, method, params)[1], (method, params)
        with serving("--store", store, "--upstream", node.url + "/", log=tmp_path / "fork.log") as fork:
            assert [_post(fork.url, method, params) for method, params in seen] == direct
        for flags, name in [((), "plain"), (("--upstream", node.url + "/", "--record-mode", "none"), "none")]:
            with serving("--store", store, *flags, log=tmp_path / f"{name}.log") as replay:
                # what the fork saw: the upstream's answers, UNKNOWN_ACCOUNT of the absent account included
                assert [_post(replay.url, method, params) for method, params in seen] == direct, name
                for method, params in _unseen_requests(key):
                    status, answer = _post(replay.url, method, params)
                    error = answer.get("error")
                    assert error is not None, (name, method, params, answer)
                    assert (status, error["cause"]["name"]) == (500, "INTERNAL_ERROR"), (name, method, params, error)
                    assert "does not track the shard ID" in error["cause"]["info"]["error_message"], (method, error)
                    status, answer = _post(replay.url, "query", _query_form(method, params))
                    cause = answer["error"]["cause"]["name"]
                    assert (status, cause) == (200, "UNAVAILABLE_SHARD"), (name, method, params, answer)
