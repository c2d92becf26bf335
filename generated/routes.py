"""Generated from spec/openapi.json by `python -m tools.regenerate`. Do not edit."""

from __future__ import annotations

from typing import Protocol

from fastapi import APIRouter, Request, Response


class JsonRpcEndpoint(Protocol):
    """Turns one HTTP request into one HTTP response; `path_method` is None for POST /."""

    async def __call__(self, request: Request, path_method: str | None) -> Response: ...


def build_router(endpoint: JsonRpcEndpoint) -> APIRouter:
    """One POST route for the shared endpoint and one per method, all delegating."""
    router = APIRouter()

    @router.post("/", operation_id="jsonrpc", include_in_schema=False)
    async def jsonrpc(request: Request) -> Response:
        return await endpoint(request, None)

    @router.post("/genesis_config", operation_id="genesis_config", include_in_schema=False)
    async def genesis_config(request: Request) -> Response:
        return await endpoint(request, "genesis_config")

    @router.post("/EXPERIMENTAL_protocol_config", operation_id="EXPERIMENTAL_protocol_config", include_in_schema=False)
    async def EXPERIMENTAL_protocol_config(request: Request) -> Response:
        return await endpoint(request, "EXPERIMENTAL_protocol_config")

    @router.post("/EXPERIMENTAL_view_account", operation_id="EXPERIMENTAL_view_account", include_in_schema=False)
    async def EXPERIMENTAL_view_account(request: Request) -> Response:
        return await endpoint(request, "EXPERIMENTAL_view_account")

    @router.post("/client_config", operation_id="client_config", include_in_schema=False)
    async def client_config(request: Request) -> Response:
        return await endpoint(request, "client_config")

    @router.post("/block", operation_id="block", include_in_schema=False)
    async def block(request: Request) -> Response:
        return await endpoint(request, "block")

    return router
