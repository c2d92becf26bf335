"""Generated from spec/openapi.json by `python -m tools.regenerate`. Do not edit."""

from __future__ import annotations

from typing import Protocol

from fastapi import APIRouter, Request, Response


class JsonRpcEndpoint(Protocol):
    """Turns one HTTP request into one HTTP response; `path_method` is None for POST /."""

    async def __call__(self, request: Request, path_method: str | None) -> Response: ...


def build_router(endpoint: JsonRpcEndpoint) -> APIRouter:
    """One POST route for the shared endpoint and one per method, all delegating.

    Registered as plain routes: the endpoint parses and validates the JSON-RPC body itself,
    so FastAPI's per-request dependency and validation machinery would only cost time.
    """
    router = APIRouter()

    async def jsonrpc(request: Request) -> Response:
        return await endpoint(request, None)

    router.add_route("/", jsonrpc, methods=["POST"], name="jsonrpc", include_in_schema=False)

    async def genesis_config(request: Request) -> Response:
        return await endpoint(request, "genesis_config")

    router.add_route(
        "/genesis_config", genesis_config, methods=["POST"], name="genesis_config", include_in_schema=False
    )

    async def EXPERIMENTAL_protocol_config(request: Request) -> Response:
        return await endpoint(request, "EXPERIMENTAL_protocol_config")

    router.add_route(
        "/EXPERIMENTAL_protocol_config",
        EXPERIMENTAL_protocol_config,
        methods=["POST"],
        name="EXPERIMENTAL_protocol_config",
        include_in_schema=False,
    )

    async def EXPERIMENTAL_view_account(request: Request) -> Response:
        return await endpoint(request, "EXPERIMENTAL_view_account")

    router.add_route(
        "/EXPERIMENTAL_view_account",
        EXPERIMENTAL_view_account,
        methods=["POST"],
        name="EXPERIMENTAL_view_account",
        include_in_schema=False,
    )

    async def client_config(request: Request) -> Response:
        return await endpoint(request, "client_config")

    router.add_route("/client_config", client_config, methods=["POST"], name="client_config", include_in_schema=False)

    async def block(request: Request) -> Response:
        return await endpoint(request, "block")

    router.add_route("/block", block, methods=["POST"], name="block", include_in_schema=False)

    return router
