"""Recognise a JSON-RPC 2.0 request the way nearcore does.

nearcore tries, in order: a request, a response, a notification, a batch, anything else; only
the first is served. So a request must be an object of exactly `jsonrpc` ("2.0"), `method`
(a string), `id` (any JSON value, `null` included) and optionally `params`; everything else
(no `id`, extra members, arrays, scalars) is one parse error with `id` null.
"""

from __future__ import annotations

from dataclasses import dataclass

from nearrpc.methods.errors import RpcError, parse_error

_MEMBERS = frozenset({"jsonrpc", "method", "params", "id"})
_PARAMS_ABSENT: object = None


@dataclass(slots=True)  # not frozen: made once per request and only read (a frozen one costs 3 object.__setattr__)
class JsonRpcRequest:
    method: str
    params: object  # None when absent, as nearcore defaults it
    request_id: object


def not_a_request() -> RpcError:
    return parse_error("JSON RPC Request format was expected")


def read_request(message: object) -> JsonRpcRequest:
    if not isinstance(message, dict) or "id" not in message or not _MEMBERS.issuperset(message):
        raise not_a_request()
    if message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        raise not_a_request()
    return JsonRpcRequest(message["method"], message.get("params", _PARAMS_ABSENT), message["id"])
