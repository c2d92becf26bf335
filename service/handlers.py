"""The five methods, answered from a store: implements generated.handlers.RpcHandlers.

Handlers know nothing of HTTP: they take typed params and return the serialized `result`, or
raise RpcError. Immutable answers are built once and kept as bytes: genesis and client config
at start, the protocol config once per epoch; blocks and account states are stored as the bytes
they are served as.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import orjson

from generated import models
from service.chain import BlockReference, NoEarliestBlock, UnknownBlock, resolve
from service.errors import RpcError, internal_error
from service.protocol_config import compose_protocol_config
from service.runtime_params import RuntimeParamStore
from service.store.base import ChainReader, StoredBlock, StoreError

_LIMITS_TEXT = "The node reached its limits. Try again later. More details: "


def reference_of(params: Any) -> BlockReference:
    """The block reference inside a generated params model (any of its reference branches)."""
    branch = params.root
    if getattr(branch, "block_id", None) is not None:
        return BlockReference("block_id", branch.block_id.root.root)
    if getattr(branch, "finality", None) is not None:
        return BlockReference("finality", branch.finality.root)
    return BlockReference("sync_checkpoint", branch.sync_checkpoint.root)


def _internal(message: str) -> RpcError:
    return internal_error(message, _LIMITS_TEXT + message)


_P = ParamSpec("_P")
_R = TypeVar("_R")


def store_failures_are_internal(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """A store that cannot answer is nearcore's INTERNAL_ERROR (HTTP 500), with the reason."""

    @functools.wraps(method)
    def guarded(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(*args, **kwargs)
        except StoreError as failure:
            raise _internal(str(failure)) from None

    return guarded


def _optional_config(load: Callable[[], bytes]) -> bytes | StoreError:
    try:
        return load()
    except StoreError as missing:
        return missing


class ChainHandlers:
    def __init__(self, reader: ChainReader, runtime_params: RuntimeParamStore) -> None:
        self._reader = reader
        self._runtime_params = runtime_params
        # read once: a store's genesis never changes; an import may lack either config, and
        # then only the methods that need it fail
        self._genesis_json = _optional_config(reader.genesis_config_json)
        self._client_json = _optional_config(reader.client_config_json)
        self._protocol_config_by_epoch: dict[str, bytes] = {}

    def _genesis_bytes(self) -> bytes:
        if isinstance(self._genesis_json, StoreError):
            raise self._genesis_json
        return self._genesis_json

    # -- parameterless methods: params are ignored, as nearcore ignores them

    @store_failures_are_internal
    def genesis_config(self, params: models.GenesisConfigRequest) -> bytes:
        return self._genesis_bytes()

    @store_failures_are_internal
    def client_config(self, params: models.RpcClientConfigRequest) -> bytes:
        if isinstance(self._client_json, StoreError):
            raise self._client_json
        return self._client_json

    # -- methods that read at a block

    @store_failures_are_internal
    def block(self, params: models.RpcBlockRequest) -> bytes:
        try:
            return resolve(self._reader, reference_of(params)).view_json
        except UnknownBlock as missing:
            raise RpcError("UNKNOWN_BLOCK", {}, f"DB Not Found Error: {missing.db_message} \n Cause: Unknown") from None
        except NoEarliestBlock:
            raise RpcError("NOT_SYNCED_YET", None, "There are no fully synchronized blocks yet") from None

    @store_failures_are_internal
    def EXPERIMENTAL_protocol_config(self, params: models.RpcProtocolConfigRequest) -> bytes:
        try:
            block = resolve(self._reader, reference_of(params))
        except UnknownBlock as missing:
            raise RpcError("UNKNOWN_BLOCK", {}, f"Block Not Found: {missing.db_message}") from None
        except NoEarliestBlock:
            raise RpcError("UNKNOWN_BLOCK", {}, "Block Not Found: EarliestAvailable") from None
        cached = self._protocol_config_by_epoch.get(block.epoch_id)
        if cached is None:
            cached = self._protocol_config_json(block)
            self._protocol_config_by_epoch[block.epoch_id] = cached
        return cached

    @store_failures_are_internal
    def EXPERIMENTAL_view_account(self, params: models.RpcViewAccountRequest) -> bytes:
        reference = reference_of(params)
        account_id: str = params.root.account_id.root
        try:
            block = resolve(self._reader, reference)
        except UnknownBlock:
            raise RpcError(
                "UNKNOWN_BLOCK",
                {"block_reference": reference.as_json()},
                "Block either has never been observed on the node or has been garbage collected: "
                + reference.rust_debug(),
            ) from None
        except NoEarliestBlock:
            raise _internal("There are no fully synchronized blocks on the node yet") from None
        view = self._reader.account_json(account_id, block.height)
        if view is None:
            raise RpcError(
                "UNKNOWN_ACCOUNT",
                {"requested_account_id": account_id, "block_height": block.height, "block_hash": block.hash},
                f"account {account_id} does not exist while viewing",
            )
        return _with_block(view, block)

    def _protocol_config_json(self, block: StoredBlock) -> bytes:
        epoch = self._reader.epoch(block.epoch_id)
        if epoch is None:
            raise _internal(f"Epoch {block.epoch_id} of block {block.hash} is not stored")
        if epoch.protocol_config_json is not None:  # recorded from a node: served as it answered
            return epoch.protocol_config_json
        config = compose_protocol_config(
            orjson.loads(self._genesis_bytes()),
            epoch.protocol_version,
            orjson.loads(epoch.config_json),
            self._runtime_params,
        )
        return orjson.dumps(config)


def _with_block(account_view: bytes, block: StoredBlock) -> bytes:
    """Append the block the state was read at, as nearcore's account view ends with it."""
    suffix = b',"block_height":%d,"block_hash":"%s"}' % (block.height, block.hash.encode())
    return account_view.rstrip()[:-1] + suffix
