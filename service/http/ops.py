"""Routes for operators and tools beside the JSON-RPC ones: /health, /status, /metrics, /openapi.json,
/openrpc.json (beyond nearcore: the interface as OpenRPC, as rpc.discover answers it)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import orjson
from fastapi import APIRouter
from starlette.responses import Response

from nearrpc.http.metrics import StoreCollector, metrics_response, scrape_registry
from nearrpc.http.status import StatusReport
from nearrpc.spec import openrpc_bytes, spec_bytes
from nearrpc.store import ServingReader, StoreError

log = logging.getLogger("nearrpc.ops")

_JSON = "application/json"


def ops_router(
    reader: ServingReader,
    *,
    rpc_addr: str | None,
    metrics: bool,
    fork_status: Callable[[], Awaitable[dict[str, object]]] | None = None,
) -> APIRouter:
    """`reader`: the store (a fork's own, not the upstream); `fork_status`: what /status says of
    the upstream a fork reads through."""
    router = APIRouter()
    report = StatusReport(reader, rpc_addr)

    @router.api_route("/openapi.json", methods=["GET", "HEAD"], include_in_schema=False)
    async def openapi_document() -> Response:
        return Response(spec_bytes(), media_type="application/json; charset=utf-8")

    @router.api_route("/openrpc.json", methods=["GET", "HEAD"], include_in_schema=False)
    async def openrpc_document() -> Response:
        return Response(openrpc_bytes(), media_type="application/json; charset=utf-8")

    @router.api_route("/health", methods=["GET", "HEAD"], include_in_schema=False)
    async def health() -> Response:
        # nearcore's answers: 200 with the JSON `null`, or 503 with an empty body
        try:
            reader.version()  # what makes a reader notice a replaced file, as before each JSON-RPC request
            await reader.info()
        except StoreError as exc:
            log.warning("health: the store is not usable: %s", exc)
            return Response(status_code=503)
        return Response(b"null", media_type=_JSON)

    @router.api_route("/status", methods=["GET", "HEAD"], include_in_schema=False)
    async def status() -> Response:
        try:
            document = await report.document()
            if fork_status is not None:
                summary = document["nearrpc"]
                assert isinstance(summary, dict)
                summary["fork"] = await fork_status()
        except StoreError as exc:
            log.warning("status: the store is not usable: %s", exc)
            return Response(orjson.dumps({"error": f"store is not usable: {exc}"}), 503, media_type=_JSON)
        return Response(orjson.dumps(document), media_type=_JSON)

    if metrics:
        store_gauges = StoreCollector(reader)
        registry = scrape_registry(store_gauges)

        @router.api_route("/metrics", methods=["GET", "HEAD"], include_in_schema=False)
        async def prometheus_metrics() -> Response:
            await store_gauges.read()  # the store's figures now; the registry renders them
            return metrics_response(registry)

    return router
