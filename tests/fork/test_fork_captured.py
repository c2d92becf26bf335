"""A fork of a stub node that serves real testnet answers (../shared/reference/captured/): the
real block passes the spec on the way in, the fork answers what the node answered, and a plain
server over the fork's store answers the same bytes with the node gone. Both backends."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.conform.captured_stub import BLOCK_FILE, captured_node
from tests.support.backends import BACKENDS
from tests.support.serve_process import serving

pytestmark = [pytest.mark.live, pytest.mark.deep]


def _requests(height: int, block_hash: str) -> list[dict[str, object]]:
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "genesis_config"},
        {"jsonrpc": "2.0", "id": 2, "method": "block", "params": {"block_id": height}},
        {"jsonrpc": "2.0", "id": 3, "method": "block", "params": {"block_id": block_hash}},
        {"jsonrpc": "2.0", "id": 4, "method": "block", "params": [height]},
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fork_of_real_testnet_answers(
    backend: str, reference: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    block = json.loads((reference / "captured" / BLOCK_FILE).read_text())["result"]
    height, block_hash = block["header"]["height"], block["header"]["hash"]
    asks = _requests(height, block_hash)
    postgres = request.getfixturevalue("postgres") if backend == "postgresql" else None
    store = tmp_path / "testnet.sqlite" if postgres is None else postgres.create_database()
    with captured_node(reference / "captured") as node:
        direct = [httpx.post(node, json=ask).json() for ask in asks]
        with serving("--store", store, "--upstream", node + "/", log=tmp_path / "fork.log") as fork:
            assert "client_config" in fork.log.read_text()  # the stub has none: said at start
            through = [httpx.post(fork.url, json=ask) for ask in asks]
            assert [reply.json() for reply in through] == direct  # the node's answers, member order too
            assert [list(reply.json()) for reply in through] == [list(answer) for answer in direct]
            config = {"jsonrpc": "2.0", "id": 5, "method": "EXPERIMENTAL_protocol_config",
                      "params": {"block_id": height}}  # fmt: skip
            unanswerable = httpx.post(fork.url, json=config)
            assert unanswerable.json()["error"]["cause"]["name"] == "INTERNAL_ERROR"  # the stub has no such method
    with serving("--store", store, log=tmp_path / "replay.log") as replay:
        assert [httpx.post(replay.url, json=ask).content for ask in asks] == [reply.content for reply in through]
