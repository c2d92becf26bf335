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

    async def ping(request: Request) -> Response:
        return await endpoint(request, "ping")

    router.add_route("/ping", ping, methods=["POST"], name="ping", include_in_schema=False)

    async def lookup(request: Request) -> Response:
        return await endpoint(request, "lookup")

    router.add_route("/lookup", lookup, methods=["POST"], name="lookup", include_in_schema=False)

    return router
