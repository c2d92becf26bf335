"""The five methods, answered from a store: implements generated.handlers.RpcHandlers.

Handlers know nothing of HTTP: they take typed params and return the serialized `result`, or
raise RpcError. Immutable answers are built once and kept as bytes: genesis and client config
at start, the protocol config once per epoch; blocks and account states are stored as the bytes
they are served as.
"""

from __future__ import annotations

from typing import Any

import orjson

from generated import models
from service.chain import BlockReference, NoEarliestBlock, UnknownBlock, resolve
from service.errors import RpcError, internal_error
from service.protocol_config import compose_protocol_config
from service.runtime_params import RuntimeParamStore
from service.store.base import ChainReader, StoredBlock

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


class ChainHandlers:
    def __init__(self, reader: ChainReader, runtime_params: RuntimeParamStore) -> None:
        self._reader = reader
        self._runtime_params = runtime_params
        self._genesis_json = reader.genesis_config_json()
        self._genesis: dict[str, Any] = orjson.loads(self._genesis_json)
        self._client_json = reader.client_config_json()
        self._protocol_config_by_epoch: dict[str, bytes] = {}

    # -- parameterless methods: params are ignored, as nearcore ignores them

    def genesis_config(self, params: models.GenesisConfigRequest) -> bytes:
        return self._genesis_json

    def client_config(self, params: models.RpcClientConfigRequest) -> bytes:
        return self._client_json

    # -- methods that read at a block

    def block(self, params: models.RpcBlockRequest) -> bytes:
        try:
            return resolve(self._reader, reference_of(params)).view_json
        except UnknownBlock as missing:
            raise RpcError("UNKNOWN_BLOCK", {}, f"DB Not Found Error: {missing.db_message} \n Cause: Unknown") from None
        except NoEarliestBlock:
            raise RpcError("NOT_SYNCED_YET", None, "There are no fully synchronized blocks yet") from None

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
            self._genesis, epoch.protocol_version, orjson.loads(epoch.config_json), self._runtime_params
        )
        return orjson.dumps(config)


def _with_block(account_view: bytes, block: StoredBlock) -> bytes:
    """Append the block the state was read at, as nearcore's account view ends with it."""
    suffix = b',"block_height":%d,"block_hash":"%s"}' % (block.height, block.hash.encode())
    return account_view.rstrip()[:-1] + suffix
