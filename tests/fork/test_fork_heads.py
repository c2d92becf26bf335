"""A live fork's heads, against an upstream whose head the test moves (the proxy answers
`finality: optimistic` with a block the test picks): each request names the upstream's head of
that moment, even when nothing new is written; while the upstream is down the store's head stands
in without asking it at every request; and an upstream that turns out to serve another chain
after a start without it records nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from nearrpc.store import open_store
from tests.fork.upstream_proxy import UpstreamProxy, rpc
from tests.support.serve_process import Served, serving

pytestmark = [pytest.mark.live, pytest.mark.deep]

FAULT_FLAGS = ("--miss-timeout", "2", "--upstream-retries", "1", "--upstream-timeout", "1")
OPTIMISTIC = {"finality": "optimistic"}


def height_of(reply: httpx.Response) -> int:
    height: int = reply.json()["result"]["header"]["height"]
    return height


class MovingHead:
    """The proxy's rewrite: the upstream's optimistic block is the block at `self.height`."""

    def __init__(self, upstream: Served, heights: tuple[int, ...]) -> None:
        self.blocks = {height: rpc(upstream.url, "block", {"block_id": height}).json() for height in heights}
        self.height = heights[0]

    def __call__(self, request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        if request.get("method") == "block" and request.get("params") == OPTIMISTIC:
            return {**self.blocks[self.height], "id": request.get("id")}
        return answer


def test_the_head_follows_the_upstream_to_a_block_already_kept(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """The head moves from 100 to 105, which the fork kept earlier: nothing is written, and yet
    `optimistic` names 105 (no answer or resolved reference kept from the head of before)."""
    head = MovingHead(upstream, (100, 105))
    proxy.rewrite = head
    with serving("--store", tmp_path / "f.sqlite", "--upstream", proxy.url, log=tmp_path / "fork.log") as fork:
        assert height_of(rpc(fork.url, "block", {"block_id": 105})) == 105  # kept now
        assert height_of(rpc(fork.url, "block", OPTIMISTIC)) == 100  # the head is written
        assert height_of(rpc(fork.url, "block", OPTIMISTIC)) == 100  # asked again: nothing written
        head.height = 105
        assert height_of(rpc(fork.url, "block", OPTIMISTIC)) == 105


def test_while_the_upstream_gives_no_head_the_stores_stands_in_without_asking_each_time(
    proxy: UpstreamProxy, tmp_path: Path
) -> None:
    with serving("--store", tmp_path / "f.sqlite", "--upstream", proxy.url, *FAULT_FLAGS,
                 log=tmp_path / "fork.log") as fork:  # fmt: skip
        upstream_head = height_of(rpc(fork.url, "block", OPTIMISTIC))
        proxy.down = True
        assert height_of(rpc(fork.url, "block", OPTIMISTIC)) == upstream_head  # the store's head, kept above
        asked = proxy.asked("block", OPTIMISTIC)
        for _ in range(3):
            assert height_of(rpc(fork.url, "block", OPTIMISTIC)) == upstream_head
        assert proxy.asked("block", OPTIMISTIC) == asked  # not asked again for a while
        warnings = [line for line in fork.log_lines() if "gives no head" in line]
        assert len(warnings) == 1, warnings


def _other_chain(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    if request.get("method") == "genesis_config":
        answer["result"]["chain_id"] = "othernet"
    return answer


def test_an_upstream_of_another_chain_after_a_start_without_it_records_nothing(
    proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """The upstream is down when the fork starts over its store (a warning, the store served);
    it comes back serving another chain: a miss answers INTERNAL_ERROR and nothing is kept."""
    store = tmp_path / "f.sqlite"
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "first.log") as fork:
        kept = rpc(fork.url, "block", {"block_id": 10}).content
    proxy.down = True
    with serving("--store", store, "--upstream", proxy.url, *FAULT_FLAGS, log=tmp_path / "fork.log") as fork:
        proxy.down = False
        proxy.rewrite = _other_chain
        missed = rpc(fork.url, "block", {"block_id": 20})
        assert missed.json()["error"]["cause"]["name"] == "INTERNAL_ERROR", missed.text
        assert "othernet" in missed.json()["error"]["data"]
        assert rpc(fork.url, "block", {"block_id": 10}).content == kept  # what is stored is served
    reader = open_store(store, "read")
    try:
        assert reader.block_by_height(20) is None
    finally:
        reader.close()
