"""The five methods, answered from a store: implements generated.handlers.RpcHandlers.

Handlers know nothing of HTTP: they take typed params and return the serialized `result`, or
raise RpcError. Blocks and account states are stored as the bytes they are served as; the
protocol config of an epoch is composed once and kept, and finality and checkpoint references
are resolved once, until `refresh()` sees a write that changes what they were made from.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

import orjson

from nearrpc.generated import models
from nearrpc.methods import errors
from nearrpc.methods.blocks import BlockReference, NoEarliestBlock, UnknownBlock, reference_of, resolve
from nearrpc.methods.protocol_config import compose_protocol_config
from nearrpc.nearcore.views import account_view_at
from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.store import STORE_KINDS, ServingReader, StoredBlock, StoreError, StoreVersion

_P = ParamSpec("_P")
_R = TypeVar("_R")


def store_failures_are_internal(
    method: Callable[_P, Coroutine[Any, Any, _R]],
) -> Callable[_P, Coroutine[Any, Any, _R]]:
    """A store that cannot answer is nearcore's INTERNAL_ERROR (HTTP 500), with the reason."""

    @functools.wraps(method)
    async def guarded(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return await method(*args, **kwargs)
        except StoreError as failure:
            raise errors.internal_error(str(failure)) from None

    return guarded


class ChainHandlers:
    def __init__(self, reader: ServingReader, runtime_params: RuntimeParamStore) -> None:
        self._reader = reader
        self._runtime_params = runtime_params
        self._version: StoreVersion | None = None
        self._protocol_config_by_epoch: dict[str, bytes] = {}
        # finality and checkpoint references (a handful of keys), resolved once per head
        self._resolved: dict[BlockReference, StoredBlock] = {}

    def refresh(self) -> frozenset[str]:
        """The kinds of data written since the last call (all of them at the first); what was
        derived from them is dropped. Call it before answering each request."""
        try:
            version = self._reader.version()
        except StoreError:
            return frozenset(STORE_KINDS)  # the handler will answer INTERNAL_ERROR itself
        if version == self._version:
            return frozenset()
        changed = frozenset(STORE_KINDS) if self._version is None else version.changed_since(self._version)
        self._version = version
        if changed & {"epochs", "configs"}:
            self._protocol_config_by_epoch.clear()
        if "blocks" in changed:
            self._resolved.clear()
        return changed

    async def _genesis_bytes(self) -> bytes:
        genesis = await self._reader.genesis_config_json()
        if genesis is None:
            raise errors.internal_error("the store holds no genesis_config")
        return genesis

    async def _resolve(self, method: str, reference: BlockReference) -> StoredBlock:
        """The block of `reference`, or UNKNOWN_BLOCK as `method` reports it."""
        if reference.kind != "block_id":
            known = self._resolved.get(reference)
            if known is not None:
                return known
        try:
            block = await resolve(self._reader, reference)
        except UnknownBlock as missing:
            head = await self._reader.head()
            raise errors.unknown_block(method, reference, missing.db_message, head.height if head else None) from None
        if reference.kind != "block_id":
            self._resolved[reference] = block
        return block

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
        try:
            return (await self._resolve("block", reference_of(params))).view_json
        except NoEarliestBlock:
            raise errors.not_synced_yet() from None

    @store_failures_are_internal
    async def EXPERIMENTAL_protocol_config(self, params: models.RpcProtocolConfigRequest) -> bytes:
        reference = reference_of(params)
        try:
            block = await self._resolve("EXPERIMENTAL_protocol_config", reference)
        except NoEarliestBlock:
            raise errors.unknown_block("EXPERIMENTAL_protocol_config", reference, "EarliestAvailable", None) from None
        cached = self._protocol_config_by_epoch.get(block.epoch_id)
        if cached is None:
            cached = await self._protocol_config_json(block)
            self._protocol_config_by_epoch[block.epoch_id] = cached
        return cached

    @store_failures_are_internal
    async def EXPERIMENTAL_view_account(self, params: models.RpcViewAccountRequest) -> bytes:
        account_id: str = params.root.account_id.root
        try:
            block = await self._resolve("EXPERIMENTAL_view_account", reference_of(params))
        except NoEarliestBlock:
            raise errors.internal_error("There are no fully synchronized blocks on the node yet") from None
        view = await self._reader.account_json(account_id, block.height)
        if view is None:
            raise errors.unknown_account(account_id, block.height, block.hash)
        return account_view_at(view, block.height, block.hash)

    async def _protocol_config_json(self, block: StoredBlock) -> bytes:
        epoch = await self._reader.epoch(block.epoch_id)
        if epoch is None:
            raise errors.internal_error(f"Epoch {block.epoch_id} of block {block.hash} is not stored")
        if epoch.protocol_config_json is not None:  # recorded from a node: served as it answered
            return epoch.protocol_config_json
        config = compose_protocol_config(
            orjson.loads(await self._genesis_bytes()),
            epoch.protocol_version,
            orjson.loads(epoch.config_json),
            self._runtime_params,
        )
        return orjson.dumps(config)
