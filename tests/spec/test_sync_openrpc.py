"""tools.spec_sync reads an upstream OpenRPC document as well as an OpenAPI one: the same
field-level report with classes, and a note for everything the OpenRPC document does not describe."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import REPO
from tools import openrpc_upstream
from tools.spec_sync import METHODS, OVERLAYS, as_it_stands, load_json

OPENRPC_2026_03 = Path("upstream") / "nearcore-openrpc-2026-03-18.json"
OPENAPI_1_2_13 = Path("upstream") / "nearcore-openapi-1.2.13.json"
SPEC = REPO / "spec" / "openapi.json"
Lines = dict[str, set[tuple[str, str]]]  # method -> {(path, change)}


def _report(new: Path, old: Path) -> tuple[Lines, list[str], subprocess.CompletedProcess[str]]:
    command = [sys.executable, "-m", "tools.spec_sync", str(new), "--report-only", "--json", "--against", str(old)]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    lines = {m: {(c["path"], c["change"]) for c in changes} for m, changes in report["methods"].items()}
    return lines, report.get("notes", []), done


def _explained(path: str, between: set[tuple[str, str]]) -> bool:
    """The upstream documents themselves differ at `path`: a line of theirs at that very field, or
    a whole object added or removed above it."""
    def below(parent: str) -> bool:
        return any(path.startswith(parent + sep) for sep in (".", "[", "{"))

    return any(p == path or (change in ("added", "removed") and below(p)) for p, change in between)


def test_the_reference_openrpc_document_reports_like_the_openapi_one(reference: Path) -> None:
    """`spec/openapi.json --against` nearcore's OpenRPC document and `--against` its 1.2.13 OpenAPI
    document agree, for the methods both name, wherever the two upstream documents agree: each
    line one report has and the other lacks is at a field where the two upstream documents
    themselves differ (their own comparison, across formats, says so), or at the errors the
    OpenRPC document does not describe (noted)."""
    openrpc, openapi = reference / OPENRPC_2026_03, reference / OPENAPI_1_2_13
    by_openapi, _, _ = _report(SPEC, openapi)
    by_openrpc, notes, _ = _report(SPEC, openrpc)
    between, between_notes, _ = _report(openrpc, openapi)  # what upstream itself changed, format aside
    assert any("query: not a method of this OpenRPC document" in note for note in notes)
    assert any("errors not described" in note for note in notes) and between_notes

    both = [m for m in METHODS if m != "query"]
    compared = 0
    for method in both:
        upstream_differs = between.get(method, set())
        only_one = by_openapi.get(method, set()) ^ by_openrpc.get(method, set())
        unexplained = {
            (path, change) for path, change in only_one
            if not _explained(path, upstream_differs) and not path.startswith("response.error")
            and not (path == "response" and change == "required")
        }  # fmt: skip
        assert not unexplained, (method, sorted(unexplained))
        compared += len(by_openapi.get(method, set()) & by_openrpc.get(method, set()))
    assert compared >= 40  # the reports share most of their lines: the same envelope, the same 1.2.14 fields
    # query, which only the OpenAPI document names, is compared field by field there; here the note
    # above says why it shows as added whole
    assert len(by_openapi["query"]) > len(by_openrpc["query"])


def test_the_text_report_names_the_document_and_its_notes(reference: Path) -> None:
    text = subprocess.run(
        [sys.executable, "-m", "tools.spec_sync", str(SPEC), "--report-only", "--against",
         str(reference / OPENRPC_2026_03)], cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert text.returncode == 0, text.stderr
    assert "nearcore-openrpc-2026-03-18.json (OpenRPC 1.3.2): query: not a method" in text.stdout
    assert "[breaks clients]" in text.stdout and "[compatible]" in text.stdout


def test_our_own_openrpc_document_reads_back_as_the_spec() -> None:
    """spec/openrpc.json, read as an upstream document, reports no change against spec/openapi.json
    but in the JSON-RPC envelope (which OpenRPC leaves to JSON-RPC, and the reader spells as
    nearcore's OpenAPI document does): its params, results and x-error-schema carry every field."""
    lines, notes, _ = _report(SPEC, REPO / "spec" / "openrpc.json")
    assert notes == []
    envelope = {"request", "request.id", "request.jsonrpc", "response", "response.id", "response.jsonrpc"}
    assert {path for changes in lines.values() for path, _ in changes} <= envelope, lines
    assert all(lines[m] for m in METHODS)  # the envelope differences are reported, not hidden


def test_a_params_list_that_disagrees_with_the_params_schema_is_noted() -> None:
    methods = load_json(OVERLAYS)["methods"]
    document: dict[str, Any] = json.loads((REPO / "spec" / "openrpc.json").read_text(encoding="utf-8"))
    block = next(m for m in document["methods"] if m["name"] == "block")
    block["params"] = [p for p in block["params"] if p["name"] != "sync_checkpoint"]
    converted = openrpc_upstream.as_openapi(document, methods)
    assert any(note.startswith("block: its params list names ['block_id', 'finality']") for note in converted.notes)
    as_it_stands(converted.document)  # every method there: nothing refused


def test_an_openrpc_document_without_a_method_cannot_be_synced_whole(tmp_path: Path) -> None:
    """A full sync from an OpenRPC document lacking one of our methods refuses clearly, writing nothing."""
    document: dict[str, Any] = json.loads((REPO / "spec" / "openrpc.json").read_text(encoding="utf-8"))
    document["methods"] = [m for m in document["methods"] if m["name"] != "gas_price"]
    upstream = tmp_path / "openrpc.json"
    upstream.write_text(json.dumps(document), encoding="utf-8")
    out = tmp_path / "openapi.json"
    done = subprocess.run(
        [sys.executable, "-m", "tools.spec_sync", str(upstream), "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and not out.exists()
    assert "gas_price: not a method of this OpenRPC document" in done.stdout
    assert "upstream document lacks the paths for: gas_price" in done.stderr
