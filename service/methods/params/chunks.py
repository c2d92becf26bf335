"""The params of `chunk` (nearcore's chain/jsonrpc/src/api/chunks.rs): a one-element array
holds `[block_id, shard_id]` when its element is an array, else a chunk hash; anything else is
the flattened, untagged ChunkReference: `{block_id, shard_id}` first, then `{chunk_id}`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from nearrpc.generated.methods import MethodSpec
from nearrpc.methods.errors import RpcError
from nearrpc.methods.params.readers import Reader, checked_block_id, checked_hash, expect_object, failed, json_kind

MAX_U64: Final = 2**64 - 1


def _u64(value: object) -> int:
    """A u64 (a shard id); an integral float (2.0) is the integer it equals, as JSON Schema (and
    `height_of`) reads it, though nearcore refuses it."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_U64:
        return value
    raise failed(f"invalid type: {json_kind(value)}, expected u64")


def _fits(check: Callable[[object], object], value: object) -> bool:
    try:
        check(value)
    except RpcError:
        return False
    return True


def chunk_params(method: MethodSpec, params: object) -> object:
    if isinstance(params, list) and len(params) == 1:
        (member,) = params
        if isinstance(member, list):
            if len(member) != 2:
                raise failed(f"invalid length {len(member)}, expected a tuple of size 2")
            return ((checked_block_id(member[0]), _u64(member[1])),)
        return (checked_hash(member),)
    fields = expect_object(params, method.params_schema)
    # untagged: the first variant whose members all parse
    if "block_id" in fields and "shard_id" in fields:
        if _fits(checked_block_id, fields["block_id"]) and _fits(_u64, fields["shard_id"]):
            return {"block_id": checked_block_id(fields["block_id"]), "shard_id": _u64(fields["shard_id"])}
    if "chunk_id" in fields and _fits(checked_hash, fields["chunk_id"]):
        return {"chunk_id": fields["chunk_id"]}
    raise failed("data did not match any variant of untagged enum ChunkReference")


READERS: Final[dict[str, Reader]] = {"chunk": chunk_params}
