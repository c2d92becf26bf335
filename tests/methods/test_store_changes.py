"""A running server answers from what an import commits, without a restart: the store's change
counters tell it which kept answers and resolved references to drop."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import orjson
import pytest

from nearrpc.sample import SampleChain, sample_chain
from nearrpc.store import open_store
from tests.support.cli import nearrpc
from tests.support.live_server import LiveServer, running_server
from tests.support.rpc import call, checked

pytestmark = pytest.mark.live

CUT = 60  # the store starts with the blocks and states up to this height


def _write_prefix(path: Path, chain: SampleChain) -> None:
    with open_store(path, "write") as writer, writer.batch() as batch:
        batch.put_genesis_config(chain.genesis_config_json)
        batch.put_client_config(chain.client_config_json)
        for epoch in chain.epochs:
            batch.put_epoch(epoch)
        for block in chain.blocks:
            if block.height <= CUT:
                batch.put_block(block)
        for row in chain.account_states:
            if row.height <= CUT:
                batch.put_account_state(row.account_id, row.height, row.view_json)


@pytest.fixture()
def served_prefix(tmp_path: Path) -> Iterator[tuple[LiveServer, httpx.Client]]:
    store = tmp_path / "growing.sqlite"
    _write_prefix(store, sample_chain())
    with running_server(store, tmp_path / "server.log") as live, httpx.Client(base_url=live.url) as http:
        yield live, http


def _head(http: httpx.Client) -> int:
    height: int = checked(call(http, "block", {"finality": "optimistic"}), "block").result["header"]["height"]
    return height


def test_an_import_into_the_served_store_is_answered_without_a_restart(
    served_prefix: tuple[LiveServer, httpx.Client], tmp_path: Path
) -> None:
    live, http = served_prefix
    chain = sample_chain()
    later = [block for block in chain.blocks if block.height > CUT]
    # answers the server keeps: the head, a missing block, an account at the head
    assert _head(http) == CUT
    missing = call(http, "block", {"block_id": later[-1].height})
    assert missing.error["cause"]["name"] == "UNKNOWN_BLOCK"
    account = next(row for row in chain.account_states if row.height > CUT and row.view_json is not None)
    before = call(http, "EXPERIMENTAL_view_account", {"account_id": account.account_id, "finality": "optimistic"})

    lines = b"\n".join(orjson.dumps({"jsonrpc": "2.0", "result": orjson.loads(b.view_json), "id": 1}) for b in later)
    (tmp_path / "later.jsonl").write_bytes(lines + b"\n")
    done = nearrpc("import", "blocks", tmp_path / "later.jsonl", "--store", live.store)
    assert done.returncode == 0, done.stderr

    assert _head(http) == later[-1].height
    found = checked(call(http, "block", {"block_id": later[-1].height}), "block")
    assert found.status == 200 and found.result["header"]["hash"] == later[-1].hash
    # the blocks moved the head, so the account answer is read at the new head...
    moved = checked(
        call(http, "EXPERIMENTAL_view_account", {"account_id": account.account_id, "finality": "optimistic"}),
        "EXPERIMENTAL_view_account",
    )
    assert moved.result["block_height"] == later[-1].height
    assert moved.result["amount"] == before.result["amount"]  # ...but its later states are not stored yet

    with open_store(live.store, "write") as writer, writer.batch() as batch:
        for row in chain.account_states:
            if row.height > CUT:
                batch.put_account_state(row.account_id, row.height, row.view_json)
    expected = next(
        row.view_json
        for row in reversed(chain.account_states)
        if row.account_id == account.account_id and row.height <= later[-1].height
    )
    assert expected is not None
    now = call(http, "EXPERIMENTAL_view_account", {"account_id": account.account_id, "finality": "optimistic"})
    assert now.result["amount"] == orjson.loads(expected)["amount"] != before.result["amount"]


def test_a_rewritten_epoch_is_answered_anew(served_prefix: tuple[LiveServer, httpx.Client]) -> None:
    # the protocol config of an epoch is composed once and kept; an import that records the
    # epoch's config as a node answered it must replace what was kept
    live, http = served_prefix
    chain = sample_chain()
    block = next(block for block in chain.blocks if block.height == 30)
    epoch = next(epoch for epoch in chain.epochs if epoch.epoch_id == block.epoch_id)
    method = "EXPERIMENTAL_protocol_config"
    composed = checked(call(http, method, {"block_id": 30}), method).result
    by_hash = checked(call(http, method, {"block_id": block.hash}), method).result
    assert by_hash == composed
    # a value of the runtime config (an epoch's own values must agree with its record)
    recorded = {**composed, "runtime_config": {**composed["runtime_config"],
                                               "storage_amount_per_byte": "1"}}  # fmt: skip
    assert recorded != composed
    with open_store(live.store, "write") as writer, writer.batch() as batch:
        batch.put_epoch(replace(epoch, protocol_config_json=orjson.dumps(recorded)))
    for params in ({"block_id": 30}, {"block_id": block.hash}):
        assert checked(call(http, method, params), method).result == recorded, params
