"""The HTTP application: the generated JSON-RPC routes, the ops routes and CORS, over a reader.

`build_app(reader)` is what servers and tests run; `nearrpc.cli.serve` builds the reader
from the settings in each uvicorn worker.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response

from nearrpc.generated.routes import build_router
from nearrpc.http.endpoint import JsonRpcEndpoint
from nearrpc.http.ops import ops_router
from nearrpc.methods.handlers import ChainHandlers
from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.store import ServingReader
from nearrpc.version import SERVICE_VERSION


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


def build_app(reader: ServingReader, cors_origins: tuple[str, ...] = ("*",)) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await reader.close()  # a database store's pool and watcher end with the worker

    app = FastAPI(
        title="nearrpc", version=SERVICE_VERSION, openapi_url=None, docs_url=None, redoc_url=None, lifespan=lifespan
    )

    @app.exception_handler(HTTPException)
    async def bare_http_error(request: Request, error: HTTPException) -> Response:
        # nearcore's router answers an unknown path (404) or a wrong method (405) with an
        # empty body; keep the status and headers (Allow), drop Starlette's JSON detail
        return Response(status_code=error.status_code, headers=error.headers)

    handlers = ChainHandlers(reader, RuntimeParamStore.load())
    app.include_router(build_router(JsonRpcEndpoint(handlers)))
    app.include_router(ops_router(reader))
    _add_cors(app, cors_origins)
    return app
