"""Routes for operators and tools beside the JSON-RPC ones: /health, /status, /openapi.json."""

from __future__ import annotations

import orjson
from fastapi import APIRouter
from starlette.responses import Response

from nearrpc.spec import spec_bytes
from nearrpc.store import ServingReader, StoreError
from nearrpc.version import INTERFACE_VERSION, SERVICE_VERSION

_JSON = "application/json"


async def _store_gaps(reader: ServingReader, block_count: int) -> list[str]:
    """What the store cannot answer, in words, so an operator sees it without trying."""
    gaps: list[str] = []
    configs = (("genesis_config", reader.genesis_config_json), ("client_config", reader.client_config_json))
    for method, load in configs:
        if await load() is None:
            gaps.append(f"no {method} stored: the method answers INTERNAL_ERROR")
    if block_count == 0:
        gaps.append(
            "no blocks stored (a genesis file alone does not define the genesis block): block and "
            "protocol config answer UNKNOWN_BLOCK or NOT_SYNCED_YET, view_account UNKNOWN_BLOCK; "
            "import block views to serve them"
        )
    return gaps


async def _status_document(reader: ServingReader) -> dict[str, object]:
    info = await reader.info()
    head = await reader.head()
    earliest = await reader.earliest_block()
    return {
        "chain_id": info.chain_id,
        "version": {"service": SERVICE_VERSION, "interface": INTERFACE_VERSION},
        "sync_info": {
            "latest_block_height": info.latest_height,
            "latest_block_hash": head.hash if head else None,
            "earliest_block_height": info.earliest_height,
            "earliest_block_hash": earliest.hash if earliest else None,
            "syncing": False,
        },
        "store": {
            "schema_version": info.schema_version,
            "blocks": info.block_count,
            "epochs": info.epoch_count,
            "account_states": info.account_state_count,
        },
        "limitations": await _store_gaps(reader, info.block_count),
    }


def _unusable(exc: StoreError) -> Response:
    return Response(orjson.dumps({"error": f"store is not usable: {exc}"}), 503, media_type=_JSON)


def ops_router(reader: ServingReader) -> APIRouter:
    router = APIRouter()

    @router.api_route("/openapi.json", methods=["GET", "HEAD"], include_in_schema=False)
    async def openapi_document() -> Response:
        return Response(spec_bytes(), media_type="application/json; charset=utf-8")

    @router.api_route("/health", methods=["GET", "HEAD"], include_in_schema=False)
    async def health() -> Response:
        try:
            await reader.info()
        except StoreError as exc:
            return _unusable(exc)
        return Response(b"{}", media_type=_JSON)

    @router.api_route("/status", methods=["GET", "HEAD"], include_in_schema=False)
    async def status() -> Response:
        try:
            document = await _status_document(reader)
        except StoreError as exc:
            return _unusable(exc)
        return Response(orjson.dumps(document), media_type=_JSON)

    return router
