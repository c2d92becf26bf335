"""Every object of the sample chain validates against the spec, with nearcore's field sets
and key order."""

from __future__ import annotations

from typing import Any

import orjson

from nearrpc.nearcore.views import EPOCH_CONFIG_KEYS
from nearrpc.sample import SampleChain
from nearrpc.sample.scenario import GENESIS_PROTOCOL_VERSION
from nearrpc.spec import spec_document, validate_component
from nearrpc.store import ChainReader
from tests.support.sample_facts import SampleFacts

# nearcore's GenesisConfig declaration order.
GENESIS_ORDER = [
    "protocol_version", "genesis_time", "chain_id", "genesis_height", "num_block_producer_seats",
    "dynamic_resharding", "protocol_upgrade_stake_threshold", "epoch_length", "gas_limit",
    "min_gas_price", "max_gas_price", "block_producer_kickout_threshold",
    "chunk_producer_kickout_threshold", "chunk_validator_only_kickout_threshold",
    "target_validator_mandates_per_shard", "online_min_threshold", "online_max_threshold",
    "gas_price_adjustment_rate", "validators", "transaction_validity_period",
    "protocol_reward_rate", "max_inflation_rate", "total_supply", "num_blocks_per_year",
    "protocol_treasury_account", "fishermen_threshold", "minimum_stake_divisor", "shard_layout",
    "minimum_validators_per_shard", "max_kickout_stake_perc", "minimum_stake_ratio",
    "shuffle_shard_assignment_for_chunk_producers", "use_production_config",
    "num_chunk_producer_seats", "num_chunk_validator_seats",
    "chunk_producer_assignment_changes_limit",
]  # fmt: skip

# nearcore's BlockHeaderView / ChunkHeaderView order of the members the sample emits.
HEADER_ORDER = [
    "height", "prev_height", "epoch_id", "next_epoch_id", "hash", "prev_hash", "prev_state_root",
    "block_body_hash", "chunk_receipts_root", "chunk_headers_root", "chunk_tx_root",
    "outcome_root", "chunks_included", "challenges_root", "timestamp", "timestamp_nanosec",
    "random_value", "validator_proposals", "chunk_mask", "gas_price", "block_ordinal",
    "rent_paid", "validator_reward", "total_supply", "challenges_result", "last_final_block",
    "last_ds_final_block", "next_bp_hash", "block_merkle_root", "epoch_sync_data_hash",
    "approvals", "signature", "latest_protocol_version", "chunk_endorsements", "shard_split",
]  # fmt: skip
CHUNK_ORDER = [
    "chunk_hash", "prev_block_hash", "outcome_root", "prev_state_root", "encoded_merkle_root",
    "encoded_length", "height_created", "height_included", "shard_id", "gas_used", "gas_limit",
    "rent_paid", "validator_reward", "balance_burnt", "outgoing_receipts_root", "tx_root",
    "validator_proposals", "congestion_info", "bandwidth_requests", "signature",
]  # fmt: skip


def schema(name: str) -> dict[str, Any]:
    value: dict[str, Any] = spec_document()["components"]["schemas"][name]
    return value


def test_genesis_config(chain: SampleChain, facts: SampleFacts) -> None:
    genesis = orjson.loads(chain.genesis_config_json)
    validate_component("GenesisConfig", genesis)
    assert list(genesis) == GENESIS_ORDER
    assert set(genesis) == set(schema("GenesisConfig")["properties"])
    assert genesis["protocol_version"] == GENESIS_PROTOCOL_VERSION
    assert genesis["genesis_time"].endswith("Z")
    assert list(genesis["shard_layout"]) == ["V2"]
    layout = genesis["shard_layout"]["V2"]
    assert layout["shards_parent_map"] is None and layout["shards_split_map"] is None
    assert layout["id_to_index_map"] == {"0": 0, "1": 1, "2": 2, "3": 3}
    assert len(genesis["validators"]) >= 4
    for validator in genesis["validators"]:
        assert list(validator) == ["account_id", "public_key", "amount"]
        assert validator["public_key"].startswith("ed25519:")
    for pair in ("gas_price_adjustment_rate", "protocol_reward_rate", "max_inflation_rate"):
        assert len(genesis[pair]) == 2
    assert int(genesis["total_supply"]) == facts.total_supply_at_genesis


def test_client_config(chain: SampleChain) -> None:
    client = orjson.loads(chain.client_config_json)
    validate_component("RpcClientConfigResponse", client)
    # The 1.2.14 field set: exactly the spec's properties.
    assert set(client) == set(schema("RpcClientConfigResponse")["properties"])
    assert "log_summary_style" not in client and "protocol_version_check" not in client
    assert client["sync_check_period"] == [10, 0]
    assert client["gc"]["gc_step_period"] == {"secs": 0, "nanos": 500_000_000}
    assert client["expected_shutdown"] == "null"
    assert orjson.loads(client["chunk_wait_mult"]) == [1, 3]
    assert isinstance(orjson.loads(client["resharding_config"]), dict)
    assert list(client["version"]) == ["version", "build", "commit", "rustc_version"]


def test_blocks(chain: SampleChain) -> None:
    for block in chain.blocks:
        view = orjson.loads(block.view_json)
        validate_component("RpcBlockResponse", view)
        assert list(view) == ["author", "header", "chunks"]
        header = view["header"]
        # Members nearcore omits when unset are absent, not null.
        assert list(header) == HEADER_ORDER
        assert "prev_last_certified_block_epoch_id" not in header
        assert "spice_chunk_endorsement_stats" not in header
        assert header["challenges_root"] == "11111111111111111111111111111111"
        assert header["challenges_result"] == []
        assert header["rent_paid"] == header["validator_reward"] == "0"
        for chunk in view["chunks"]:
            assert list(chunk) == CHUNK_ORDER
            assert "proposed_split" not in chunk
            assert list(chunk["congestion_info"]) == [
                "delayed_receipts_gas", "buffered_receipts_gas", "receipt_bytes", "allowed_shard",
            ]  # fmt: skip


def test_account_views_with_their_block(chain: SampleChain, reader: ChainReader) -> None:
    for row in chain.account_states:
        if row.view_json is None:
            continue
        block = reader.block_by_height(row.height)
        assert block is not None, "account states are recorded at block heights"
        view = orjson.loads(row.view_json)
        response = {**view, "block_height": block.height, "block_hash": block.hash}
        validate_component("RpcViewAccountResponse", response)
        assert list(view)[:5] == ["amount", "locked", "code_hash", "storage_usage", "storage_paid_at"]
        assert "state" not in view and "bootstrap_nonce" not in view  # initialized accounts


def test_epoch_configs(chain: SampleChain) -> None:
    genesis = orjson.loads(chain.genesis_config_json)
    for epoch in chain.epochs:
        config = orjson.loads(epoch.config_json)
        assert list(config) == list(EPOCH_CONFIG_KEYS)
        validate_component("RpcProtocolConfigResponse", config)
        assert config == {key: genesis[key] for key in EPOCH_CONFIG_KEYS}
