"""The HTTP application: the generated JSON-RPC routes, the ops routes, the docs page and CORS,
over a reader.

`build_app(reader)` is what servers and tests run; `nearrpc.cli.serve` builds the reader from
the settings in each uvicorn worker. The application is a FastAPI app whose entry point first
offers each request to the generated fast path (`jsonrpc_front`): JSON-RPC POSTs skip
FastAPI's middleware stack, which costs more than answering them; everything else (health,
status, the spec, CORS preflights, browser requests) is FastAPI's.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Protocol

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import Receive, Scope, Send

from nearrpc.generated.routes import build_router, jsonrpc_front
from nearrpc.http.docs import add_docs_page
from nearrpc.http.endpoint import JsonRpcEndpoint
from nearrpc.http.metrics import observe_rpc, observe_view_call, observe_view_call_difference
from nearrpc.http.ops import ops_router
from nearrpc.methods.handlers import ChainHandlers
from nearrpc.methods.sandbox_hooks import SandboxChain
from nearrpc.methods.view_calls import CallUpstream, CallVerifier, ChangesUpstream, ViewCallMetrics
from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.store import Reachability, ServingReader, StoreError
from nearrpc.version import SERVICE_VERSION

log = logging.getLogger("nearrpc.serve")

DEFAULT_ANSWER_CACHE_BYTES = 64 << 20


_METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")


def _allowed_methods(app: FastAPI, scope: Scope) -> list[str]:
    """Every method some route of the application serves at the request's path."""
    routes = app.router.routes
    return [m for m in _METHODS if any(r.matches({**scope, "method": m})[0] is Match.FULL for r in routes)]


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


class Fork(Protocol):
    """What the application needs to know of a fork (`nearrpc.fork.ForkReader`) besides reading
    through it: the store under it (health and the store's gauges are about the store, never the
    upstream), whether its head moves, and what /status says of it."""

    @property
    def local(self) -> ServingReader: ...

    @property
    def heads_move(self) -> bool: ...

    async def fork_status(self) -> dict[str, object]: ...


class RunningSandbox(SandboxChain, Protocol):
    """A sandbox's chain as the application runs it (`nearrpc.sandbox.chain.SandboxChainWriter`):
    started with the application, closed at its shutdown."""

    def start(self) -> None: ...

    async def close(self) -> None: ...


class NearRpcApp(FastAPI):
    """A FastAPI application with the JSON-RPC fast path in front of its middleware."""

    def __init__(
        self,
        endpoint: JsonRpcEndpoint,
        reader: ServingReader,
        close_timeout: float,
        close_handlers: Callable[[], None],
        sandbox: RunningSandbox | None = None,
    ) -> None:
        @asynccontextmanager
        async def lifespan(app: FastAPI) -> AsyncIterator[None]:
            # What is loaded by now (the app, models, the spec, parameter tables: about 78,000
            # objects) lives as long as the worker; a full garbage collection walked them all
            # in about 27 ms, stalling every connection: p99 at 256 connections was 3x the
            # ceiling's. Frozen, the collector leaves them alone.
            gc.collect()
            gc.freeze()
            # Before the first request: a database store's first poll of its change counters
            # (the first lookup waits for it, at most the store timeout), so /health does not
            # answer 503 "not polled yet" while the database is up; a load balancer that saw
            # that marked a new replica down for its rise interval (~12 s with HAProxy's).
            with contextlib.suppress(StoreError):
                await reader.info()  # a database down at start: /health says so, as later
            if sandbox is not None:
                sandbox.start()
            yield
            if sandbox is not None:  # its writer ends before the store's readers, within the same bound
                try:
                    await asyncio.wait_for(sandbox.close(), close_timeout)
                except TimeoutError:
                    log.warning("the sandbox's chain writer did not stop within %g s (--store-close-timeout)",
                                close_timeout)  # fmt: skip
            close_handlers()  # the view calls' worker threads
            # a database store's pool and watcher end with the worker, within a bound: closing
            # connections to a database that stopped answering once held a SIGTERM for 70 s
            try:
                await asyncio.wait_for(reader.close(), close_timeout)
            except TimeoutError:
                log.warning("the store did not close within %g s (--store-close-timeout); leaving it", close_timeout)

        super().__init__(
            title="nearrpc", version=SERVICE_VERSION, openapi_url=None, docs_url=None, redoc_url=None, lifespan=lifespan
        )
        self.include_router(build_router(endpoint))
        self._front = jsonrpc_front(endpoint, super().__call__)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._front(scope, receive, send)


def build_app(
    reader: ServingReader,
    cors_origins: tuple[str, ...] = ("*",),
    *,
    metrics: bool = True,
    rpc_addr: str | None = None,
    answer_cache_bytes: int = DEFAULT_ANSWER_CACHE_BYTES,
    fork: Fork | None = None,
    close_timeout: float = 5.0,
    call_upstream: CallUpstream | None = None,
    call_verifier: CallVerifier | None = None,
    changes_upstream: ChangesUpstream | None = None,
    sandbox: RunningSandbox | None = None,
) -> FastAPI:
    """`metrics`: count answers and serve /metrics; `rpc_addr`: where the server listens
    (host:port), reported by /status; `answer_cache_bytes`: memory for kept answers; `fork`: the
    reader reads through to an upstream node (then `reader` is `fork`); `close_timeout`: seconds the
    worker waits at shutdown for the store to close; `call_upstream`: who answers a view call that
    cannot run here (a fork's upstream); `call_verifier`: who compares every local call answer
    (a fork's `--verify-calls`); `changes_upstream`: who answers the changes methods (a fork's
    upstream); `sandbox`: the chain the writing methods send to (`serve --sandbox`), started and
    closed with the application."""
    heads_move = fork is not None and fork.heads_move
    view_call_metrics = ViewCallMetrics(observe_view_call, observe_view_call_difference) if metrics else None
    handlers = ChainHandlers(
        reader, RuntimeParamStore.load(), rpc_addr, heads_move=heads_move, reads_through=fork is not None,
        view_call_metrics=view_call_metrics, call_upstream=call_upstream, call_verifier=call_verifier,
        changes_upstream=changes_upstream, sandbox=sandbox,
    )
    observe = observe_rpc if metrics else None
    endpoint = JsonRpcEndpoint(
        handlers, handlers.refresh, cache_bytes=answer_cache_bytes, observe=observe, heads_move=heads_move,
        reachability=reader if isinstance(reader, Reachability) else None,
    )
    app = NearRpcApp(endpoint, reader, close_timeout, handlers.close, sandbox)

    @app.exception_handler(HTTPException)
    async def bare_http_error(request: Request, error: HTTPException) -> Response:
        # nearcore's router answers an unknown path (404) or a wrong method (405) with an
        # empty body; keep the status and headers (Allow), drop Starlette's JSON detail
        headers = dict(error.headers or {})
        if error.status_code == 405:
            # Starlette names the methods of the first route of the path only; /status has two
            # (JSON-RPC POST, the status document's GET)
            headers["Allow"] = ", ".join(_allowed_methods(request.app, request.scope))
        return Response(status_code=error.status_code, headers=headers)

    store = reader if fork is None else fork.local
    fork_status = None if fork is None else fork.fork_status
    app.include_router(ops_router(store, rpc_addr=rpc_addr, metrics=metrics, fork_status=fork_status))
    add_docs_page(app)
    _add_cors(app, cors_origins)
    return app
