"""A cassette that holds a block but not its epoch (the fork keeps an epoch only where a request
needed it) answers `EXPERIMENTAL_protocol_config` there with UNKNOWN_BLOCK, naming what it lacks,
not with a 500 (issue 33, item 4); a block whose epoch it holds answers as the upstream did."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.fork.upstream_proxy import rpc
from tests.support.sample_facts import sample_facts
from tests.support.serve_process import Served, serving

pytestmark = [pytest.mark.live, pytest.mark.deep]


def test_a_cassette_without_the_epoch_of_a_block_answers_unknown_block(upstream: Served, tmp_path: Path) -> None:
    facts = sample_facts()
    pinned = max(h for h in facts.block_heights if h < facts.final_height)
    cassette = tmp_path / "cassette.sqlite"
    with serving("--store", cassette, "--upstream", upstream.url, "--fork-height", str(pinned),
                 log=tmp_path / "fork.log") as fork:  # fmt: skip
        earliest = rpc(fork.url, "block", {"sync_checkpoint": "earliest_available"}).json()["result"]["header"]
        final = rpc(fork.url, "block", {"finality": "final"}).json()["result"]["header"]
        kept = rpc(fork.url, "EXPERIMENTAL_protocol_config", {"block_id": earliest["hash"]})
        assert kept.status_code == 200 and "result" in kept.json()
    assert earliest["epoch_id"] != final["epoch_id"]  # the genesis epoch, asked for; final's, never

    with serving("--store", cassette, log=tmp_path / "replay.log") as replay:
        for params in ({"finality": "final"}, {"block_id": final["hash"]}):
            answer = rpc(replay.url, "EXPERIMENTAL_protocol_config", params)
            error = answer.json()["error"]
            assert (answer.status_code, error["cause"]["name"], error["cause"]["info"]) == (200, "UNKNOWN_BLOCK", {})
            assert error["data"] == (f"Block Not Found: EPOCH {final['epoch_id']} of block {final['hash']}, "
                                     "which this store does not hold")  # fmt: skip
        for params in ({"sync_checkpoint": "earliest_available"}, {"sync_checkpoint": "genesis"}):
            answer = rpc(replay.url, "EXPERIMENTAL_protocol_config", params)
            assert answer.status_code == 200, answer.text
            assert answer.content == kept.content
        assert orjson.loads(rpc(replay.url, "block", {"finality": "final"}).content)["result"]["header"] == final
