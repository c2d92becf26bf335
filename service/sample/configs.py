"""The sample chain's genesis config, node client config and per-epoch config values.

Key order follows nearcore's struct declaration order, because a node serializes them in
that order and we serve stored bytes as they are.
"""

from __future__ import annotations

from typing import Any

import orjson

from nearrpc.nearcore.views import EPOCH_CONFIG_KEYS
from nearrpc.sample import crypto, scenario


def shard_layout() -> dict[str, Any]:
    """ShardLayout V2 with four shards and no parent/split maps (a layout the chain started
    with, not one produced by resharding)."""
    ids = list(scenario.SHARD_IDS)
    return {
        "V2": {
            "boundary_accounts": list(scenario.BOUNDARY_ACCOUNTS),
            "shard_ids": ids,
            "id_to_index_map": {str(shard_id): index for index, shard_id in enumerate(ids)},
            "index_to_id_map": {str(index): shard_id for index, shard_id in enumerate(ids)},
            "shards_split_map": None,
            "shards_parent_map": None,
            "version": scenario.SHARD_LAYOUT_VERSION,
        }
    }


def shard_index(account_id: str) -> int:
    """The index of the shard holding `account_id`: how many boundary accounts sort at or
    before it (byte-wise string order, as nearcore compares account ids)."""
    return sum(1 for boundary in scenario.BOUNDARY_ACCOUNTS if boundary <= account_id)


def genesis_config(validators: list[dict[str, str]], total_supply: int) -> dict[str, Any]:
    """All GenesisConfig fields in nearcore's order; `validators` are AccountInfo objects."""
    return {
        "protocol_version": scenario.GENESIS_PROTOCOL_VERSION,
        "genesis_time": scenario.GENESIS_TIME,
        "chain_id": scenario.CHAIN_ID,
        "genesis_height": scenario.GENESIS_HEIGHT,
        "num_block_producer_seats": 100,
        "dynamic_resharding": False,
        "protocol_upgrade_stake_threshold": [4, 5],
        "epoch_length": scenario.EPOCH_LENGTH,
        "gas_limit": scenario.GAS_LIMIT,
        "min_gas_price": str(scenario.MIN_GAS_PRICE),
        "max_gas_price": str(scenario.MAX_GAS_PRICE),
        "block_producer_kickout_threshold": 90,
        "chunk_producer_kickout_threshold": 90,
        "chunk_validator_only_kickout_threshold": 80,
        "target_validator_mandates_per_shard": 68,
        "online_min_threshold": [9, 10],
        "online_max_threshold": [99, 100],
        "gas_price_adjustment_rate": list(scenario.GAS_PRICE_ADJUSTMENT_RATE),
        "validators": validators,
        "transaction_validity_period": 100,
        "protocol_reward_rate": list(scenario.PROTOCOL_REWARD_RATE),
        "max_inflation_rate": list(scenario.MAX_INFLATION_RATE),
        "total_supply": str(total_supply),
        "num_blocks_per_year": scenario.NUM_BLOCKS_PER_YEAR,
        "protocol_treasury_account": scenario.TREASURY,
        "fishermen_threshold": str(10 * scenario.NEAR),
        "minimum_stake_divisor": 10,
        "shard_layout": shard_layout(),
        "minimum_validators_per_shard": 1,
        "max_kickout_stake_perc": 100,
        "minimum_stake_ratio": [1, 6250],
        "shuffle_shard_assignment_for_chunk_producers": False,
        "use_production_config": False,
        "num_chunk_producer_seats": 100,
        "num_chunk_validator_seats": 300,
        "chunk_producer_assignment_changes_limit": 5,
    }


def epoch_config(genesis: dict[str, Any]) -> dict[str, Any]:
    """The epoch-level values of an epoch. For a chain id without bundled epoch configs
    nearcore builds every epoch's config from the genesis config, so they equal genesis."""
    return {key: genesis[key] for key in EPOCH_CONFIG_KEYS}


def _duration(secs: int, nanos: int = 0) -> list[int]:
    # Plain Duration fields: a [seconds, nanoseconds] pair.
    return [secs, nanos]


def _nested_duration(secs: int, nanos: int = 0) -> dict[str, int]:
    # Durations inside nested config structs: {"secs", "nanos"}.
    return {"secs": secs, "nanos": nanos}


def _mutable(value: Any) -> str:
    # MutableConfigValue fields: a string holding the compact JSON of the value.
    return orjson.dumps(value).decode()


