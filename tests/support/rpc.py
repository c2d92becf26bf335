"""Small helpers for talking JSON-RPC to the live server and checking answers against the spec."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from nearrpc.generated.methods import METHODS
from nearrpc.spec import validate_component


@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    raw: bytes

    @property
    def body(self) -> Any:
        return orjson.loads(self.raw)

    @property
    def result(self) -> Any:
        return self.body["result"]

    @property
    def error(self) -> Any:
        return self.body["error"]


def call(
    http: httpx.Client,
    method: str,
    params: Any = None,
    *,
    path: str = "/",
    request_id: Any = "t",
    omit_params: bool = False,
) -> Answer:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if not omit_params:
        body["params"] = params
    # the stdlib encoder, so ids and heights beyond 64 bits can be sent too
    return post(http, json.dumps(body, separators=(",", ":")).encode(), path=path)


def post(http: httpx.Client, raw: bytes, *, path: str = "/", content_type: str = "application/json") -> Answer:
    response = http.post(path, content=raw, headers={"content-type": content_type})
    return Answer(response.status_code, response.headers.get("content-type", ""), response.content)


def checked(answer: Answer, method: str | None) -> Answer:
    """Validate a JSON answer against the spec: the method's response schema (or any for POST /)."""
    assert answer.content_type.startswith("application/json"), answer
    validate_component(METHODS[method].response_schema if method else "JsonRpcResponse", answer.body)
    return answer
