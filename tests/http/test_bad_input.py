"""Bad input of every kind gets the documented error, never a 500 or a stack trace."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from tests.support.rpc import Answer, call, checked, post

pytestmark = pytest.mark.live


def assert_parse_error(answer: Answer, *, request_id: Any, containing: str) -> None:
    assert answer.status == 400, answer
    checked(answer, None)
    body = answer.body
    assert body["id"] == request_id
    assert body["error"]["name"] == "REQUEST_VALIDATION_ERROR"
    assert body["error"]["cause"]["name"] == "PARSE_ERROR"
    assert body["error"]["code"] == -32700 and body["error"]["message"] == "Parse error"
    assert containing in body["error"]["cause"]["info"]["error_message"]
    assert body["error"]["data"] == body["error"]["cause"]["info"]["error_message"]


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"{",
        b"not json",
        b'{"jsonrpc":"2.0",}',
        b"\xff\xfe",
        b'{"a":NaN}',
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"genesis_config"}',
        b'{"jsonrpc":"2.0","id":1e400,"method":"genesis_config"}',
        b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"genesis_config"}',
    ],
    ids=["empty", "truncated", "text", "trailing-comma", "not-utf8", "nan", "lone-surrogate", "infinite", "bom"],
)
def test_broken_json_is_a_plain_400(http: httpx.Client, raw: bytes) -> None:
    answer = post(http, raw)
    assert answer.status == 400
    assert answer.content_type.startswith("text/plain")
    assert answer.raw.startswith(b"Failed to parse the request body as JSON")


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "block", "params": {"finality": "final"}},  # notification
        {"jsonrpc": "1.0", "id": 1, "method": "block", "params": {"finality": "final"}},
        {"id": 1, "method": "block", "params": {"finality": "final"}},
        {"jsonrpc": "2.0", "id": 1, "method": 7},
        {"jsonrpc": "2.0", "id": 1, "method": "block", "params": {"finality": "final"}, "extra": True},
        [{"jsonrpc": "2.0", "id": 1, "method": "block", "params": {"finality": "final"}}],  # batch
        [],
        "block",
        None,
        42,
    ],
)
def test_not_a_request(http: httpx.Client, message: Any) -> None:
    assert_parse_error(
        post(http, orjson.dumps(message)), request_id=None, containing="JSON RPC Request format was expected"
    )


@pytest.mark.parametrize(
    "method", ["", "no_such_method", "\u0000", "BLOCK", "network_info", "EXPERIMENTAL_light_client_proof"]
)
def test_unknown_method(http: httpx.Client, method: str) -> None:
    answer = call(http, method, {"finality": "final"}, request_id=9)
    assert answer.status == 400
    checked(answer, None)
    assert answer.body["id"] == 9
    assert answer.error["name"] == "REQUEST_VALIDATION_ERROR"
    assert answer.error["cause"] == {"name": "METHOD_NOT_FOUND", "info": {"method_name": method}}
    assert (answer.error["code"], answer.error["message"], answer.error["data"]) == (-32601, "Method not found", method)


@pytest.mark.parametrize(
    ("method", "params", "containing"),
    [
        ("block", None, "invalid type: null"),
        ("block", {}, "no variant of enum BlockReference"),
        ("block", {"block_id": "123"}, "untagged enum BlockId"),
        ("block", {"block_id": 1.5}, "untagged enum BlockId"),
        ("block", {"block_id": -1}, "untagged enum BlockId"),
        ("block", {"block_id": 18446744073709551616}, "untagged enum BlockId"),
        ("block", {"block_id": 10**40}, "untagged enum BlockId"),
        ("block", {"block_id": "ZZZZ"}, "untagged enum BlockId"),
        ("block", {"block_id": "0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl"}, "untagged enum BlockId"),
        ("block", {"finality": "latest"}, "unknown variant `latest`"),
        ("block", {"sync_checkpoint": 0}, "invalid type"),
        ("block", ["final"], "untagged enum BlockId"),
        ("block", [1, 2], "invalid length 2"),
        ("EXPERIMENTAL_protocol_config", [1], "invalid type: sequence"),
        ("EXPERIMENTAL_protocol_config", None, "invalid type: null"),
        ("EXPERIMENTAL_view_account", {"finality": "final"}, "missing field `account_id`"),
        ("EXPERIMENTAL_view_account", {"account_id": "UPPER.near", "finality": "final"}, "invalid character"),
        ("EXPERIMENTAL_view_account", {"account_id": "a", "finality": "final"}, "too short"),
        ("EXPERIMENTAL_view_account", {"account_id": "x" * 65, "finality": "final"}, "too long"),
        ("EXPERIMENTAL_view_account", {"account_id": "a..b", "finality": "final"}, "redundant separator"),
        ("EXPERIMENTAL_view_account", {"account_id": 12, "finality": "final"}, "expected a string"),
        ("EXPERIMENTAL_view_account", {"account_id": "ok.near"}, "no variant of enum BlockReference"),
    ],
)
def test_bad_params(http: httpx.Client, method: str, params: Any, containing: str) -> None:
    assert_parse_error(call(http, method, params, request_id="p"), request_id="p", containing=containing)


def test_path_and_body_disagree(http: httpx.Client) -> None:
    answer = call(http, "block", {"finality": "final"}, path="/genesis_config", request_id=3)
    assert_parse_error(answer, request_id=3, containing="endpoint of `genesis_config`")


def test_deep_nesting(http: httpx.Client) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    answer = post(http, b'{"jsonrpc":"2.0","id":1,"method":"block","params":' + deep + b"}")
    assert answer.status == 400  # refused by the JSON parser, not a crash
    moderate = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "block", "params": [[[[[[[[1]]]]]]]]})
    assert_parse_error(post(http, moderate), request_id=1, containing="untagged enum BlockId")


def test_body_over_10_mib_is_413(http: httpx.Client) -> None:
    padding = b" " * (10 * 1024 * 1024)
    answer = post(http, b'{"jsonrpc":"2.0","id":1,"method":"genesis_config"' + padding + b"}")
    assert answer.status == 413 and answer.content_type.startswith("text/plain")
    just_under = b'{"jsonrpc":"2.0","id":1,"method":"genesis_config"}'
    assert post(http, just_under + b" " * (10 * 1024 * 1024 - len(just_under))).status == 200


def test_chunked_body_over_the_limit_is_413(http: httpx.Client) -> None:
    def chunks() -> Any:
        yield b'{"jsonrpc":"2.0","id":1,"method":"genesis_config"'
        for _ in range(11):
            yield b" " * (1024 * 1024)
        yield b"}"

    response = http.post("/", content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 413


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "", "application/jsonx"])
def test_wrong_content_type_is_415(http: httpx.Client, content_type: str) -> None:
    answer = post(http, b'{"jsonrpc":"2.0","id":1,"method":"genesis_config"}', content_type=content_type)
    assert answer.status == 415 and answer.raw == b"Expected request with `Content-Type: application/json`"


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=utf-8", "application/problem+json", "APPLICATION/JSON"]
)
def test_json_content_types_are_accepted(http: httpx.Client, content_type: str) -> None:
    assert post(http, b'{"jsonrpc":"2.0","id":1,"method":"genesis_config"}', content_type=content_type).status == 200


def test_wrong_http_method_is_405(http: httpx.Client) -> None:
    for path in ("/", "/block"):
        response = http.get(path)
        assert response.status_code == 405 and "POST" in response.headers["allow"]


def test_unknown_path_is_404(http: httpx.Client) -> None:
    assert http.post("/nope", json={"jsonrpc": "2.0", "id": 1, "method": "block"}).status_code == 404


def test_router_errors_have_empty_bodies_like_nearcore(http: httpx.Client) -> None:
    wrong_method = http.get("/")
    assert (wrong_method.status_code, wrong_method.content, wrong_method.headers["allow"]) == (405, b"", "POST")
    unknown = http.post("/nope", json={})
    assert (unknown.status_code, unknown.content) == (404, b"")