def client_config() -> dict[str, Any]:
    """The client config of an archival RPC node of the sample chain that tracks all shards.

    The field set is the 1.2.14 one (no log_summary_style, no protocol_version_check).
    """
    resharding = {
        "batch_size": 500_000,
        "batch_delay": _nested_duration(0, 5_000_000),
        "retry_delay": _nested_duration(10),
        "initial_delay": _nested_duration(0),
        "max_poll_time": _nested_duration(7200),
        "catch_up_blocks": 20,
    }
    return {
        "version": {
            "version": "2.11.0",
            "build": "2.11.0",
            "commit": crypto.digest("sample-build").hex()[:40],
            "rustc_version": "1.86.0",
        },
        "chain_id": scenario.CHAIN_ID,
        "rpc_addr": "0.0.0.0:3030",
        "expected_shutdown": _mutable(None),
        "block_production_tracking_delay": _mutable(_duration(0, 100_000_000)),
        "min_block_production_delay": _mutable(_duration(0, 600_000_000)),
        "max_block_production_delay": _mutable(_duration(2)),
        "max_block_wait_delay": _mutable(_duration(6)),
        "chunk_wait_mult": _mutable([1, 3]),
        "skip_sync_wait": False,
        "sync_check_period": _duration(10),
        "sync_step_period": _duration(0, 10_000_000),
        "sync_height_threshold": 1,
        "sync_max_block_requests": 10,
        "header_sync_initial_timeout": _duration(10),
        "header_sync_progress_timeout": _duration(2),
        "header_sync_stall_ban_timeout": _duration(120),
        "header_sync_expected_height_per_second": 10,
        "state_sync_external_timeout": _duration(60),
        "state_sync_p2p_timeout": _duration(10),
        "state_sync_retry_backoff": _duration(1),
        "state_sync_external_backoff": _duration(60),
        "min_num_peers": 3,
        "log_summary_period": _duration(10),
        "produce_empty_blocks": True,
        "epoch_length": scenario.EPOCH_LENGTH,
        "num_block_producer_seats": 100,
        "ttl_account_id_router": _duration(3600),
        "catchup_step_period": _duration(0, 100_000_000),
        "chunk_request_retry_period": _duration(0, 400_000_000),
        "doomslug_step_period": _mutable(_duration(0, 10_000_000)),
        "block_header_fetch_horizon": 50,
        "gc": {
            "gc_blocks_limit": 2,
            "gc_fork_clean_step": 100,
            "gc_num_epochs_to_keep": 5,
            "gc_step_period": _nested_duration(0, 500_000_000),
        },
        "tracked_shards_config": "AllShards",
        "archive": True,
        "save_trie_changes": True,
        "save_tx_outcomes": True,
        "save_state_changes": True,
        "view_client_threads": 4,
        "chunk_validation_threads": 4,
        "state_request_throttle_period": _duration(30),
        "state_requests_per_throttle_period": 30,
        "state_request_server_threads": 1,
        "trie_viewer_state_size_limit": 50_000,
        "max_gas_burnt_view": None,
        "enable_statistics_export": True,
        "client_background_migration_threads": 8,
        "state_sync": {
            "sync": "Peers",
            "concurrency": {
                "apply": 4,
                "apply_during_catchup": 1,
                "peer_downloads": 5,
                "per_shard": 1,
            },
            "parts_compression_lvl": 1,
        },
        "epoch_sync": {
            "epoch_sync_horizon_num_epochs": 2,
            "timeout_for_epoch_sync": _nested_duration(60),
        },
        "transaction_pool_size_limit": 100_000_000,
        "enable_multiline_logging": False,
        "resharding_config": _mutable(resharding),
        "tx_routing_height_horizon": 4,
        "produce_chunk_add_transactions_time_limit": _mutable(_duration(0, 200_000_000)),
        "chunk_distribution_network": None,
        "orphan_state_witness_pool_size": 25,
        "orphan_state_witness_max_size": 40_000_000,
        "save_latest_witnesses": False,
        "save_invalid_witnesses": False,
        "transaction_request_handler_threads": 4,
        "chunks_cache_height_horizon": 128,
        "cloud_archival_writer": None,
        "save_untracked_partial_chunks_parts": False,
        "disable_tx_routing": False,
        "enable_early_prepare_transactions": False,
        "save_receipt_to_tx": True,
        "transaction_pool_strict_nonce_ttl_blocks": 64,
        "receipt_to_tx_max_hint_window": 1000,
        "receipt_to_tx_max_hop_distance": 100,
        "receipt_to_tx_max_outcomes_per_request": 1000,
    }
