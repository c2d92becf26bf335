"""Epoch records for imported blocks.

Every block's epoch needs a record to answer `EXPERIMENTAL_protocol_config`. The exact one
comes from a protocol config result read at a block of the epoch: its protocol version, its
epoch-level values, and the whole result served verbatim. Without one, the record is inferred
from what is known for sure:
- the first two epochs of a chain (ids: the zero hash, then the genesis block's hash) run the
  genesis protocol version;
- any later epoch runs at most the lowest `latest_protocol_version` its imported block headers
  carry (a producer cannot produce for a protocol newer than its binary); that bound is used,
  and it is exact once every producer has upgraded and the upgrade has taken effect;
- epoch-level values: none recorded, so the genesis config's values apply (what nearcore does
  for chains without bundled epoch configs; mainnet and testnet have such configs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nearrpc.ingest import jsonio
from nearrpc.nearcore.views import EPOCH_CONFIG_KEYS, ZERO_HASH
from nearrpc.store import StoredEpoch


def recorded_epoch(epoch_id: str, protocol_config: dict[str, Any]) -> StoredEpoch:
    """The exact epoch record from a protocol config result read at one of its blocks."""
    version = protocol_config.get("protocol_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ValueError(f"the protocol config has no integer protocol_version ({version!r})")
    overrides = {key: protocol_config[key] for key in EPOCH_CONFIG_KEYS if key in protocol_config}
    return StoredEpoch(
        epoch_id=epoch_id,
        protocol_version=version,
        config_json=jsonio.compact(overrides),
        protocol_config_json=jsonio.compact(protocol_config),
    )


@dataclass
class _Seen:
    first_height: int
    last_height: int
    min_latest_version: int


@dataclass(frozen=True, slots=True)
class InferredEpoch:
    epoch: StoredEpoch
    first_height: int
    last_height: int
    reason: str


class EpochTracker:
    """Collects what the imported block headers say about their epochs."""

    def __init__(self) -> None:
        self._seen: dict[str, _Seen] = {}
        self._second_epoch_ids: set[str] = set()

    def observe(self, header: dict[str, Any]) -> None:
        epoch_id, height = str(header["epoch_id"]), int(header["height"])
        version = int(header["latest_protocol_version"])
        seen = self._seen.get(epoch_id)
        if seen is None:
            self._seen[epoch_id] = _Seen(height, height, version)
        else:
            seen.first_height = min(seen.first_height, height)
            seen.last_height = max(seen.last_height, height)
            seen.min_latest_version = min(seen.min_latest_version, version)
        if epoch_id == ZERO_HASH and header.get("next_epoch_id") not in (None, ZERO_HASH):
            self._second_epoch_ids.add(str(header["next_epoch_id"]))

    def epoch_ids(self) -> list[str]:
        return list(self._seen)

    def infer(self, epoch_id: str, genesis_protocol_version: int, genesis_hash: str | None) -> InferredEpoch:
        """The best record for an epoch without a protocol config; `genesis_hash` is the
        genesis block's hash when it is known (the second epoch's id)."""
        seen = self._seen[epoch_id]
        if epoch_id in (ZERO_HASH, genesis_hash) or epoch_id in self._second_epoch_ids:
            version, reason = genesis_protocol_version, "one of the chain's first two epochs: the genesis version"
        else:
            version = seen.min_latest_version
            reason = "the lowest latest_protocol_version of its block headers (an upper bound)"
        epoch = StoredEpoch(epoch_id=epoch_id, protocol_version=version, config_json=b"{}")
        return InferredEpoch(epoch, seen.first_height, seen.last_height, reason)
