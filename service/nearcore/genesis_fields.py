"""GenesisConfig facts shared by everything that writes or reads a genesis config (interface
1.2.14): the fields in nearcore's order, and the values nearcore gives the fields a genesis file
may leave out."""

from __future__ import annotations

from typing import Any, Final

# Every GenesisConfig field in nearcore's struct order, which is the order a node serializes
# the `genesis_config` result in. Fields outside this list (legacy ones such as
# `avg_hidden_validator_seats_per_shard`) are not part of the interface.
GENESIS_FIELD_ORDER: Final[tuple[str, ...]] = (
    "protocol_version",
    "genesis_time",
    "chain_id",
    "genesis_height",
    "num_block_producer_seats",
    "dynamic_resharding",
    "protocol_upgrade_stake_threshold",
    "epoch_length",
    "gas_limit",
    "min_gas_price",
    "max_gas_price",
    "block_producer_kickout_threshold",
    "chunk_producer_kickout_threshold",
    "chunk_validator_only_kickout_threshold",
    "target_validator_mandates_per_shard",
    "online_min_threshold",
    "online_max_threshold",
    "gas_price_adjustment_rate",
    "validators",
    "transaction_validity_period",
    "protocol_reward_rate",
    "max_inflation_rate",
    "total_supply",
    "num_blocks_per_year",
    "protocol_treasury_account",
    "fishermen_threshold",
    "minimum_stake_divisor",
    "shard_layout",
    "minimum_validators_per_shard",
    "max_kickout_stake_perc",
    "minimum_stake_ratio",
    "shuffle_shard_assignment_for_chunk_producers",
    "use_production_config",
    "num_chunk_producer_seats",
    "num_chunk_validator_seats",
    "chunk_producer_assignment_changes_limit",
)

GENESIS_DEFAULTS: Final[dict[str, Any]] = {
    "chunk_producer_assignment_changes_limit": 5,
    "chunk_validator_only_kickout_threshold": 80,
    "max_kickout_stake_perc": 100,
    "minimum_stake_divisor": 10,
    "minimum_stake_ratio": [1, 6250],
    "minimum_validators_per_shard": 1,
    "num_chunk_producer_seats": 100,
    "num_chunk_validator_seats": 300,
    "online_max_threshold": [99, 100],
    "online_min_threshold": [9, 10],
    "protocol_upgrade_stake_threshold": [4, 5],
    "shard_layout": {
        "V2": {
            "boundary_accounts": [],
            "id_to_index_map": {"0": 0},
            "index_to_id_map": {"0": 0},
            "shard_ids": [0],
            "shards_parent_map": None,
            "shards_split_map": None,
            "version": 0,
        }
    },
    "shuffle_shard_assignment_for_chunk_producers": False,
    "target_validator_mandates_per_shard": 68,
    "use_production_config": False,
}
