"""A spec bump tells what changed: the field-level report of `tools.spec_sync`, redundant overlays,
and the interface gate, shown on nearcore's newest document (1.2.13) in a temporary copy."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tools import spec_sync
from tools.bump_report import SYMBOLS

UPSTREAM_1_2_13 = "upstream/nearcore-openapi-1.2.13.json"
BACKOFF = "client_config.response.result.state_sync_external_backoff"


def _copy_of_the_repository(tmp_path: Path) -> Path:
    """spec/ and tools/: all `python -m tools.spec_sync` reads and writes."""
    copy_root = tmp_path / "repo"
    for folder in ("spec", "tools"):
        shutil.copytree(REPO / folder, copy_root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return copy_root


def _sync(root: Path, upstream: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tools.spec_sync", str(upstream)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_1_2_13_bump_reports_its_changes_and_refuses_to_drop_a_1_2_14_field(
    reference: Path, tmp_path: Path
) -> None:
    root = _copy_of_the_repository(tmp_path)
    before = (root / "spec" / "openapi.json").read_bytes()

    run = _sync(root, reference / UPSTREAM_1_2_13)
    print(run.stdout + run.stderr)  # the report, for the closing note (pytest -s)

    assert run.returncode == 2
    report = run.stdout.splitlines()
    assert report[0].startswith("spec_sync: changes from upstream 1.2.13 (nearcore-openapi-1.2.13.json) against ")
    client = report.index("  client_config")
    assert report[1:client] == [
        "  genesis_config: no change",
        "  EXPERIMENTAL_protocol_config: no change",
        "  EXPERIMENTAL_view_account: no change",
    ]
    assert report[client + 1 : client + 6] == [
        "    + response.result.view_access_keys_limit: integer/uint32 (not in interface 1.2.14) [compatible]",
        "    - response.result.state_sync.sync.ExternalStorage: object, 11 field(s) under it [breaks clients]",
        "    - response.result.state_sync_external_backoff: array (a field of interface 1.2.14) [breaks clients]",
        "    ~ response.result.state_sync.sync: object | string -> string [breaks servers]",
        "    required response.result.state_sync.sync: - ExternalStorage [compatible]",
    ]
    assert report[client + 6] == "  block: no change"
    assert (
        "spec_sync: overlay 'v1.2.14-ext-costs' is partly redundant; upstream already has: merge "
        "/components/schemas/ExtCostsConfigView/properties: sha3_256_base, sha3_256_byte, sha3_384_base, "
        "sha3_384_byte, sha3_512_base, sha3_512_byte" in report
    )
    assert (
        "spec_sync: overlay 'v1.2.14-vm-config' is partly redundant; upstream already has: "
        "set /components/schemas/VMConfigView/properties/sha3_host_fns" in report
    )
    assert run.stderr.splitlines() == [
        f"spec_sync: interface departure not declared in spec/DEVIATIONS.md: {BACKOFF}: missing (a field of "
        "interface 1.2.14)",
        "spec_sync: not written; keep the field with an overlay, or declare the departure in spec/DEVIATIONS.md "
        "(Interface fields the spec departs from)",
    ]
    assert (root / "spec" / "openapi.json").read_bytes() == before

    # Declared as a departure, the same bump goes through and the spec follows upstream.
    deviations = root / "spec" / "DEVIATIONS.md"
    text = deviations.read_text(encoding="utf-8")
    row = "| `client_config.response.result.state_sync_external_backoff` | dropped | upstream 1.2.13 dropped it |\n"
    anchor = "| `client_config.request.params` |"
    deviations.write_text(text.replace(anchor, row + anchor, 1), encoding="utf-8")
    run = _sync(root, reference / UPSTREAM_1_2_13)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == f"spec_sync: wrote {root / 'spec' / 'openapi.json'}"
    written = json.loads((root / "spec" / "openapi.json").read_text(encoding="utf-8"))
    client_config = written["components"]["schemas"]["RpcClientConfigResponse"]["properties"]
    assert "view_access_keys_limit" in client_config and "state_sync_external_backoff" not in client_config


def _upstream(reference: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((reference / "nearcore-openapi.json").read_text(encoding="utf-8"))
    return loaded


def _build(upstream: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    overlays = json.loads(spec_sync.OVERLAYS.read_text(encoding="utf-8"))
    descriptions = json.loads(spec_sync.DESCRIPTIONS.read_text(encoding="utf-8"))
    return spec_sync.build_spec(copy.deepcopy(upstream), overlays, descriptions)


def test_the_current_upstream_leaves_no_overlay_redundant(reference: Path) -> None:
    assert _build(_upstream(reference))[1] == []


def test_an_overlay_upstream_has_absorbed_is_reported_redundant(reference: Path) -> None:
    upstream = _upstream(reference)
    schemas = upstream["components"]["schemas"]
    schemas["AccountState"] = {"enum": ["initialized", "uninitialized"], "type": "string"}
    account = schemas["RpcViewAccountResponse"]["properties"]
    account["bootstrap_nonce"] = {"format": "uint64", "minimum": 0, "type": "integer"}
    account["state"] = {"$ref": "#/components/schemas/AccountState"}
    del schemas["VMConfigView"]["properties"]["storage_get_mode"]  # an overlay removes it; upstream did
    notes = _build(upstream)[1]
    assert "overlay 'v1.2.14-account-view' is redundant: upstream already has all of it; drop it" in notes
    assert (
        "overlay 'v1.2.14-vm-config' is partly redundant; upstream already has: "
        "remove /components/schemas/VMConfigView/properties/storage_get_mode" in notes
    )


def test_an_overlay_that_no_longer_applies_fails_naming_it(reference: Path, capsys: pytest.CaptureFixture[str]) -> None:
    upstream = _upstream(reference)
    upstream["components"]["schemas"]["BlockId"]["anyOf"][0]["format"] = "uint32"  # wire-block-id-range's guard
    with pytest.raises(spec_sync.OverlayError, match="overlay 'wire-block-id-range', set /components/schemas/BlockId"):
        _build(upstream)


# ---------------------------------------------------------------- classes, on the real documents

EXPECTATIONS = REPO / "tests" / "spec" / "bump_expectations"
SPEC = REPO / "spec" / "openapi.json"


def _report_json(new: Path, old: Path) -> dict[str, Any]:
    command = [sys.executable, "-m", "tools.spec_sync", str(new), "--report-only", "--against", str(old), "--json"]
    run = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    loaded: dict[str, Any] = json.loads(run.stdout)
    return loaded


def _classes(report: dict[str, Any]) -> dict[str, dict[str, str]]:
    """method -> "<symbol> <path>" -> class, the shape of the hand-checked expectation files."""
    return {
        method: {f"{SYMBOLS[c['change']]} {c['path']}": c["class"] for c in changes}
        for method, changes in report["methods"].items()
    }


@pytest.mark.parametrize(
    ("expectation", "new", "old"),
    [
        ("1.2.11-to-1.2.13", UPSTREAM_1_2_13, "nearcore-openapi.json"),
        ("1.2.13-to-spec", None, UPSTREAM_1_2_13),
    ],
)
def test_each_change_of_the_real_bumps_has_its_hand_checked_class(
    reference: Path, expectation: str, new: str | None, old: str
) -> None:
    report = _report_json(reference / new if new else SPEC, reference / old)
    expected = json.loads((EXPECTATIONS / f"{expectation}.json").read_text(encoding="utf-8"))
    assert _classes(report) == expected
    assert all(c["detail"] for changes in report["methods"].values() for c in changes)


def test_the_json_report_names_both_versions_and_every_method(reference: Path) -> None:
    report = _report_json(reference / UPSTREAM_1_2_13, reference / "nearcore-openapi.json")
    assert (report["from"], report["to"]) == ("1.2.11", "1.2.13")
    assert list(report["methods"]) == list(spec_sync.METHODS)
    backoff = [c for c in report["methods"]["client_config"] if c["path"].endswith("state_sync_external_backoff")]
    assert backoff == [
        {
            "path": "response.result.state_sync_external_backoff",
            "change": "removed",
            "class": "breaks clients",
            "detail": "array (a field of interface 1.2.14)",
        }
    ]


def test_report_only_writes_nothing_even_where_the_sync_would_refuse(reference: Path, tmp_path: Path) -> None:
    root = _copy_of_the_repository(tmp_path)
    before = {path: path.read_bytes() for path in (root / "spec").rglob("*") if path.is_file()}
    run = subprocess.run(
        [sys.executable, "-m", "tools.spec_sync", str(reference / UPSTREAM_1_2_13), "--report-only"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr  # the 1.2.13 sync itself refuses (the first test)
    removal = "    - response.result.state_sync_external_backoff: array (a field of interface 1.2.14) [breaks clients]"
    assert removal in run.stdout.splitlines()
    assert "wrote" not in run.stdout
    assert {path: path.read_bytes() for path in (root / "spec").rglob("*") if path.is_file()} == before


@pytest.mark.parametrize(
    "argv",
    [
        ["{missing}", "--report-only"],
        ["{spec}", "--report-only", "--against", "{missing}"],
        ["{readme}", "--report-only"],  # a file that is no JSON
    ],
)
def test_an_unreadable_document_is_refused_in_one_line(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    places = {"missing": tmp_path / "missing.json", "spec": REPO / "spec" / "openapi.json"}
    places["readme"] = REPO / "README.md"
    assert spec_sync.main([word.format(**places) for word in argv]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("spec_sync: cannot read "), err
