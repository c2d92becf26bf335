"""Generated from spec/openapi.json by `python -m tools.regenerate`. Do not edit."""

from __future__ import annotations

from typing import Protocol

from nearrpc.generated import models


class RpcHandlers(Protocol):
    """The typed interface nearrpc implements: one method per JSON-RPC method.

    Each receives its params as the generated model and returns the serialized `result`
    (compact JSON bytes of the result schema), so immutable answers can be cached as bytes.
    Handler errors are raised as exceptions that the service's error layer renders. Handlers
    are coroutines, so a store that waits on the network does not block the server.
    """

    async def genesis_config(self, params: models.GenesisConfigRequest) -> bytes:
        """Result schema: GenesisConfig."""
        ...

    async def EXPERIMENTAL_protocol_config(self, params: models.RpcProtocolConfigRequest) -> bytes:
        """Result schema: RpcProtocolConfigResponse."""
        ...

    async def EXPERIMENTAL_view_account(self, params: models.RpcViewAccountRequest) -> bytes:
        """Result schema: RpcViewAccountResponse."""
        ...

    async def client_config(self, params: models.RpcClientConfigRequest) -> bytes:
        """Result schema: RpcClientConfigResponse."""
        ...

    async def block(self, params: models.RpcBlockRequest) -> bytes:
        """Result schema: RpcBlockResponse."""
        ...

    async def status(self, params: models.RpcStatusRequest) -> bytes:
        """Result schema: RpcStatusResponse."""
        ...

    async def gas_price(self, params: models.RpcGasPriceRequest) -> bytes:
        """Result schema: RpcGasPriceResponse."""
        ...

    async def query(self, params: models.RpcQueryRequest) -> bytes:
        """Result schema: RpcQueryResponse."""
        ...

    async def EXPERIMENTAL_view_access_key(self, params: models.RpcViewAccessKeyRequest) -> bytes:
        """Result schema: RpcViewAccessKeyResponse."""
        ...

    async def EXPERIMENTAL_view_access_key_list(self, params: models.RpcViewAccessKeyListRequest) -> bytes:
        """Result schema: RpcViewAccessKeyListResponse."""
        ...

    async def EXPERIMENTAL_view_code(self, params: models.RpcViewCodeRequest) -> bytes:
        """Result schema: RpcViewCodeResponse."""
        ...

    async def EXPERIMENTAL_call_function(self, params: models.RpcCallFunctionRequest) -> bytes:
        """Result schema: RpcCallFunctionResponse."""
        ...

    async def EXPERIMENTAL_view_state(self, params: models.RpcViewStateRequest) -> bytes:
        """Result schema: RpcViewStateResponse."""
        ...

    async def chunk(self, params: models.RpcChunkRequest) -> bytes:
        """Result schema: RpcChunkResponse."""
        ...

    async def tx(self, params: models.RpcTransactionStatusRequest) -> bytes:
        """Result schema: RpcTransactionResponse."""
        ...

    async def EXPERIMENTAL_tx_status(self, params: models.RpcTransactionStatusRequest) -> bytes:
        """Result schema: RpcTransactionResponse."""
        ...

    async def EXPERIMENTAL_receipt(self, params: models.RpcReceiptRequest) -> bytes:
        """Result schema: RpcReceiptResponse."""
        ...

    async def validators(self, params: models.RpcValidatorRequest) -> bytes:
        """Result schema: RpcValidatorResponse."""
        ...

    async def EXPERIMENTAL_validators_ordered(self, params: models.RpcValidatorsOrderedRequest) -> bytes:
        """Result schema: RpcValidatorsOrderedResponse."""
        ...

    async def EXPERIMENTAL_changes_in_block(self, params: models.RpcStateChangesInBlockRequest) -> bytes:
        """Result schema: RpcStateChangesInBlockByTypeResponse."""
        ...

    async def EXPERIMENTAL_changes(self, params: models.RpcStateChangesInBlockByTypeRequest) -> bytes:
        """Result schema: RpcStateChangesInBlockResponse."""
        ...

    async def block_effects(self, params: models.RpcStateChangesInBlockRequest) -> bytes:
        """Result schema: RpcStateChangesInBlockByTypeResponse."""
        ...

    async def changes(self, params: models.RpcStateChangesInBlockByTypeRequest) -> bytes:
        """Result schema: RpcStateChangesInBlockResponse."""
        ...

    async def health(self, params: models.RpcHealthRequest) -> bytes:
        """Result schema: RpcHealthResponse."""
        ...

    async def send_tx(self, params: models.RpcSendTransactionRequest) -> bytes:
        """Result schema: RpcTransactionResponse."""
        ...

    async def broadcast_tx_commit(self, params: models.RpcSendTransactionRequest) -> bytes:
        """Result schema: RpcTransactionResponse."""
        ...

    async def broadcast_tx_async(self, params: models.RpcSendTransactionRequest) -> bytes:
        """Result schema: CryptoHash."""
        ...

    async def sandbox_patch_state(self, params: models.RpcSandboxPatchStateRequest) -> bytes:
        """Result schema: RpcSandboxPatchStateResponse."""
        ...

    async def sandbox_fast_forward(self, params: models.RpcSandboxFastForwardRequest) -> bytes:
        """Result schema: RpcSandboxFastForwardResponse."""
        ...

    async def sandbox_snapshot(self, params: models.RpcSandboxSnapshotRequest) -> bytes:
        """Result schema: RpcSandboxSnapshotResponse."""
        ...

    async def sandbox_revert(self, params: models.RpcSandboxRevertRequest) -> bytes:
        """Result schema: RpcSandboxRevertResponse."""
        ...

    async def rpc_discover(self, params: models.RpcDiscoverRequest) -> bytes:
        """Result schema: OpenRpcDocument."""
        ...
