"""GET /openrpc.json and rpc.discover serve spec/openrpc.json; every answer of the recorded round
trips fits the OpenRPC document: results its methods' result schemas, errors their error objects."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fixtures.exchange import fixture_files, load, send, servers
from tests.openrpc.conftest import OPENRPC, method_of, result_validator, schema_validator
from tests.openrpc.conftest import load as load_json
from tests.support.live_server import LiveServer
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.live
DOCUMENT = load_json(OPENRPC)


def _rpc(http: httpx.Client, method: str, params: Any = None, path: str = "/") -> httpx.Response:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method}
    if params is not None:
        body["params"] = params
    return http.post(path, json=body)


def test_get_openrpc_json_serves_the_document(sample_server: LiveServer) -> None:
    with httpx.Client(base_url=sample_server.url, timeout=30) as http:
        answer = http.get("/openrpc.json")
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")
        assert answer.content == OPENRPC.read_bytes()
        assert http.head("/openrpc.json").status_code == 200
        assert http.post("/openrpc.json", json={}).status_code in (404, 405)


@pytest.mark.parametrize("path", ["/", "/rpc.discover"])
@pytest.mark.parametrize("params", [None, [], {}])
def test_rpc_discover_answers_the_document(sample_server: LiveServer, path: str, params: Any) -> None:
    with httpx.Client(base_url=sample_server.url, timeout=30) as http:
        answer = _rpc(http, "rpc.discover", params, path)
    assert answer.status_code == 200
    body = answer.json()
    assert body["id"] == 7 and body["jsonrpc"] == "2.0"
    assert body["result"] == DOCUMENT
    result_validator(DOCUMENT, "rpc.discover").validate(body["result"])


def test_rpc_discover_is_a_method_like_the_others(sample_server: LiveServer) -> None:
    """Through the generated dispatch: a body naming another method at its path is refused."""
    with httpx.Client(base_url=sample_server.url, timeout=30) as http:
        answer = _rpc(http, "block", {"finality": "final"}, "/rpc.discover")
    assert answer.status_code == 400
    assert answer.json()["error"]["cause"]["name"] == "PARSE_ERROR"


def _check_answer(method: str, body: Any, said: Counter[str]) -> None:
    if "result" in body:
        result_validator(DOCUMENT, method).validate(body["result"])
        said[f"{method} result"] += 1
        return
    error = body["error"]
    errors = DOCUMENT["components"]["errors"]
    objects = [errors[ref["$ref"].rsplit("/", 1)[1]] for ref in method_of(DOCUMENT, method)["errors"]]
    wanted = {"name": error["name"], "cause": {"name": error["cause"]["name"]}}
    assert any(
        (o["code"], o["message"], o["data"]) == (error["code"], error["message"], wanted) for o in objects
    ), (method, error)
    schema_validator(DOCUMENT, method_of(DOCUMENT, method)["x-error-schema"]).validate(error)
    said[f"{method} error"] += 1


def test_every_recorded_answer_fits_the_document(tmp_path: Path) -> None:
    """Every round trip of tests/fixtures replayed against live servers: each JSON-RPC answer of a
    method the document names validates against it (results against the method's result schema,
    errors against its error objects and error schema)."""
    said: Counter[str] = Counter()
    methods = {m["name"] for m in DOCUMENT["methods"]}
    with servers(tmp_path) as clients:
        for path in fixture_files():
            fixture = load(path)
            request = fixture["request"]
            answer = send(clients[fixture["store"]], request)
            request_body = request.get("body")
            if not answer.content_type.startswith("application/json") or not isinstance(request_body, dict):
                said["not JSON-RPC"] += 1
                continue
            method = request_body.get("method")
            if not isinstance(method, str) or method not in methods:
                said["no such method"] += 1
                continue
            _check_answer(method, json.loads(answer.body), said)
        facts = sample_facts()
        code = {"account_id": facts.contract_account, "finality": "final"}
        extra = [("status", None), ("gas_price", [None]), ("rpc.discover", None), ("EXPERIMENTAL_view_code", code)]
        for method, params in extra:
            _check_answer(method, _rpc(clients["sample"], method, params).json(), said)
    for method in ("genesis_config", "client_config", "block", "EXPERIMENTAL_protocol_config",
                   "EXPERIMENTAL_view_account", "status", "gas_price", "query", "rpc.discover"):  # fmt: skip
        assert said[f"{method} result"] >= 1, said
    assert said["block error"] >= 3 and sum(said.values()) >= 60, said
