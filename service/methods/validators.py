"""`validators` and `EXPERIMENTAL_validators_ordered`: an epoch's validators, as stored per epoch.

nearcore's view client (GetValidatorInfo) answers the head's epoch for `latest` (and for the
head's own epoch id), a finished epoch by its id, and by block only the last block of a finished
epoch: any other block is VALIDATOR_INFO_UNAVAILABLE, and a block with no next block (the head)
or none at all is UNKNOWN_EPOCH, as an unknown epoch id is. The store keeps each epoch's record
as of its last block (the head's for the current epoch), so a block is its epoch's last exactly
when its epoch has ended and the record's height is the block's.

EXPERIMENTAL_validators_ordered (GetValidatorsOrdered) lists the block producers of a block's
epoch (the head's when no block is named) in the order nearcore ranks them when it settles an
epoch: by stake, highest first, an account id before a greater one when stakes are equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import orjson

from nearrpc.generated import models
from nearrpc.methods import errors
from nearrpc.store import ServingReader, StoredBlock, StoredValidators


@dataclass(frozen=True, slots=True)
class EpochReference:
    kind: Literal["latest", "epoch_id", "block_id"]
    value: int | str | None = None  # the epoch id, or the block's height or hash


def epoch_reference(params: models.RpcValidatorRequest) -> EpochReference:
    request: Any = params.root
    if isinstance(request, models.RpcValidatorRequest1):
        return EpochReference("epoch_id", request.epoch_id.root.root)
    if isinstance(request, models.RpcValidatorRequest2):
        return EpochReference("block_id", request.block_id.root.root)
    if isinstance(request, models.RpcValidatorRequest3) or request == "latest":  # {"latest": null}, "latest"
        return EpochReference("latest")
    (block_id,) = request.root  # [block_id or null]: null is the latest epoch
    return EpochReference("latest") if block_id is None else EpochReference("block_id", block_id.root.root)


def ordered_block_id(params: models.RpcValidatorsOrderedRequest) -> int | str | None:
    request: Any = params.root
    block_id = request.block_id if isinstance(request, models.RpcValidatorsOrderedRequest1) else request.root[0]
    return None if block_id is None else block_id.root.root


async def _block(reader: ServingReader, block_id: int | str) -> StoredBlock | None:
    if isinstance(block_id, int):
        return await reader.block_by_height(block_id)
    return await reader.block_by_hash(block_id)


async def _record(reader: ServingReader, epoch_id: str) -> StoredValidators:
    """The epoch's record, which a store holding the epoch's blocks must have."""
    record = await reader.validators(epoch_id)
    if record is None:
        raise errors.internal_error(f"the store holds no validators of epoch {epoch_id}")
    return record


async def validators_answer(reader: ServingReader, reference: EpochReference) -> bytes:
    head = await reader.head()
    if head is None:
        raise errors.unknown_epoch()
    if reference.kind == "latest" or (reference.kind == "epoch_id" and reference.value == head.epoch_id):
        return (await _record(reader, head.epoch_id)).view_json
    if reference.kind == "epoch_id":
        record = await reader.validators(str(reference.value))
        if record is None:
            raise errors.unknown_epoch()
        return record.view_json
    assert reference.value is not None  # a block id
    block = await _block(reader, reference.value)
    if block is None or block.height >= head.height:
        raise errors.unknown_epoch()  # no such block, or no block after it yet
    if block.epoch_id == head.epoch_id:
        raise errors.validator_info_unavailable()
    record = await _record(reader, block.epoch_id)
    if record.height != block.height:
        raise errors.validator_info_unavailable()
    return record.view_json


def _stake_order(validator: dict[str, Any]) -> tuple[int, str]:
    return (-int(validator["stake"]), validator["account_id"])


async def validators_ordered_answer(reader: ServingReader, block_id: int | str | None) -> bytes:
    block = await (reader.head() if block_id is None else _block(reader, block_id))
    if block is None:
        raise errors.unknown_epoch()
    current: list[dict[str, Any]] = orjson.loads((await _record(reader, block.epoch_id)).view_json)[
        "current_validators"
    ]
    return orjson.dumps([
        {
            "account_id": validator["account_id"],
            "public_key": validator["public_key"],
            "stake": validator["stake"],
            "validator_stake_struct_version": "V1",
        }
        for validator in sorted(current, key=_stake_order)
    ])  # fmt: skip
