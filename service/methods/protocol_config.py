"""Compose the `EXPERIMENTAL_protocol_config` result of one epoch, as nearcore does.

Start from the genesis config, replace what the epoch decides (its protocol version and the
epoch config values), add the runtime config of that protocol version, and emit the fields in
nearcore's order. Genesis-only fields (validators, total supply, seat counts, ...) are left out.
"""

from __future__ import annotations

from typing import Any, Final

from nearrpc.nearcore.genesis_fields import GENESIS_DEFAULTS
from nearrpc.runtime_params import RuntimeParamStore

# The result's fields in nearcore's order; `runtime_config` is computed, the rest come from
# the epoch when it sets them and from the genesis config otherwise.
FIELD_ORDER: Final = (
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
    "runtime_config",
    "transaction_validity_period",
    "protocol_reward_rate",
    "max_inflation_rate",
    "num_blocks_per_year",
    "protocol_treasury_account",
    "fishermen_threshold",
    "minimum_stake_divisor",
    "max_kickout_stake_perc",
    "minimum_stake_ratio",
    "shuffle_shard_assignment_for_chunk_producers",
    "minimum_validators_per_shard",
    "shard_layout",
)


def compose_protocol_config(
    genesis: dict[str, Any],
    epoch_protocol_version: int,
    epoch_config: dict[str, Any],
    runtime_params: RuntimeParamStore,
) -> dict[str, Any]:
    sources: dict[str, Any] = {**GENESIS_DEFAULTS, **genesis, **epoch_config}
    sources["protocol_version"] = epoch_protocol_version
    sources["runtime_config"] = runtime_params.spec_view(epoch_protocol_version, str(genesis["chain_id"]))
    return {field: sources[field] for field in FIELD_ORDER}
