"""Blocks and configs: genesis_config, client_config, block, EXPERIMENTAL_protocol_config,
gas_price. A block by height or hash is its stored view alone, read at once; the protocol
config of an epoch is composed once and kept (`Resolution`)."""

from __future__ import annotations

import orjson

from nearrpc.generated import models
from nearrpc.methods import errors
from nearrpc.methods.blocks import NoEarliestBlock, reference_of
from nearrpc.methods.handlers.resolution import Resolution, store_failures_are_internal


class BlockMethods(Resolution):
    # -- parameterless methods: params are ignored, as nearcore ignores them

    @store_failures_are_internal
    async def genesis_config(self, params: models.GenesisConfigRequest) -> bytes:
        return await self._genesis_bytes()

    @store_failures_are_internal
    async def client_config(self, params: models.RpcClientConfigRequest) -> bytes:
        client = await self._reader.client_config_json()
        if client is None:
            raise errors.internal_error("the store holds no client_config")
        return client

    # -- methods that read at a block

    @store_failures_are_internal
    async def block(self, params: models.RpcBlockRequest) -> bytes:
        reference = reference_of(params)
        if reference.kind == "block_id":  # most requests: the stored result alone, read at once
            height_or_hash = reference.value
            found = await (self._reader.block_json_by_height(height_or_hash) if isinstance(height_or_hash, int)
                           else self._reader.block_json_by_hash(height_or_hash))  # fmt: skip
            if found is not None:
                return found
        try:  # the other references, and an unknown block's error
            return (await self._resolve("block", reference)).view_json
        except NoEarliestBlock:
            raise errors.not_synced_yet() from None

    @store_failures_are_internal
    async def EXPERIMENTAL_protocol_config(self, params: models.RpcProtocolConfigRequest) -> bytes:
        reference = reference_of(params)
        try:
            block = await self._resolve("EXPERIMENTAL_protocol_config", reference)
        except NoEarliestBlock:
            raise errors.unknown_block("EXPERIMENTAL_protocol_config", reference, "EarliestAvailable", None) from None
        # the kept config looked up here, not through `_protocol_config`: one await less per answer
        cached = self._protocol_config_by_epoch.get(block.epoch_id)
        if cached is None:
            cached = await self._protocol_config_json(block)
            self._protocol_config_by_epoch[block.epoch_id] = cached
        return cached

    @store_failures_are_internal
    async def gas_price(self, params: models.RpcGasPriceRequest) -> bytes:
        # view_client_actor.rs GetGasPrice: the header's next gas price, which its view shows
        block = await self._resolve("gas_price", reference_of(params))
        gas_price: str = orjson.loads(block.view_json)["header"]["gas_price"]
        return orjson.dumps({"gas_price": gas_price})
