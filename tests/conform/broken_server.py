"""A test server on 127.0.0.1 that answers like a NEAR node with deliberate defects.

It forwards every request (body and Content-Type as sent) to a real nearrpc server and
spoils chosen answers, each in one way `nearrpc conform` must report with its field path.
With `flaky`, it also fails three requests once each (FLAKY: 503, 429 with Retry-After: 0, a
dropped connection) and forwards their retries untouched.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from tests.support.http_stub import StubHandler, serving_stub


@dataclass(frozen=True)
class Defect:
    """One seeded defect, and where the checker must find it."""

    method: str  # the report row's method and check
    check: str
    path: str  # the violation's field path
    kind: str  # the violation's kind
    applies: Callable[[dict[str, Any], dict[str, Any]], bool]  # (request, upstream answer)
    spoil: Callable[[dict[str, Any]], tuple[int, str, bytes] | None]  # mutate in place, or replace whole


def _params(request: dict[str, Any]) -> Any:
    return request.get("params")


def _drop_header_hash(answer: dict[str, Any]) -> None:
    del answer["result"]["header"]["hash"]


def _storage_usage_as_text(answer: dict[str, Any]) -> None:
    answer["result"]["storage_usage"] = str(answer["result"]["storage_usage"])


def _threshold_out_of_range(answer: dict[str, Any]) -> None:
    answer["result"]["block_producer_kickout_threshold"] = 300  # a uint8 in the spec


def _extra_shard_layout_member(answer: dict[str, Any]) -> None:
    answer["result"]["shard_layout"]["V9"] = {}  # ShardLayout's variants forbid other members


def _renamed_cause(answer: dict[str, Any]) -> None:
    answer["error"]["cause"]["name"] = "ACCOUNT_NOT_FOUND"


def _html_page(answer: dict[str, Any]) -> tuple[int, str, bytes]:
    return 200, "text/html", b"<html><body>Service busy</body></html>"


def _ok_status(answer: dict[str, Any]) -> tuple[int, str, bytes]:
    return 200, "application/json", json.dumps(answer).encode()


def _block_by_height(request: dict[str, Any], answer: dict[str, Any]) -> bool:
    params = _params(request)
    return (request.get("method") == "block" and isinstance(params, dict)
            and isinstance(params.get("block_id"), int) and "result" in answer)  # fmt: skip


def _account_at_final(request: dict[str, Any], answer: dict[str, Any]) -> bool:
    return (request.get("method") == "EXPERIMENTAL_view_account" and "result" in answer
            and _params(request).get("finality") == "final")  # fmt: skip


def _genesis_with_empty_list(request: dict[str, Any], answer: dict[str, Any]) -> bool:
    return request.get("method") == "genesis_config" and _params(request) == []


def _protocol_config_at_final(request: dict[str, Any], answer: dict[str, Any]) -> bool:
    return request.get("method") == "EXPERIMENTAL_protocol_config" and _params(request) == {"finality": "final"}


def _cause(answer: dict[str, Any]) -> object:
    error = answer.get("error")
    cause = error.get("cause") if isinstance(error, dict) else None
    return cause.get("name") if isinstance(cause, dict) else None


def _unknown_account(request: dict[str, Any], answer: dict[str, Any]) -> bool:
    return request.get("method") == "EXPERIMENTAL_view_account" and _cause(answer) == "UNKNOWN_ACCOUNT"


def _unknown_method(request: dict[str, Any], answer: dict[str, Any]) -> bool:
    return _cause(answer) == "METHOD_NOT_FOUND"


def _client_config_with_empty_object(request: dict[str, Any], answer: dict[str, Any]) -> bool:
    return request.get("method") == "client_config" and _params(request) == {}


def _legacy_tx(request: dict[str, Any], answer: dict[str, Any]) -> bool:
    return request.get("method") == "tx" and isinstance(_params(request), list) and "result" in answer


def _with_receipts(answer: dict[str, Any]) -> None:
    answer["result"]["receipts"] = []  # EXPERIMENTAL_tx_status's shape, where `tx` has none


def _chunk_by_height(request: dict[str, Any], answer: dict[str, Any]) -> bool:
    params = _params(request)
    return (request.get("method") == "chunk" and isinstance(params, dict)
            and isinstance(params.get("block_id"), int) and "result" in answer)  # fmt: skip


def _another_shard(answer: dict[str, Any]) -> None:
    answer["result"]["header"]["shard_id"] += 1


DEFECTS = (
    Defect("block", "block_id height", "result.header.hash", "missing required", _block_by_height,
           _drop_header_hash),
    Defect("EXPERIMENTAL_view_account", "finality final", "result.storage_usage", "wrong type", _account_at_final,
           _storage_usage_as_text),
    Defect("genesis_config", "params []", "result.block_producer_kickout_threshold", "out of range",
           _genesis_with_empty_list, _threshold_out_of_range),
    Defect("EXPERIMENTAL_protocol_config", "finality final", "result.shard_layout.V9", "extra member",
           _protocol_config_at_final, _extra_shard_layout_member),
    Defect("EXPERIMENTAL_view_account", "unknown account", "error.cause.name", "bad value", _unknown_account,
           _renamed_cause),
    Defect("(endpoint)", "unknown method", "HTTP status", "breaks nearcore's rule", _unknown_method, _ok_status),
    Defect("client_config", "params {}", "body", "not JSON-RPC", _client_config_with_empty_object, _html_page),
    Defect("tx", "[hash, sender]", "result.receipts", "contradicts the request", _legacy_tx, _with_receipts),
    Defect("chunk", "{block_id height, shard_id}", "result.header.shard_id", "contradicts the request",
           _chunk_by_height, _another_shard),
)


# request number -> how its first attempt fails
FLAKY = {2: "503", 5: "429", 9: "drop"}


def _spoiled(request_body: bytes, status: int, content_type: str, body: bytes) -> tuple[int, str, bytes]:
    try:
        request, answer = json.loads(request_body), json.loads(body)
    except ValueError:
        return status, content_type, body
    if not isinstance(request, dict) or not isinstance(answer, dict):
        return status, content_type, body
    for defect in DEFECTS:
        if defect.applies(request, answer):
            replaced = defect.spoil(answer)
            return replaced if replaced is not None else (status, content_type, json.dumps(answer).encode())
    return status, content_type, body


@contextmanager
def broken_server(upstream: str, *, defects: bool = True, flaky: bool = False) -> Iterator[str]:
    client = httpx.Client(timeout=30)
    lock = threading.Lock()
    counter = {"requests": 0}

    class Handler(StubHandler):
        def do_POST(self) -> None:
            body = self.body()
            with lock:
                counter["requests"] += 1
                number = counter["requests"]
            failure = FLAKY.get(number) if flaky else None
            if failure == "503":
                self.answer(503, b"upstream busy", "text/plain")
                return
            if failure == "429":
                self.answer(429, b"slow down", "text/plain", {"Retry-After": "0"})
                return
            if failure == "drop":
                self.drop()
                return
            forwarded = client.post(
                upstream, content=body, headers={"Content-Type": self.headers.get("Content-Type", "")}
            )
            status, content_type, content = (
                forwarded.status_code, forwarded.headers.get("content-type", ""), forwarded.content
            )
            if defects:
                status, content_type, content = _spoiled(body, status, content_type, content)
            self.answer(status, content, content_type)

    try:
        with serving_stub(Handler) as url:
            yield url
    finally:
        client.close()
