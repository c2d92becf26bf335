"""The error catalogue: every entry renders in nearcore's shape and matches the spec."""

from __future__ import annotations

import orjson
import pytest

from generated.methods import METHODS
from service import wire
from service.errors import CATALOGUE, METHOD_CAUSES, RpcError, internal_error, method_not_found, parse_error
from service.schema import validate_component

HASH = "4reLvkAWfqk5fsqio1KLudk46cqRz9erQdaHkWZKMJDZ"

# One realistic instance of every cause, with the info nearcore sends for it.
EXAMPLES: dict[str, RpcError] = {
    "PARSE_ERROR": parse_error("Failed parsing args: missing field `account_id`"),
    "METHOD_NOT_FOUND": method_not_found("no_such_method"),
    "UNKNOWN_BLOCK": RpcError("UNKNOWN_BLOCK", {}, "DB Not Found Error: BLOCK HEIGHT: 5 \n Cause: Unknown"),
    "NOT_SYNCED_YET": RpcError("NOT_SYNCED_YET", None, "There are no fully synchronized blocks yet"),
    "UNKNOWN_ACCOUNT": RpcError(
        "UNKNOWN_ACCOUNT",
        {"requested_account_id": "x.near", "block_height": 5, "block_hash": HASH},
        "account x.near does not exist while viewing",
    ),
    "INVALID_ACCOUNT": RpcError(
        "INVALID_ACCOUNT",
        {"requested_account_id": "x.near", "block_height": 5, "block_hash": HASH},
        "Account ID x.near is invalid",
    ),
    "INTERNAL_ERROR": internal_error(
        "disk on fire", "The node reached its limits. Try again later. More details: disk on fire"
    ),
}

EXPECTED = {  # (top-level name, code, message, HTTP status)
    "PARSE_ERROR": ("REQUEST_VALIDATION_ERROR", -32700, "Parse error", 400),
    "METHOD_NOT_FOUND": ("REQUEST_VALIDATION_ERROR", -32601, "Method not found", 400),
    "UNKNOWN_BLOCK": ("HANDLER_ERROR", -32000, "Server error", 200),
    "NOT_SYNCED_YET": ("HANDLER_ERROR", -32000, "Server error", 200),
    "UNKNOWN_ACCOUNT": ("HANDLER_ERROR", -32000, "Server error", 200),
    "INVALID_ACCOUNT": ("HANDLER_ERROR", -32000, "Server error", 200),
    "INTERNAL_ERROR": ("INTERNAL_ERROR", -32000, "Server error", 500),
}


def test_every_cause_has_an_example_and_an_expectation() -> None:
    assert set(CATALOGUE) == set(EXAMPLES) == set(EXPECTED)


@pytest.mark.parametrize("cause", sorted(CATALOGUE))
def test_entry_renders_in_nearcores_shape(cause: str) -> None:
    error = EXAMPLES[cause]
    body = orjson.loads(wire.error_body(b'"req-1"', error))
    assert list(body) == ["jsonrpc", "error", "id"] and body["id"] == "req-1"
    rendered = body["error"]
    assert list(rendered) == ["name", "cause", "code", "message", "data"]
    name, code, message, status = EXPECTED[cause]
    assert (rendered["name"], rendered["code"], rendered["message"], error.kind.http_status) == (
        name,
        code,
        message,
        status,
    )
    assert rendered["cause"]["name"] == cause
    assert rendered["data"] == error.data
    if cause == "NOT_SYNCED_YET":
        assert "info" not in rendered["cause"]  # a unit variant
    else:
        assert rendered["cause"]["info"] == error.info


@pytest.mark.parametrize(
    ("method", "cause"),
    [(m, c) for m in METHODS for c in ("PARSE_ERROR", "METHOD_NOT_FOUND", *METHOD_CAUSES[m])],
)
def test_each_methods_errors_match_its_response_schema(method: str, cause: str) -> None:
    error = EXAMPLES[cause]
    if (method, cause) == ("EXPERIMENTAL_view_account", "UNKNOWN_BLOCK"):
        # view_account echoes the reference; block and protocol_config send an empty info
        error = RpcError("UNKNOWN_BLOCK", {"block_reference": {"block_id": 5}}, "Block either has never been observed")
    body = orjson.loads(wire.error_body(b"7", error))
    validate_component(METHODS[method].response_schema, body)
    validate_component("JsonRpcResponse", body)


@pytest.mark.parametrize("request_id", ["s", 0, -1.5, None, {"k": [True]}, 2**80])
def test_ids_are_echoed_verbatim(request_id: object) -> None:
    body = wire.result_body(wire.encode_id(request_id), b"{}")
    assert orjson.loads(body)["id"] == request_id if request_id != 2**80 else body.endswith(b',"id":%d}' % 2**80)
