"""What the README, docs/IMPORTING.md and `--help` say a user will see is what a user sees
(issue 33: an example hash that answered UNKNOWN_BLOCK, a schema version two behind, a help
text that left out access keys, a /status said to omit what it has)."""

from __future__ import annotations

import re

import httpx
import pytest

from nearrpc.store import SCHEMA_VERSION
from tests.support.cli import REPO, nearrpc

pytestmark = pytest.mark.live

README = (REPO / "README.md").read_text(encoding="utf-8")
_RPC_LINE = re.compile(r"^rpc '(\{.*\})'$", re.MULTILINE)


def test_every_readme_request_by_hash_finds_its_block(http: httpx.Client) -> None:
    by_hash = [body for body in _RPC_LINE.findall(README) if re.search(r'"block_id":"\w{43,44}"', body)]
    assert by_hash, "the README shows a request by hash"
    for body in by_hash:
        answer = http.post("/", content=body, headers={"content-type": "application/json"}).json()
        assert "result" in answer, (body, answer)
        assert answer["result"]["header"]["hash"] in body


def test_the_readme_says_what_status_and_client_config_report(http: httpx.Client) -> None:
    status = http.get("/status").json()
    config = http.post("/", json={"jsonrpc": "2.0", "id": 1, "method": "client_config"}).json()["result"]
    assert status["validators"] and "(`validators`" not in README  # it has them: not "left out"
    said = " ".join(README.split())
    assert f'"version": "{status["version"]["version"]}", "build": "{status["version"]["build"]}"' in said
    assert f"nearcore {config['version']['version']}" in said


def test_importing_names_this_builds_schema_version() -> None:
    text = " ".join((REPO / "docs" / "IMPORTING.md").read_text(encoding="utf-8").split())
    assert f"this build writes and reads version {SCHEMA_VERSION}" in text


def test_import_genesis_help_names_every_record_kind_it_keeps() -> None:
    text = " ".join(nearrpc("import", "genesis", "--help", timeout=60).stdout.split())
    for kind in ("Account record", "AccessKey record", "Contract record", "Data record"):
        assert kind in text, kind


def test_the_readme_names_the_reference_data_variable_beside_the_test_command() -> None:
    check = README.index("./check --all\n```")
    assert "NEARRPC_REFERENCE_DIR" in README[check : check + 1200]


def test_the_readme_names_the_method_labels_metrics_use(http: httpx.Client) -> None:
    """An extension method is counted under its own name, so the README's metrics table must
    not say the label is one of the interface's five methods."""
    http.post("/", json={"jsonrpc": "2.0", "id": 1, "method": "gas_price", "params": [None]})
    assert re.search(r'^nearrpc_rpc_requests_total\{[^}]*method="gas_price"', http.get("/metrics").text, re.MULTILINE)
    (row,) = [line for line in README.splitlines() if line.startswith("| `nearrpc_rpc_requests_total")]
    assert "one of the five" not in row and "extension" in row, row


def test_serve_help_names_every_method_the_server_answers() -> None:
    """Issue 43: the description named the first methods only (no chunk, tx, validators, changes);
    it names every method of the dispatch table, the interface's apart from those beyond it."""
    from nearrpc.generated.methods import METHODS

    text = " ".join(nearrpc("serve", "--help", timeout=60).stdout.split())
    described = text[text.index("Serve ") : text.index("Options fall back")]
    named = set(re.findall(r"[\w.]+", described))
    assert set(METHODS) <= named, sorted(set(METHODS) - named)
    beyond = described.index("beyond it")
    assert described.index("block") < beyond < described.index("EXPERIMENTAL_changes_in_block")
