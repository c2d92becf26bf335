"""Generated from spec/openapi.json by `python -m tools.regenerate`. Do not edit."""

from __future__ import annotations

from typing import Final, Protocol

from fastapi import APIRouter
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

# Every JSON-RPC path of the spec and the method it serves (None: any method, POST /).
JSONRPC_PATHS: Final[dict[str, str | None]] = {
    "/": None,
    "/genesis_config": "genesis_config",
    "/EXPERIMENTAL_protocol_config": "EXPERIMENTAL_protocol_config",
    "/EXPERIMENTAL_view_account": "EXPERIMENTAL_view_account",
    "/client_config": "client_config",
    "/block": "block",
    "/status": "status",
    "/gas_price": "gas_price",
    "/query": "query",
    "/EXPERIMENTAL_view_access_key": "EXPERIMENTAL_view_access_key",
    "/EXPERIMENTAL_view_access_key_list": "EXPERIMENTAL_view_access_key_list",
    "/EXPERIMENTAL_view_code": "EXPERIMENTAL_view_code",
    "/EXPERIMENTAL_call_function": "EXPERIMENTAL_call_function",
    "/EXPERIMENTAL_view_state": "EXPERIMENTAL_view_state",
    "/chunk": "chunk",
    "/tx": "tx",
    "/EXPERIMENTAL_tx_status": "EXPERIMENTAL_tx_status",
    "/EXPERIMENTAL_receipt": "EXPERIMENTAL_receipt",
    "/validators": "validators",
    "/EXPERIMENTAL_validators_ordered": "EXPERIMENTAL_validators_ordered",
    "/EXPERIMENTAL_changes_in_block": "EXPERIMENTAL_changes_in_block",
    "/EXPERIMENTAL_changes": "EXPERIMENTAL_changes",
    "/block_effects": "block_effects",
    "/changes": "changes",
    "/health": "health",
    "/send_tx": "send_tx",
    "/broadcast_tx_commit": "broadcast_tx_commit",
    "/broadcast_tx_async": "broadcast_tx_async",
    "/sandbox_patch_state": "sandbox_patch_state",
    "/sandbox_fast_forward": "sandbox_fast_forward",
    "/sandbox_snapshot": "sandbox_snapshot",
    "/sandbox_revert": "sandbox_revert",
    "/rpc.discover": "rpc.discover",
}


class JsonRpcEndpoint(Protocol):
    """Answers one JSON-RPC POST as a raw ASGI call; `path_method` is None for POST /."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send, path_method: str | None) -> None: ...


class _PathEndpoint:
    """The endpoint bound to one path, as an ASGI app a Starlette route can mount."""

    def __init__(self, endpoint: JsonRpcEndpoint, path_method: str | None) -> None:
        self._endpoint = endpoint
        self._path_method = path_method

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._endpoint(scope, receive, send, self._path_method)


def build_router(endpoint: JsonRpcEndpoint) -> APIRouter:
    """POST routes on the FastAPI application for every JSON-RPC path, all delegating.

    They serve what the fast path below leaves to the application: requests a browser sends
    with an `Origin` header, which the application's CORS middleware must see.
    """
    router = APIRouter()
    for path, path_method in JSONRPC_PATHS.items():
        name = "jsonrpc" if path_method is None else path_method
        router.routes.append(Route(path, _PathEndpoint(endpoint, path_method), methods=["POST"], name=name))
    return router


def jsonrpc_front(endpoint: JsonRpcEndpoint, app: ASGIApp) -> ASGIApp:
    """The fast path: JSON-RPC POSTs without an `Origin` header go straight to the endpoint,
    past the application's middleware; every other request goes to `app`."""

    async def front(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            path = scope["path"]
            if path in JSONRPC_PATHS and not any(name == b"origin" for name, _ in scope["headers"]):
                await endpoint(scope, receive, send, JSONRPC_PATHS[path])
                return
        await app(scope, receive, send)

    return front
