"""The `validators` result (EpochValidatorInfo) of a sample epoch, read off its block headers.

Every validator produces blocks and chunks of every shard in turn: the block of height h is
due from validator h mod n and the chunk of shard s from validator (h + s) mod n, so a skipped
height is a block its producer owed and a chunk-mask gap a chunk its producer owed; a block's
`chunk_endorsements` bitmap says which validators endorsed a produced chunk. The genesis block
is nobody's due. Sample simplifications: a validator's stake in an epoch is its locked balance
when the epoch opened (the epoch's reward included), the next epoch's is its locked balance at
the block the view counts to; nobody is kicked out or slashed; `epoch_height` counts from 1 for
the genesis epoch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def epoch_validator_info(
    *,
    validators: Sequence[str],
    keys: Mapping[str, str],
    shard_ids: Sequence[int],
    epoch_index: int,
    first_height: int,
    genesis_height: int,
    headers: Sequence[Mapping[str, Any]],
    stakes: Mapping[str, int],
    next_stakes: Mapping[str, int],
) -> dict[str, Any]:
    """`headers`: the epoch's blocks up to the one the view counts to, ascending."""
    count = len(validators)
    last_height = headers[-1]["height"]
    produced_heights = {h["height"] for h in headers}
    start = max(first_height, genesis_height + 1)
    blocks = {v: [0, 0] for v in validators}  # produced, expected
    chunks = {v: [[0, 0] for _ in shard_ids] for v in validators}
    endorsements = {v: [[0, 0] for _ in shard_ids] for v in validators}
    for height in range(start, last_height + 1):
        producer = validators[height % count]
        blocks[producer][1] += 1
        if height in produced_heights:
            blocks[producer][0] += 1
    proposals: list[dict[str, Any]] = []
    for header in headers:
        if header["height"] < start:
            continue
        proposals.extend(header["validator_proposals"])
        for shard, new_chunk in enumerate(header["chunk_mask"]):
            chunk_producer = validators[(header["height"] + shard) % count]
            chunks[chunk_producer][shard][1] += 1
            if not new_chunk:
                continue
            chunks[chunk_producer][shard][0] += 1
            bits = header["chunk_endorsements"][shard][0]
            for index, validator in enumerate(validators):
                endorsements[validator][shard][1] += 1
                endorsements[validator][shard][0] += (bits >> index) & 1
    current = []
    for validator in validators:
        produced_chunks = [c[0] for c in chunks[validator]]
        expected_chunks = [c[1] for c in chunks[validator]]
        produced_endorsements = [e[0] for e in endorsements[validator]]
        expected_endorsements = [e[1] for e in endorsements[validator]]
        current.append(
            {
                "account_id": validator,
                "public_key": keys[validator],
                "is_slashed": False,
                "stake": str(stakes[validator]),
                "shards": list(shard_ids),
                "num_produced_blocks": blocks[validator][0],
                "num_expected_blocks": blocks[validator][1],
                "num_produced_chunks": sum(produced_chunks),
                "num_expected_chunks": sum(expected_chunks),
                "num_produced_chunks_per_shard": produced_chunks,
                "num_expected_chunks_per_shard": expected_chunks,
                "num_produced_endorsements": sum(produced_endorsements),
                "num_expected_endorsements": sum(expected_endorsements),
                "num_produced_endorsements_per_shard": produced_endorsements,
                "num_expected_endorsements_per_shard": expected_endorsements,
                "shards_endorsed": list(shard_ids),
            }
        )
    following = [
        {"account_id": v, "public_key": keys[v], "stake": str(next_stakes[v]), "shards": list(shard_ids)}
        for v in validators
    ]
    return {
        "current_validators": current,
        "next_validators": following,
        "current_fishermen": [],
        "next_fishermen": [],
        "current_proposals": proposals,
        "prev_epoch_kickout": [],
        "epoch_start_height": first_height,
        "epoch_height": epoch_index + 1,
    }
