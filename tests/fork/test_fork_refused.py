"""Answers a fork refuses to keep though the spec accepts them: they are not what was asked (a
view or block of another height, code of another hash) or not all of it (one page of a newer
node's paged key list). Each answers INTERNAL_ERROR and keeps nothing: asked again of an honest
upstream, the fork answers what the upstream does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fork.upstream_proxy import UpstreamProxy, rpc
from tests.support.serve_process import Served, serving

pytestmark = [pytest.mark.live, pytest.mark.deep]

Lie = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]


def _lie(method: str, change: Callable[[dict[str, Any]], None]) -> Lie:
    def rewrite(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        if request.get("method") == method and "result" in answer:
            change(answer["result"])
        return answer

    return rewrite


def _paged(result: dict[str, Any]) -> None:
    result["last_key"] = result["keys"][0]["public_key"]


def _older(result: dict[str, Any]) -> None:
    result["block_height"] -= 1


def _other_code(result: dict[str, Any]) -> None:
    result["hash"] = "11111111111111111111111111111112"


ALICE_AT_50 = {"block_id": 50, "account_id": "alice.localnet"}
CODE = {"request_type": "view_code", "block_id": 60, "account_id": "counter.localnet"}
CASES = {
    "one page of a paged key list": ("EXPERIMENTAL_view_access_key_list", ALICE_AT_50, _lie(
        "EXPERIMENTAL_view_access_key_list", _paged)),
    "an account view of another height": ("EXPERIMENTAL_view_account", ALICE_AT_50, _lie(
        "EXPERIMENTAL_view_account", _older)),
    "code of another hash": ("query", CODE, _lie("EXPERIMENTAL_view_code", _other_code)),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_an_answer_that_is_not_what_was_asked_is_refused_and_never_kept(
    case: str, upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    method, params, lie = CASES[case]
    direct = rpc(upstream.url, method, params)
    assert direct.status_code == 200 and "result" in direct.json()
    with serving("--store", tmp_path / "f.sqlite", "--upstream", proxy.url, log=tmp_path / "fork.log") as fork:
        proxy.rewrite = lie
        refused = rpc(fork.url, method, params)
        assert refused.json()["error"]["cause"]["name"] == "INTERNAL_ERROR", refused.text
        proxy.rewrite = None
        assert rpc(fork.url, method, params).content == direct.content


def test_a_block_of_another_height_is_refused(upstream: Served, proxy: UpstreamProxy, tmp_path: Path) -> None:
    """Asked for block 60, the upstream answers block 61: INTERNAL_ERROR, never block 61 as 60."""
    block_61 = rpc(upstream.url, "block", {"block_id": 61}).json()

    def lie(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        if request.get("method") == "block" and request.get("params") == {"block_id": 60}:
            return {**block_61, "id": request.get("id")}
        return answer

    with serving("--store", tmp_path / "f.sqlite", "--upstream", proxy.url, log=tmp_path / "fork.log") as fork:
        proxy.rewrite = lie
        refused = rpc(fork.url, "block", {"block_id": 60})
        assert refused.json()["error"]["cause"]["name"] == "INTERNAL_ERROR", refused.text[:300]
        proxy.rewrite = None
        assert rpc(fork.url, "block", {"block_id": 60}).json()["result"]["header"]["height"] == 60
