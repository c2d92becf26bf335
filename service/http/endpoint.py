"""The generic JSON-RPC adapter behind every generated route, as a raw ASGI endpoint.

Order of checks follows nearcore's server: body size (413), content type (415), JSON syntax
(400, plain text), request shape (400 parse error, id null), method (400), params (400), then
the handler. A JSON-RPC error answers with the HTTP status its RpcError carries (the error
catalogue decides it). No stack trace ever reaches the client.

Answers are kept (methods.answers) by method and params, until the store changes what they
were computed from; the store's change counters are read before every request, so a running
server answers from what an import has committed.

Every answer is counted once where it is produced (`observe`, the Prometheus counters of
`nearrpc.http.metrics` in a server). Every INTERNAL_ERROR is logged once, with its cause and a
request id made for it; the answer carries that id in an `X-Request-Id` header, never a trace.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, TypeAlias

import orjson
from starlette.types import Message, Receive, Scope, Send

from nearrpc.generated.handlers import RpcHandlers
from nearrpc.generated.methods import METHODS, MethodSpec
from nearrpc.http import wire
from nearrpc.http.envelope import read_request
from nearrpc.methods.answers import BY_ID, FOLLOW_THE_HEAD, Answer, AnswerCache, depends_on
from nearrpc.methods.blocks import reference_of
from nearrpc.methods.errors import Cause, RpcError, internal_error, method_not_found, parse_error
from nearrpc.methods.params.parse import typed_params
from nearrpc.nearcore.echo import MESSAGE_CHARS, shown
from nearrpc.store import Reachability

log = logging.getLogger("nearrpc.endpoint")

# observe(method or None, error cause or None, HTTP status, seconds): one call per answer
Observer: TypeAlias = Callable[[str | None, str | None, int, float], None]

MAX_BODY_BYTES: Final = 10 * 1024 * 1024  # nearcore's default json_payload_max_size
# nearcore serves this older name too
METHOD_ALIASES: Final = {"EXPERIMENTAL_genesis_config": "genesis_config"}

_JSON: Final = b"application/json"
_TEXT: Final = b"text/plain; charset=utf-8"
_TOO_LARGE: Final = b"Failed to buffer the request body: length limit exceeded"
_NOT_JSON: Final = b"Expected request with `Content-Type: application/json`"
# An integer literal orjson may not hold exactly: it reads integers beyond 64 bits as floats.
_LONG_INTEGER: Final = re.compile(rb"\d{19}")


@dataclass(slots=True)  # not frozen: a frozen dataclass sets each field through object.__setattr__ (0.46 -> 0.1 us)
class Reply:
    """An answer, and what it is counted as: the method asked for (None: no request could be
    read) and the error cause (None: a result, or a plain-text refusal). Made once per request
    and only read after."""

    status: int
    content_type: bytes
    body: bytes
    method: str | None = None
    cause: str | None = None
    request_id: bytes | None = None  # set on INTERNAL_ERROR answers, which are logged


def is_json_content_type(value: bytes | None) -> bool:
    if not value:
        return False
    media = value.split(b";", 1)[0].strip().lower()
    return media == _JSON or (media.startswith(b"application/") and media.endswith(b"+json"))


def parse_json(body: bytes) -> object:
    """Parse a request body as strictly as nearcore's parser does, keeping integers exact.

    orjson judges the syntax: like serde_json it refuses lone surrogate escapes, NaN, a byte
    order mark and numbers out of range. It reads integers beyond 64 bits as floats, though,
    so a body with a long digit run is read again by the stdlib parser, which keeps them exact
    (an `id` is echoed as sent).
    """
    try:
        value = orjson.loads(body)
        return json.loads(body) if _LONG_INTEGER.search(body) else value
    except orjson.JSONDecodeError as error:
        raise ValueError(str(error)) from None
    except RecursionError:
        raise ValueError("recursion limit exceeded") from None


class _BodyTooLarge(Exception):
    pass


class _Disconnected(Exception):
    pass


async def _read_body(receive: Receive, limit: int) -> bytes:
    """The body, refusing to buffer more than `limit` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected()
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _BodyTooLarge()
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _params_key(method: MethodSpec, params: object) -> bytes | None:
    """The cache key of a params value (None: not cacheable); member order matters to
    nearcore (the first reference member wins), and JSON keeps it."""
    if not method.params_members and not method.accepts_positional:
        return b""  # ignored by the method
    try:
        # a copy: orjson's own bytes keep its 4 KiB output buffer, 40 times a key's size
        return bytes(memoryview(orjson.dumps(params)))
    except TypeError:  # integers beyond 64 bits: a parse error, not worth keeping
        return None


class _Reachable:
    """A store that is always there (a file): nothing to say."""

    unreachable: str | None = None


_ALWAYS_REACHABLE: Final = _Reachable()


