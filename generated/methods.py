"""Generated from spec/openapi.json by `python -m tools.regenerate`. Do not edit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """What the spec says about one JSON-RPC method."""

    name: str
    identifier: str  # the handler's name in RpcHandlers
    path: str
    params_schema: str
    response_schema: str
    result_schema: str
    takes_block_reference: bool
    accepts_positional: bool
    params_members: tuple[str, ...]


METHODS: Final[dict[str, MethodSpec]] = {
    "genesis_config": MethodSpec(
        name="genesis_config",
        identifier="genesis_config",
        path="/genesis_config",
        params_schema="GenesisConfigRequest",
        response_schema="JsonRpcResponse_for_GenesisConfig_and_GenesisConfigError",
        result_schema="GenesisConfig",
        takes_block_reference=False,
        accepts_positional=False,
        params_members=(),
    ),
    "EXPERIMENTAL_protocol_config": MethodSpec(
        name="EXPERIMENTAL_protocol_config",
        identifier="EXPERIMENTAL_protocol_config",
        path="/EXPERIMENTAL_protocol_config",
        params_schema="RpcProtocolConfigRequest",
        response_schema="JsonRpcResponse_for_RpcProtocolConfigResponse_and_RpcProtocolConfigError",
        result_schema="RpcProtocolConfigResponse",
        takes_block_reference=True,
        accepts_positional=False,
        params_members=(
            "block_id",
            "finality",
            "sync_checkpoint",
        ),
    ),
    "EXPERIMENTAL_view_account": MethodSpec(
        name="EXPERIMENTAL_view_account",
        identifier="EXPERIMENTAL_view_account",
        path="/EXPERIMENTAL_view_account",
        params_schema="RpcViewAccountRequest",
        response_schema="JsonRpcResponse_for_RpcViewAccountResponse_and_RpcViewAccountError",
        result_schema="RpcViewAccountResponse",
        takes_block_reference=True,
        accepts_positional=False,
        params_members=(
            "account_id",
            "block_id",
            "finality",
            "sync_checkpoint",
        ),
    ),
    "client_config": MethodSpec(
        name="client_config",
        identifier="client_config",
        path="/client_config",
        params_schema="RpcClientConfigRequest",
        response_schema="JsonRpcResponse_for_RpcClientConfigResponse_and_RpcClientConfigError",
        result_schema="RpcClientConfigResponse",
        takes_block_reference=False,
        accepts_positional=False,
        params_members=(),
    ),
    "block": MethodSpec(
        name="block",
        identifier="block",
        path="/block",
        params_schema="RpcBlockRequest",
        response_schema="JsonRpcResponse_for_RpcBlockResponse_and_RpcBlockError",
        result_schema="RpcBlockResponse",
        takes_block_reference=True,
        accepts_positional=True,
        params_members=(
            "block_id",
            "finality",
            "sync_checkpoint",
        ),
    ),
    "status": MethodSpec(
        name="status",
        identifier="status",
        path="/status",
        params_schema="RpcStatusRequest",
        response_schema="JsonRpcResponse_for_RpcStatusResponse_and_RpcStatusError",
        result_schema="RpcStatusResponse",
        takes_block_reference=False,
        accepts_positional=False,
        params_members=(),
    ),
    "gas_price": MethodSpec(
        name="gas_price",
        identifier="gas_price",
        path="/gas_price",
        params_schema="RpcGasPriceRequest",
        response_schema="JsonRpcResponse_for_RpcGasPriceResponse_and_RpcGasPriceError",
        result_schema="RpcGasPriceResponse",
        takes_block_reference=True,
        accepts_positional=True,
        params_members=("block_id",),
    ),
    "query": MethodSpec(
        name="query",
        identifier="query",
        path="/query",
        params_schema="RpcQueryRequest",
        response_schema="JsonRpcResponse_for_RpcQueryResponse_and_RpcQueryError",
        result_schema="RpcQueryResponse",
        takes_block_reference=True,
        accepts_positional=True,
        params_members=(
            "account_id",
            "after_key_base64",
            "args_base64",
            "block_id",
            "code_hash",
            "finality",
            "include_proof",
            "limit",
            "method_name",
            "prefix_base64",
            "public_key",
            "request_type",
            "sync_checkpoint",
        ),
    ),
    "EXPERIMENTAL_view_access_key": MethodSpec(
        name="EXPERIMENTAL_view_access_key",
        identifier="EXPERIMENTAL_view_access_key",
        path="/EXPERIMENTAL_view_access_key",
        params_schema="RpcViewAccessKeyRequest",
        response_schema="JsonRpcResponse_for_RpcViewAccessKeyResponse_and_RpcViewAccessKeyError",
        result_schema="RpcViewAccessKeyResponse",
        takes_block_reference=True,
        accepts_positional=False,
        params_members=(
            "account_id",
            "block_id",
            "finality",
            "public_key",
            "sync_checkpoint",
        ),
    ),
    "EXPERIMENTAL_view_access_key_list": MethodSpec(
        name="EXPERIMENTAL_view_access_key_list",
        identifier="EXPERIMENTAL_view_access_key_list",
        path="/EXPERIMENTAL_view_access_key_list",
        params_schema="RpcViewAccessKeyListRequest",
        response_schema="JsonRpcResponse_for_RpcViewAccessKeyListResponse_and_RpcViewAccessKeyListError",
        result_schema="RpcViewAccessKeyListResponse",
        takes_block_reference=True,
        accepts_positional=False,
        params_members=(
            "account_id",
            "block_id",
            "finality",
            "sync_checkpoint",
        ),
    ),
    "EXPERIMENTAL_view_code": MethodSpec(
        name="EXPERIMENTAL_view_code",
        identifier="EXPERIMENTAL_view_code",
        path="/EXPERIMENTAL_view_code",
        params_schema="RpcViewCodeRequest",
        response_schema="JsonRpcResponse_for_RpcViewCodeResponse_and_RpcViewCodeError",
        result_schema="RpcViewCodeResponse",
        takes_block_reference=True,
        accepts_positional=False,
        params_members=(
            "account_id",
            "block_id",
            "finality",
            "sync_checkpoint",
        ),
    ),
    "EXPERIMENTAL_call_function": MethodSpec(
        name="EXPERIMENTAL_call_function",
        identifier="EXPERIMENTAL_call_function",
        path="/EXPERIMENTAL_call_function",
        params_schema="RpcCallFunctionRequest",
        response_schema="JsonRpcResponse_for_RpcCallFunctionResponse_and_RpcCallFunctionError",
        result_schema="RpcCallFunctionResponse",
        takes_block_reference=True,
        accepts_positional=False,
        params_members=(
            "account_id",
            "args_base64",
            "block_id",
            "finality",
            "method_name",
            "sync_checkpoint",
        ),
    ),
    "EXPERIMENTAL_view_state": MethodSpec(
        name="EXPERIMENTAL_view_state",
        identifier="EXPERIMENTAL_view_state",
        path="/EXPERIMENTAL_view_state",
        params_schema="RpcViewStateRequest",
        response_schema="JsonRpcResponse_for_RpcViewStateResponse_and_RpcViewStateError",
        result_schema="RpcViewStateResponse",
        takes_block_reference=True,
        accepts_positional=False,
        params_members=(
            "account_id",
            "after_key_base64",
            "block_id",
            "finality",
            "include_proof",
            "limit",
            "prefix_base64",
            "sync_checkpoint",
        ),
    ),
    "rpc.discover": MethodSpec(
        name="rpc.discover",
        identifier="rpc_discover",
        path="/rpc.discover",
        params_schema="RpcDiscoverRequest",
        response_schema="JsonRpcResponse_for_OpenRpcDocument_and_RpcDiscoverError",
        result_schema="OpenRpcDocument",
        takes_block_reference=False,
        accepts_positional=False,
        params_members=(),
    ),
}
