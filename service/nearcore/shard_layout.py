"""Which shard holds an account, by nearcore's ShardLayout (core/primitives shard_layout.rs,
`account_id_to_shard_id`): V0 hashes the id, V1 and V2 place it among sorted boundary accounts."""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Mapping
from typing import Any


def account_shard_id(layout: Mapping[str, Any], account_id: str) -> int:
    """The shard id of `account_id` under `layout` (a ShardLayout as the genesis config writes it)."""
    if "V0" in layout:
        digest = hashlib.sha256(account_id.encode()).digest()
        return int.from_bytes(digest[:8], "little") % int(layout["V0"]["num_shards"])
    version = layout.get("V2") or layout["V1"]
    index = bisect.bisect_right(version["boundary_accounts"], account_id)
    shard_ids = version.get("shard_ids")
    return int(shard_ids[index]) if shard_ids else index


def first_shard_id(layout: Mapping[str, Any]) -> int:
    """The shard nearcore asks for what belongs to no account (global contract code)."""
    version = layout.get("V2")
    return int(version["shard_ids"][0]) if version and version.get("shard_ids") else 0
