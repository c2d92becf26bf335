"""Chunks: `chunk`, by its hash or by a block and a shard."""

from __future__ import annotations

import functools

from nearrpc.generated import models
from nearrpc.methods.chunks import chunk_answer, chunk_reference
from nearrpc.methods.handlers.resolution import Resolution, store_failures_are_internal


class ChunkMethods(Resolution):
    @store_failures_are_internal
    async def chunk(self, params: models.RpcChunkRequest) -> bytes:
        return await chunk_answer(self._reader, chunk_reference(params), functools.partial(self._resolve, "chunk"))
