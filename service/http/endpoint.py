"""The generic JSON-RPC adapter behind every generated route: HTTP in, HTTP out.

Order of checks follows nearcore's server: body size (413), content type (415), JSON syntax
(400, plain text), request shape (400 parse error, id null), method (400), params (400), then
the handler. A JSON-RPC error answers with the HTTP status its RpcError carries (the error
catalogue decides it). No stack trace ever reaches the client.

Every answer is counted once where it is produced (`observe`, by default the Prometheus
counters of `nearrpc.http.metrics`). Every INTERNAL_ERROR is logged once, with its cause and a
request id made for it; the answer carries that id in an `X-Request-Id` header, never a trace.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Callable
from typing import Final, TypeAlias

import orjson
from starlette.requests import Request
from starlette.responses import Response

from nearrpc.generated.handlers import RpcHandlers
from nearrpc.generated.methods import METHODS, MethodSpec
from nearrpc.http import wire
from nearrpc.http.envelope import read_request
from nearrpc.http.params import typed_params
from nearrpc.methods.errors import Cause, RpcError, internal_error, method_not_found, parse_error

log = logging.getLogger("nearrpc.endpoint")

# observe(method or None, error cause or None, HTTP status, seconds): one call per answer
Observer: TypeAlias = Callable[[str | None, str | None, int, float], None]
# an answer, and what it is counted as: the method asked for (None: no request read) and the
# error cause (None: a result or a plain-text refusal)
_Answer: TypeAlias = tuple[Response, str | None, str | None]

MAX_BODY_BYTES: Final = 10 * 1024 * 1024  # nearcore's default json_payload_max_size
# nearcore serves this older name too
METHOD_ALIASES: Final = {"EXPERIMENTAL_genesis_config": "genesis_config"}

_JSON: Final = "application/json"
_TEXT: Final = "text/plain; charset=utf-8"


def _plain(status: int, text: str) -> Response:
    return Response(text, status_code=status, media_type=_TEXT)


def is_json_content_type(value: str | None) -> bool:
    if not value:
        return False
    media = value.split(";", 1)[0].strip().lower()
    return media == _JSON or (media.startswith("application/") and media.endswith("+json"))


class BodyTooLarge(Exception):
    pass


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refusing to buffer more than `limit` bytes (a declared length is checked earlier)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge()
        chunks.append(chunk)
    return b"".join(chunks)


def parse_json(body: bytes) -> object:
    """Parse a request body as strictly as nearcore's parser does, keeping integers exact.

    orjson judges the syntax: like serde_json it refuses lone surrogate escapes, NaN, a byte
    order mark and numbers out of range. It turns integers beyond 64 bits into floats, though,
    so the values come from the stdlib parser, which keeps them exact (an `id` is echoed as
    sent). Request bodies are small; parsing twice costs a few microseconds.
    """
    try:
        orjson.loads(body)
        return json.loads(body)
    except orjson.JSONDecodeError as error:
        raise ValueError(str(error)) from None
    except RecursionError:
        raise ValueError("recursion limit exceeded") from None


def _no_observer(method: str | None, cause: str | None, status: int, seconds: float) -> None:
    pass


class JsonRpcEndpoint:
    def __init__(
        self, handlers: RpcHandlers, max_body_bytes: int = MAX_BODY_BYTES, observe: Observer | None = None
    ) -> None:
        self._handlers = handlers
        self._max_body_bytes = max_body_bytes
        self._observe = observe or _no_observer

    async def __call__(self, request: Request, path_method: str | None) -> Response:
        started = time.perf_counter()
        response, method, cause = await self._respond(request, path_method)
        self._observe(method, cause, response.status_code, time.perf_counter() - started)
        return response

    async def _respond(self, request: Request, path_method: str | None) -> _Answer:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self._max_body_bytes:
            return _plain(413, "Failed to buffer the request body: length limit exceeded"), None, None
        if not is_json_content_type(request.headers.get("content-type")):
            return _plain(415, "Expected request with `Content-Type: application/json`"), None, None
        try:
            body = await read_body(request, self._max_body_bytes)
        except BodyTooLarge:
            return _plain(413, "Failed to buffer the request body: length limit exceeded"), None, None
        try:
            message = parse_json(body)
        except ValueError as exc:
            return _plain(400, f"Failed to parse the request body as JSON: {exc}"), None, None
        try:
            return self.answer(message, path_method)
        except Exception as exc:
            # answer() turns every handler failure into JSON-RPC already; this is the last guard
            error = internal_error("Unexpected internal failure")
            return self._error(wire.NULL_ID, error, None, None, failure=exc), None, error.kind.cause

    def answer(self, message: object, path_method: str | None) -> _Answer:
        """The response to one parsed JSON body, with the method and cause it is counted as."""
        try:
            rpc = read_request(message)
        except RpcError as error:
            return self._error(wire.NULL_ID, error, None, None), None, error.kind.cause
        id_json = wire.encode_id(rpc.request_id)
        name = METHOD_ALIASES.get(rpc.method, rpc.method)
        try:
            method = self._method(rpc.method, path_method)
            result = getattr(self._handlers, method.name)(typed_params(method, rpc.params))
        except RpcError as error:
            return self._error(id_json, error, rpc.params, name), name, error.kind.cause
        except Exception as exc:
            internal = internal_error("Unexpected internal failure")
            return self._error(id_json, internal, rpc.params, name, failure=exc), name, internal.kind.cause
        return Response(wire.result_body(id_json, result), media_type=_JSON), name, None

    def _method(self, name: str, path_method: str | None) -> MethodSpec:
        method = METHODS.get(METHOD_ALIASES.get(name, name))
        if method is None:
            raise method_not_found(name)
        if path_method is not None and method.name != path_method:
            raise parse_error(f"Method `{name}` was sent to the endpoint of `{path_method}`; use POST / or /{name}")
        return method

    @staticmethod
    def _error(
        id_json: bytes, error: RpcError, params: object, method: str | None, *, failure: Exception | None = None
    ) -> Response:
        status = error.http_status(params)
        response = Response(wire.error_body(id_json, error), status_code=status, media_type=_JSON)
        if error.kind.cause is Cause.INTERNAL_ERROR:
            response.headers["X-Request-Id"] = _log_internal_error(error, method, failure)
        return response


def _log_internal_error(error: RpcError, method: str | None, failure: Exception | None) -> str:
    """Log an INTERNAL_ERROR answer once (with the traceback of an unexpected failure); its id."""
    request_id = secrets.token_hex(8)
    reason = (error.info or {}).get("error_message", error.data)
    cause = str(reason) if failure is None else f"{type(failure).__name__}: {failure}"
    log.error(
        "INTERNAL_ERROR request_id=%s method=%s: %s", request_id, method or "-", cause,
        exc_info=failure, extra={"request_id": request_id, "rpc_method": method, "cause": cause},
    )
    return request_id
