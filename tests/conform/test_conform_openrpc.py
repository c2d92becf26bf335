"""`nearrpc conform --spec FILE`: the interface read from an OpenRPC document, this project's
spec/openrpc.json or nearcore's own openrpc.json, against a live sample-chain server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conform.test_conform_cli import BAD_REQUESTS, FAST, FORMS, conform_json, rows
from tests.conftest import REPO
from tests.support.cli import nearrpc
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.live
NEARCORE_OPENRPC = Path("upstream") / "nearcore-openrpc-2026-03-18.json"
# where interface 1.2.14 (what this service answers) departs from nearcore's 2026-03 document:
# the seat fields and storage_get_mode it drops, the client config members it drops or spells
# as durations, and members of the 2026-03 document no 1.2.14 answer has
DEPARTURES_1_2_14 = {
    "result.num_block_producer_seats_per_shard", "result.avg_hidden_validator_seats_per_shard",
    "result.runtime_config.wasm_config.storage_get_mode",
    "result.runtime_config.wasm_config.deterministic_account_ids",
    "result.runtime_config.wasm_config.eth_implicit_global_contract",
    "result.log_summary_style", "result.protocol_version_check", "result.block_fetch_horizon",
    "result.state_sync_enabled", "result.block_production_tracking_delay", "result.chunk_wait_mult",
    "result.doomslug_step_period", "result.max_block_production_delay", "result.max_block_wait_delay",
    "result.min_block_production_delay",
}  # fmt: skip


def test_this_service_conforms_to_its_own_openrpc_document(server: LiveServer) -> None:
    code, report = conform_json(server.url, *FAST, "--account", "counter.localnet", "--spec",
                                str(REPO / "spec" / "openrpc.json"))  # fmt: skip
    assert code == 0, json.dumps(report, indent=1)[:3000]
    assert report["spec"] == "openrpc.json" and report["interface_version"] == "1.2.14"
    assert set(rows(report)) == FORMS | BAD_REQUESTS  # every check runs, as with spec/openapi.json
    # validators by the final block's height: VALIDATOR_INFO_UNAVAILABLE (a note) unless it ends its epoch
    by_block = ("validators", "{block_id} final height")
    assert {row["outcome"] for key, row in rows(report).items() if key != by_block} == {"pass"}
    assert rows(report)[by_block]["outcome"] in ("pass", "note")
    held = "openrpc.json is OpenRPC 1.3.2: every answer is held to its methods' result schemas"
    assert report["spec_notes"] == [held]


def test_nearcore_s_own_openrpc_document_finds_exactly_where_1_2_14_departs_from_it(
    server: LiveServer, reference: Path
) -> None:
    code, report = conform_json(server.url, *FAST, "--account", "counter.localnet", "--spec",
                                str(reference / NEARCORE_OPENRPC))  # fmt: skip
    assert code == 1 and report["spec"] == "nearcore-openrpc-2026-03-18.json"
    assert set(rows(report)) == FORMS | BAD_REQUESTS
    notes = report["spec_notes"]
    assert any("describes no errors" in note for note in notes)
    no_query = "nearcore-openrpc-2026-03-18.json does not describe query: answers held to nearcore's error rules only"
    assert no_query in notes
    every = {(row["method"], v["path"], v["kind"]) for row in report["checks"] for v in row["violations"]}
    # its RpcTransactionResponse is a oneOf whose last shape, "Empty" ({final_execution_status}),
    # every transaction status also fits: no answer of tx or EXPERIMENTAL_tx_status can match one
    # shape only, nearcore's own included (a flaw of the document, not of the answers)
    transactions = {(method, path, kind) for method, path, kind in every if method in ("tx", "EXPERIMENTAL_tx_status")}
    assert transactions == {(method, "result", "no matching shape") for method in ("tx", "EXPERIMENTAL_tx_status")}
    found = {(method, path) for method, path, _ in every if method not in ("tx", "EXPERIMENTAL_tx_status")}
    assert {method for method, _ in found} == {"genesis_config", "EXPERIMENTAL_protocol_config", "client_config"}
    assert {path for _, path in found} == DEPARTURES_1_2_14
    # the methods whose 1.2.14 answers its schemas describe pass: blocks, accounts, the extension
    passed = {row["method"] for row in report["checks"] if row["outcome"] == "pass"}
    assert {"block", "EXPERIMENTAL_view_account", "status", "gas_price", "query", "EXPERIMENTAL_view_code"} <= passed


def test_a_spec_file_that_is_no_interface_is_refused_in_one_line(server: LiveServer, tmp_path: Path) -> None:
    not_json = tmp_path / "notes.txt"
    not_json.write_text("not an interface", encoding="utf-8")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"components": {"schemas": {}}}), encoding="utf-8")
    for path, why in ((not_json, "cannot read"), (other, "neither an OpenAPI nor an OpenRPC document"),
                      (tmp_path / "missing.json", "cannot read")):  # fmt: skip
        done = nearrpc("conform", server.url, "--spec", str(path), timeout=60)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.startswith("nearrpc conform: --spec: ") and why in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
