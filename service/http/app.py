"""The HTTP application: the generated JSON-RPC routes, the ops routes, the docs page and CORS,
over a reader.

`build_app(reader)` is what servers and tests run; `nearrpc.cli.serve` builds the reader
from the settings in each uvicorn worker.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response

from nearrpc.generated.routes import build_router
from nearrpc.http.docs import add_docs_page
from nearrpc.http.endpoint import JsonRpcEndpoint
from nearrpc.http.metrics import observe_rpc
from nearrpc.http.ops import ops_router
from nearrpc.methods.handlers import ChainHandlers
from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.store import ChainReader
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


def build_app(
    reader: ChainReader,
    cors_origins: tuple[str, ...] = ("*",),
    *,
    metrics: bool = True,
    rpc_addr: str | None = None,
) -> FastAPI:
    """`metrics`: count answers and serve /metrics; `rpc_addr`: where the server listens
    (host:port), reported by /status."""
    app = FastAPI(title="nearrpc", version=SERVICE_VERSION, openapi_url=None, docs_url=None, redoc_url=None)

    @app.exception_handler(HTTPException)
    async def bare_http_error(request: Request, error: HTTPException) -> Response:
        # nearcore's router answers an unknown path (404) or a wrong method (405) with an
        # empty body; keep the status and headers (Allow), drop Starlette's JSON detail
        return Response(status_code=error.status_code, headers=error.headers)

    handlers = ChainHandlers(reader, RuntimeParamStore.load())
    endpoint = JsonRpcEndpoint(handlers, observe=observe_rpc if metrics else None)
    app.include_router(build_router(endpoint))
    app.include_router(ops_router(reader, rpc_addr=rpc_addr, metrics=metrics))
    add_docs_page(app)
    _add_cors(app, cors_origins)
    return app