class JsonRpcEndpoint:
    """`await endpoint(scope, receive, send, path_method)`; path_method is None for POST /."""

    def __init__(
        self,
        handlers: RpcHandlers,
        refresh: Callable[[], frozenset[str]],
        *,
        cache_bytes: int,
        observe: Observer | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
        heads_move: bool = False,
        reachability: Reachability | None = None,
    ) -> None:
        """`heads_move`: finality and `earliest_available` name other blocks from one request to
        the next with no write here (a fork that follows its upstream); their answers are not kept.
        `reachability`: a store on a database server, which says when it cannot be reached."""
        self._handlers = handlers
        self._reachability = reachability if reachability is not None else _ALWAYS_REACHABLE
        self._heads_move = heads_move
        self._refresh = refresh
        self._answers = AnswerCache(cache_bytes)
        self._observe = observe
        self._max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send, path_method: str | None) -> None:
        started = time.perf_counter()
        try:
            reply = await self._reply(scope, receive, path_method)
        except _Disconnected:
            return
        headers = [(b"content-length", b"%d" % len(reply.body)), (b"content-type", reply.content_type)]
        if reply.request_id is not None:
            headers.append((b"x-request-id", reply.request_id))
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        await send({"type": "http.response.body", "body": reply.body})
        if self._observe is not None:
            self._observe(reply.method, reply.cause, reply.status, time.perf_counter() - started)

    async def _reply(self, scope: Scope, receive: Receive, path_method: str | None) -> Reply:
        declared = content_type = None
        for name, value in scope["headers"]:
            if name == b"content-length" and declared is None:
                declared = value
            elif name == b"content-type" and content_type is None:
                content_type = value
        if declared is not None and declared.isdigit() and int(declared) > self._max_body_bytes:
            return Reply(413, _TEXT, _TOO_LARGE)
        if not is_json_content_type(content_type):
            return Reply(415, _TEXT, _NOT_JSON)
        try:
            body = await _read_body(receive, self._max_body_bytes)
        except _BodyTooLarge:
            return Reply(413, _TEXT, _TOO_LARGE)
        try:
            message = parse_json(body)
        except ValueError as exc:
            return Reply(400, _TEXT, f"Failed to parse the request body as JSON: {exc}".encode())
        try:
            return await self.answer(message, path_method)
        except Exception as exc:
            # answer() turns every handler failure into JSON-RPC already; this is the last guard
            return self._error(wire.NULL_ID, internal_error("Unexpected internal failure"), None, None, exc)

    async def answer(self, message: object, path_method: str | None) -> Reply:
        """The reply to one parsed JSON body."""
        try:
            rpc = read_request(message)
        except RpcError as error:
            return self._error(wire.NULL_ID, error, None, None)
        try:
            id_json = wire.encode_id(rpc.request_id)
        except wire.UnechoableId as error:
            return self._error(wire.NULL_ID, parse_error(str(error)), None, None)
        name = METHOD_ALIASES.get(rpc.method, rpc.method)
        try:
            method = self._method(rpc.method, path_method)
        except RpcError as error:
            return self._error(id_json, error, rpc.params, name)
        unreachable = self._reachability.unreachable
        if unreachable is not None:
            # docs/DEPLOYMENT.md: while the database is gone every request answers INTERNAL_ERROR
            # at once (as /health answers 503), a kept answer too; the kept ones serve again when
            # it is back (the store's version says whether they still hold)
            return self._error(id_json, internal_error(unreachable), rpc.params, name)
        self._answers.forget(self._refresh())
        key = _params_key(method, rpc.params)
        answer = None if key is None else self._answers.get((method.name, key))
        failure = None
        if answer is None:
            answer, failure = await self._compute(method, rpc.params, key)
        if isinstance(answer, RpcError):
            return self._error(id_json, answer, rpc.params, name, failure)
        return Reply(200, _JSON, wire.result_body(id_json, answer), name)

    async def _compute(self, method: MethodSpec, params: object, key: bytes | None) -> tuple[Answer, Exception | None]:
        """The answer, and the unexpected failure behind an INTERNAL_ERROR (for the log)."""
        reference = None
        answer: Answer
        try:
            typed = typed_params(method, params)
            reference = reference_of(typed) if method.takes_block_reference and method.name not in BY_ID else None
            answer = await getattr(self._handlers, method.identifier)(typed)
        except RpcError as error:
            answer = error
        except Exception as exc:
            return internal_error("Unexpected internal failure"), exc
        kinds = depends_on(method.name, reference, answer)
        if self._heads_move and reference is not None and reference.kind != "block_id" and reference.value != "genesis":
            kinds = None
        if self._heads_move and method.name in FOLLOW_THE_HEAD:
            kinds = None
        if key is not None and kinds is not None:
            self._answers.put((method.name, key), answer, kinds)
        return answer, None

    def _method(self, name: str, path_method: str | None) -> MethodSpec:
        method = METHODS.get(METHOD_ALIASES.get(name, name))
        if method is None:
            raise method_not_found(name)
        if path_method is not None and method.name != path_method:
            raise parse_error(f"Method `{name}` was sent to the endpoint of `{path_method}`; use POST / or /{name}")
        return method

    @staticmethod
    def _error(
        id_json: bytes, error: RpcError, params: object, method: str | None, failure: Exception | None = None
    ) -> Reply:
        request_id = _log_internal_error(error, method, failure) if error.kind.cause is Cause.INTERNAL_ERROR else None
        return Reply(
            error.http_status(params), _JSON, wire.error_body(id_json, error), method, error.kind.cause, request_id
        )


def _log_internal_error(error: RpcError, method: str | None, failure: Exception | None) -> bytes:
    """Log an INTERNAL_ERROR answer once (with the traceback of an unexpected failure); its id."""
    request_id = secrets.token_hex(8)
    reason = (error.info or {}).get("error_message", error.data)
    cause = shown(str(reason) if failure is None else f"{type(failure).__name__}: {failure}", MESSAGE_CHARS)
    log.error(
        "INTERNAL_ERROR request_id=%s method=%s: %s",
        request_id,
        method or "-",
        cause,
        exc_info=failure,
        extra={"request_id": request_id, "rpc_method": method, "cause": cause},
    )
    return request_id.encode()
