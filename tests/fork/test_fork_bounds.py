"""The fork's bounds on what its upstream sees, at values the settings accept but the usual
tests do not use: a request rate below one a second."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.fork.upstream_proxy import UpstreamProxy
from tests.support.serve_process import serving

pytestmark = [pytest.mark.live, pytest.mark.deep]


def test_an_upstream_rate_below_one_a_second_spaces_the_requests_out(proxy: UpstreamProxy, tmp_path: Path) -> None:
    """--upstream-rate 0.5: one request every 2 s, the first at once. The worker's chain check
    and its first miss are two requests: the miss answers after about 2 s."""
    flags = ("--upstream-rate", "0.5")
    with serving("--store", tmp_path / "f.sqlite", "--upstream", proxy.url, *flags, log=tmp_path / "fork.log") as fork:
        reply = httpx.post(fork.url, json={"jsonrpc": "2.0", "id": 1, "method": "block", "params": {"block_id": 5}},
                           timeout=30.0)  # fmt: skip
        assert reply.status_code == 200 and reply.json()["result"]["header"]["height"] == 5, reply.text
    arrivals = proxy.arrivals[-2:]  # the worker's: genesis_config, then block 5
    assert arrivals[1] - arrivals[0] >= 1.9
