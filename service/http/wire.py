"""The one place that turns results and errors into JSON-RPC response bytes.

Results arrive already serialized (cached bytes); the envelope is spliced around them so a
cached answer costs no JSON work. Key order follows nearcore: jsonrpc, result|error, id.
"""

from __future__ import annotations

import json

import orjson

from nearrpc.methods.errors import RpcError

NULL_ID = b"null"


def encode_id(request_id: object) -> bytes:
    """The request `id`, echoed verbatim as compact JSON."""
    try:
        return orjson.dumps(request_id)
    except TypeError:
        # integers beyond 64 bits, which only the stdlib parser produces
        return json.dumps(request_id, separators=(",", ":"), ensure_ascii=False).encode()


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
