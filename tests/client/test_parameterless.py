"""genesis_config and client_config through the published client."""

from __future__ import annotations

import orjson
import pytest
from near_jsonrpc_client import NearClientSync

from nearrpc.sample import sample_chain
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.live


def test_genesis_config(near: NearClientSync) -> None:
    facts = sample_facts()
    stored = orjson.loads(sample_chain().genesis_config_json)  # the bytes the store holds
    genesis = near.genesis_config()
    assert genesis.chain_id == facts.chain_id
    assert genesis.protocol_version == facts.genesis_protocol_version
    assert genesis.genesis_height == facts.genesis_height
    assert genesis.epoch_length == facts.epoch_length
    assert int(genesis.total_supply.root) == facts.total_supply_at_genesis
    assert genesis.protocol_treasury_account.root == facts.treasury_account
    assert [v.account_id.root for v in genesis.validators] == list(facts.validators)
    assert [v.amount.root for v in genesis.validators] == [v["amount"] for v in stored["validators"]]
    layout = genesis.shard_layout.model_dump(mode="json", by_alias=True)["V2"]
    assert layout["boundary_accounts"] == list(facts.boundary_accounts)
    assert layout["shard_ids"] == list(facts.shard_ids)


def test_client_config(near: NearClientSync) -> None:
    stored = orjson.loads(sample_chain().client_config_json)
    config = near.client_config()
    assert config.chain_id == sample_facts().chain_id
    assert config.version is not None and config.version.version == stored["version"]["version"]
    assert config.archive == stored["archive"]
