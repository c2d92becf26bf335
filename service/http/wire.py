"""The one place that turns results and errors into JSON-RPC response bytes.

Results arrive already serialized (cached bytes); the envelope is spliced around them so a
cached answer costs no JSON work. Key order follows nearcore: jsonrpc, result|error, id.
"""

from __future__ import annotations

import json

import orjson

from nearrpc.methods.errors import RpcError

NULL_ID = b"null"


class UnechoableId(ValueError):
    """An `id` nested too deeply to write back; the request is answered as unreadable."""


def encode_id(request_id: object) -> bytes:
    """The request `id`, echoed verbatim as compact JSON (UnechoableId: nested too deeply)."""
    try:
        return orjson.dumps(request_id)
    except TypeError:
        # integers beyond 64 bits, which only the stdlib parser produces, and nesting deeper
        # than orjson writes (254 levels)
        try:
            return json.dumps(request_id, separators=(",", ":"), ensure_ascii=False).encode()
        except RecursionError:
            # nearcore refuses a body nested over 128 levels as unreadable JSON (a 400)
            raise UnechoableId("JSON RPC Request format was expected: its id is nested too deeply to echo") from None


def result_body(id_json: bytes, result_json: bytes) -> bytes:
    # one join copies a block's kilobytes once; chained `+` copied them at every step
    return b"".join((b'{"jsonrpc":"2.0","result":', result_json, b',"id":', id_json, b"}"))


def error_object(error: RpcError) -> dict[str, object]:
    kind = error.kind
    cause: dict[str, object] = {"name": kind.cause}
    if kind.has_info:
        cause["info"] = error.info if error.info is not None else {}
    return {
        "name": kind.name,
        "cause": cause,
        "code": kind.code,
        "message": kind.message,
        "data": error.data,
    }


def error_body(id_json: bytes, error: RpcError) -> bytes:
    return b'{"jsonrpc":"2.0","error":' + orjson.dumps(error_object(error)) + b',"id":' + id_json + b"}"
