"""`chunk`: a chunk by its hash, or the chunk a block's header names for a shard.

nearcore's view client (GetChunk) reads a chunk by hash, or takes the block's chunk header for
the shard and reads the chunk that header names. A block in which the shard had no new chunk
carries the shard's previous header, so the previous chunk is the answer (its `height_included`
is below the block's height).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from nearrpc.generated import models
from nearrpc.methods import errors
from nearrpc.methods.blocks import BlockReference
from nearrpc.store import ServingReader, StoredBlock

# (chunk hash,) or (block id, shard id): the two references nearcore's ChunkReference takes
ChunkReference = tuple[str] | tuple[int | str, int]


def chunk_reference(params: models.RpcChunkRequest) -> ChunkReference:
    """The reference of any of the four request forms (object or positional)."""
    request: Any = params.root
    if isinstance(request, models.RpcChunkRequest1):
        return (request.block_id.root.root, request.shard_id.root)
    if isinstance(request, models.RpcChunkRequest2):
        return (request.chunk_id.root,)
    (member,) = request.root
    if isinstance(member, models.RpcChunkRequest4Item):  # [[block_id, shard_id]]
        block_id, shard_id = member.root
        return (block_id.root.root, shard_id.root)
    return (member.root,)  # [chunk_hash]


def _chunk_hash_of_shard(block: StoredBlock, shard_id: int) -> str:
    """The hash in the block's chunk header of `shard_id` (INVALID_SHARD_ID: the block has none)."""
    for header in orjson.loads(block.view_json)["chunks"]:
        if header["shard_id"] == shard_id:
            chunk_hash: str = header["chunk_hash"]
            return chunk_hash
    raise errors.invalid_shard_id(shard_id)


async def chunk_answer(
    reader: ServingReader,
    reference: ChunkReference,
    block_of: Callable[[BlockReference], Awaitable[StoredBlock]],
) -> bytes:
    """The stored `chunk` result; `block_of` resolves a block id (raising UNKNOWN_BLOCK)."""
    if len(reference) == 1:
        chunk_hash = str(reference[0])
    else:
        block_id, shard_id = reference
        block = await block_of(BlockReference("block_id", block_id))
        chunk_hash = _chunk_hash_of_shard(block, int(shard_id))
    chunk = await reader.chunk(chunk_hash)
    if chunk is None:
        raise errors.unknown_chunk(chunk_hash)
    return chunk.view_json
