"""spec/openapi.json: valid OpenAPI 3.1, exactly the five methods, nothing unreachable,
reproducible from upstream, described in our own words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openapi_spec_validator import validate

from tests.conftest import REPO
from tools import spec_sync

SPEC_PATH = REPO / "spec" / "openapi.json"
METHODS = {
    "genesis_config", "EXPERIMENTAL_protocol_config", "EXPERIMENTAL_view_account", "client_config", "block",
    "status", "gas_price", "query", "EXPERIMENTAL_view_access_key", "EXPERIMENTAL_view_access_key_list",
    "EXPERIMENTAL_view_code", "EXPERIMENTAL_call_function", "EXPERIMENTAL_view_state",
    "chunk", "tx", "EXPERIMENTAL_tx_status", "EXPERIMENTAL_receipt", "validators", "EXPERIMENTAL_validators_ordered",
    "EXPERIMENTAL_changes_in_block", "EXPERIMENTAL_changes", "block_effects", "changes", "health",
    "send_tx", "broadcast_tx_commit", "broadcast_tx_async",
}  # fmt: skip


def load_spec() -> dict[str, Any]:
    spec: dict[str, Any] = json.loads(SPEC_PATH.read_text(encoding="utf-8"))
    return spec


def test_spec_is_valid_openapi_31() -> None:
    spec = load_spec()
    validate(spec)
    assert spec["openapi"] == "3.1.0"
    assert spec["info"]["version"] == "1.2.14"


def test_exactly_the_methods_and_the_shared_endpoint() -> None:
    paths = load_spec()["paths"]
    assert set(paths) == {"/"} | {f"/{m}" for m in METHODS} | {f"/{m}" for m in spec_sync.SERVICE_METHODS}
    assert set(spec_sync.METHODS) == set(METHODS)
    # spec/DEVIATIONS.md, overlays ext-rpc-discover and ext-sandbox
    assert spec_sync.SERVICE_METHODS == (
        "rpc.discover", "sandbox_patch_state", "sandbox_fast_forward", "sandbox_snapshot", "sandbox_revert",
    )  # fmt: skip
    for path, item in paths.items():
        assert set(item) == ({"post", "get"} if path in ("/status", "/health") else {"post"}), path  # wire-get-*


def test_every_schema_is_reachable_from_the_methods() -> None:
    spec = load_spec()
    assert spec_sync.reachable_schemas(spec) == set(spec["components"]["schemas"])


def test_every_status_the_server_returns_is_documented() -> None:
    for path, item in load_spec()["paths"].items():
        if path == "/status":
            assert set(item["get"]["responses"]) == {"200", "4XX", "503"}
        statuses = set(item["post"]["responses"])
        expected = {"200", "400", "413", "415", "500"}
        if path in {
            "/", "/block", "/EXPERIMENTAL_protocol_config", "/EXPERIMENTAL_view_account", "/gas_price", "/query",
            "/EXPERIMENTAL_view_access_key", "/EXPERIMENTAL_view_access_key_list", "/EXPERIMENTAL_view_code",
            "/EXPERIMENTAL_call_function", "/EXPERIMENTAL_view_state", "/chunk", "/EXPERIMENTAL_changes_in_block",
            "/EXPERIMENTAL_changes", "/block_effects", "/changes",
        }:  # fmt: skip
            expected.add("422")
        # TIMEOUT_ERROR (wire-http-408)
        if path in {"/", "/tx", "/EXPERIMENTAL_tx_status", "/send_tx", "/broadcast_tx_commit"}:
            expected.add("408")
        assert statuses == expected, path


def test_sync_reproduces_the_spec_byte_for_byte(reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "openapi.json"
    code = spec_sync.main([str(reference / "nearcore-openapi.json"), "--out", str(out)])
    assert code == 0
    assert out.read_bytes() == SPEC_PATH.read_bytes()
    assert spec_sync.main([str(reference / "nearcore-openapi.json"), "--out", str(SPEC_PATH), "--check"]) == 0


def _descriptions(node: object) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "description" and isinstance(value, str) and value:
                found.add(value)
            found |= _descriptions(value)
    elif isinstance(node, list):
        for item in node:
            found |= _descriptions(item)
    return found


def test_no_upstream_prose(reference: Path) -> None:
    """Descriptions are ours; one may equal upstream's only where the brief gives that wording."""
    upstream = json.loads((reference / "nearcore-openapi.json").read_text(encoding="utf-8"))
    brief = "".join(p.read_text(encoding="utf-8") for p in (reference.parent / "brief").glob("*.txt"))
    shared = _descriptions(load_spec()) & _descriptions(upstream)
    assert shared, "the brief's GenesisConfig wording is expected to coincide with upstream for a few fields"
    assert {text for text in shared if text.rstrip(".") not in brief} == set()


def test_sync_refuses_an_upstream_that_changed_under_an_overlay(reference: Path, tmp_path: Path) -> None:
    upstream = json.loads((reference / "nearcore-openapi.json").read_text(encoding="utf-8"))
    upstream["components"]["schemas"]["CryptoHash"] = {"type": "string", "format": "changed"}
    changed = tmp_path / "upstream.json"
    changed.write_text(json.dumps(upstream), encoding="utf-8")
    assert spec_sync.main([str(changed), "--out", str(tmp_path / "out.json")]) == 2
    assert not (tmp_path / "out.json").exists()


def test_an_overlay_whose_target_vanished_fails_the_sync(reference: Path, tmp_path: Path) -> None:
    upstream = json.loads((reference / "nearcore-openapi.json").read_text(encoding="utf-8"))
    del upstream["components"]["schemas"]["LimitConfig"]  # v1.2.14-limit-config adds a member to it
    changed = tmp_path / "upstream.json"
    changed.write_text(json.dumps(upstream), encoding="utf-8")
    assert spec_sync.main([str(changed), "--out", str(tmp_path / "out.json")]) == 2
    assert not (tmp_path / "out.json").exists()
