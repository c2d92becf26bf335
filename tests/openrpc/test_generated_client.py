"""A TypeScript client generated from spec/openrpc.json by @open-rpc/generator, compiled by tsc
--strict, calls a running server; what it answers validates against the document and equals
what the server answers a plain JSON-RPC request."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.openrpc.conftest import HERE, OPENRPC, load, result_validator
from tests.support.live_server import LiveServer
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.live
TSC_FLAGS = ["--strict", "--target", "es2020", "--module", "commonjs", "--esModuleInterop", "--skipLibCheck"]


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


def _as_js(value: Any) -> Any:
    """`value` as JavaScript reads it: integers past 2^53 (a block's `timestamp`) become doubles."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and abs(value) > 2**53:
        return float(value)
    if isinstance(value, list):
        return [_as_js(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_js(item) for key, item in value.items()}
    return value


@pytest.fixture(scope="module")
def client_build(node_modules: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated client and ts/call.ts, compiled to JavaScript."""
    work = tmp_path_factory.mktemp("openrpc-client")
    document = load(OPENRPC)
    # JSON-RPC 2.0 reserves rpc.* names for rpc-internal methods; the generator writes
    # `public rpc.discover = ...`, which is not TypeScript. call.ts calls it through the
    # client's JSON-RPC client instead.
    reserved = [m["name"] for m in document["methods"] if m["name"].startswith("rpc.")]
    assert reserved == ["rpc.discover"]
    document["methods"] = [m for m in document["methods"] if m["name"] not in reserved]
    (work / "openrpc.json").write_text(json.dumps(document), encoding="utf-8")
    generator = node_modules / ".bin" / "open-rpc-generator"
    generated = _run([str(generator), "generate", "-t", "client", "-l", "typescript", "-n", "nearrpc",
                      "-d", str(work / "openrpc.json"), "-o", str(work / "out")], cwd=work)  # fmt: skip
    assert generated.returncode == 0 and "Done!" in generated.stdout, generated.stdout + generated.stderr
    shutil.copyfile(work / "out" / "client" / "typescript" / "src" / "index.ts", work / "client.ts")
    shutil.copyfile(HERE / "ts" / "call.ts", work / "call.ts")
    (work / "node_modules").symlink_to(node_modules)
    compiled = _run([str(node_modules / ".bin" / "tsc"), *TSC_FLAGS, "--outDir", "build", "client.ts", "call.ts"], work)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    return work / "build"


def test_generated_client_calls_the_server(client_build: Path, sample_server: LiveServer) -> None:
    facts = sample_facts()
    where = urlsplit(sample_server.url)
    ran = _run(["node", "call.js", str(where.hostname), str(where.port), facts.contract_account,
                str(facts.final_height)], cwd=client_build)  # fmt: skip
    assert ran.returncode == 0 and ran.stderr == "", ran.stdout + ran.stderr
    answers: dict[str, dict[str, Any]] = {}
    for line in ran.stdout.splitlines():
        answer = json.loads(line)
        answers[answer.pop("call")] = answer
    document = load(OPENRPC)
    plain = {
        "genesis_config": None, "client_config": None, "EXPERIMENTAL_protocol_config": {"finality": "final"},
        "block": [facts.final_height], "status": None, "gas_price": [None],
        "EXPERIMENTAL_view_account": {"account_id": facts.contract_account, "finality": "final"},
        "EXPERIMENTAL_view_code": {"account_id": facts.contract_account, "block_id": facts.final_height},
        "EXPERIMENTAL_view_access_key_list": {"account_id": facts.contract_account, "finality": "final"},
        "query": {"request_type": "view_account", "account_id": facts.contract_account, "finality": "final"},
        "rpc.discover": None,
    }  # fmt: skip
    with httpx.Client(base_url=sample_server.url, timeout=30) as http:
        for method, params in plain.items():
            assert "result" in answers[method], (method, answers[method])
            result_validator(document, method).validate(answers[method]["result"])
            body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
            if params is not None:
                body["params"] = params
            expected = http.post("/", json=body).json()["result"]
            if method == "status":  # uptime moves on between the two requests
                expected.pop("uptime_sec"), answers[method]["result"].pop("uptime_sec")
            assert _as_js(answers[method]["result"]) == _as_js(expected), method
    # a handler error reaches the client as a JSON-RPC error with nearcore's legacy members
    assert answers["block.unknown"] == {"error": {"code": -32000, "message": "Server error",
                                                  "data": answers["block.unknown"]["error"]["data"]}}  # fmt: skip
    assert "DB Not Found Error" in answers["block.unknown"]["error"]["data"]
