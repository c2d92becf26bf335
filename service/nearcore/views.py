"""Shapes of nearcore's views that readers and writers both rely on."""

from __future__ import annotations

from typing import Final

# The all-zero 32-byte hash in base58: the epoch id of the first epoch, the genesis block's
# parent and the code hash of accounts without a local contract.
ZERO_HASH: Final = "11111111111111111111111111111111"

# An account view as `EXPERIMENTAL_view_account` answers it ends with the block it was read at;
# stores keep the view without these members and the handler appends them.
ACCOUNT_VIEW_BLOCK_MEMBERS: Final = ("block_height", "block_hash")

# The protocol config keys an epoch decides (nearcore's EpochConfig), in the protocol config's
# field order; every other key comes from the genesis config or the runtime config.
EPOCH_CONFIG_KEYS: Final[tuple[str, ...]] = (
    "num_block_producer_seats",
    "protocol_upgrade_stake_threshold",
    "epoch_length",
    "block_producer_kickout_threshold",
    "chunk_producer_kickout_threshold",
    "chunk_validator_only_kickout_threshold",
    "target_validator_mandates_per_shard",
    "online_min_threshold",
    "online_max_threshold",
    "max_inflation_rate",
    "fishermen_threshold",
    "minimum_stake_divisor",
    "max_kickout_stake_perc",
    "minimum_stake_ratio",
    "shuffle_shard_assignment_for_chunk_producers",
    "minimum_validators_per_shard",
    "shard_layout",
)


def account_view_at(view_json: bytes, height: int, block_hash: str) -> bytes:
    """A stored account view with the block it is answered for appended, as nearcore ends it."""
    suffix = b',"block_height":%d,"block_hash":"%s"}' % (height, block_hash.encode())
    return view_json.rstrip()[:-1] + suffix
