"""The HTTP application: generated JSON-RPC routes, health and status, the spec, CORS.

`create_app(settings)` builds it over an existing store opened read-only;
`app_from_env()` is the factory uvicorn workers call (settings from NEARRPC_* variables).
"""

from __future__ import annotations

import logging
import sqlite3

import orjson
from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response

from generated.routes import build_router
from service.endpoint import JsonRpcEndpoint
from service.handlers import ChainHandlers
from service.runtime_params import RuntimeParamStore
from service.schema import spec_bytes
from service.settings import Settings
from service.store.base import ChainReader, StoreError
from service.store.sqlite import open_reader
from service.version import INTERFACE_VERSION, SERVICE_VERSION

log = logging.getLogger("nearrpc.app")
_JSON = "application/json"


def _store_gaps(reader: ChainReader, block_count: int) -> list[str]:
    """What the store cannot answer, in words, so an operator sees it without trying."""
    gaps: list[str] = []
    configs = (("genesis_config", reader.genesis_config_json), ("client_config", reader.client_config_json))
    for method, load in configs:
        try:
            load()
        except StoreError:
            gaps.append(f"no {method} stored: the method answers INTERNAL_ERROR")
    if block_count == 0:
        gaps.append(
            "no blocks stored (a genesis file alone does not define the genesis block): block and "
            "protocol config answer UNKNOWN_BLOCK or NOT_SYNCED_YET, view_account UNKNOWN_BLOCK; "
            "import block views to serve them"
        )
    return gaps


def _status_document(reader: ChainReader) -> dict[str, object]:
    info = reader.info()
    head = reader.head()
    earliest = reader.earliest_block()
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
        "limitations": _store_gaps(reader, info.block_count),
    }


def _add_cors(app: FastAPI, origins: tuple[str, ...]) -> None:
    if origins == ("*",):
        # nearcore's default: any origin, method and header
        app.add_middleware(CORSMiddleware, allow_origins=["*"], allow_methods=["*"], allow_headers=["*"])
    elif origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Accept", "Content-Type"],
            max_age=3600,
        )


def build_app(reader: ChainReader, cors_origins: tuple[str, ...] = ("*",)) -> FastAPI:
    handlers = ChainHandlers(reader, RuntimeParamStore.load())

    def head_height() -> int | None:
        head = reader.head()
        return head.height if head else None

    app = FastAPI(title="nearrpc", version=SERVICE_VERSION, openapi_url=None, docs_url=None, redoc_url=None)

    @app.exception_handler(HTTPException)
    async def bare_http_error(request: Request, error: HTTPException) -> Response:
        # nearcore's router answers an unknown path (404) or a wrong method (405) with an
        # empty body; keep the status and headers (Allow), drop Starlette's JSON detail
        return Response(status_code=error.status_code, headers=error.headers)
    app.include_router(build_router(JsonRpcEndpoint(handlers, head_height)))

    @app.api_route("/openapi.json", methods=["GET", "HEAD"], include_in_schema=False)
    async def openapi_document() -> Response:
        return Response(spec_bytes(), media_type="application/json; charset=utf-8")

    @app.api_route("/health", methods=["GET", "HEAD"], include_in_schema=False)
    async def health() -> Response:
        try:
            reader.info()
        except (StoreError, sqlite3.Error) as exc:
            return Response(orjson.dumps({"error": f"store is not usable: {exc}"}), 503, media_type=_JSON)
        return Response(b"{}", media_type=_JSON)

    @app.api_route("/status", methods=["GET", "HEAD"], include_in_schema=False)
    async def status(request: Request) -> Response:
        try:
            document = _status_document(reader)
        except (StoreError, sqlite3.Error) as exc:
            return Response(orjson.dumps({"error": f"store is not usable: {exc}"}), 503, media_type=_JSON)
        return Response(orjson.dumps(document), media_type=_JSON)

    _add_cors(app, cors_origins)
    return app


def create_app(settings: Settings) -> FastAPI:
    return build_app(open_reader(settings.store), settings.cors_origins)


def app_from_env() -> FastAPI:
    """Factory for uvicorn (`--factory`): every worker opens the store itself."""
    return create_app(Settings())
