"""spec/CHANGES.md, the interface changelog (`tools.spec_changes`): made from the committed bump
records and spec/openapi.json, held to them by the drift gate, and the records to the real
upstream documents where those are at hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.spec.scratch import regenerate
from tools import spec_changes, spec_sync
from tools.spec_fields import flatten

SPEC_DIR = REPO / "spec"


def test_the_changelog_is_what_the_records_and_the_spec_make() -> None:
    written = (SPEC_DIR / "CHANGES.md").read_text(encoding="utf-8")
    assert written == spec_changes.render_changes(SPEC_DIR / "openapi.json")
    sections = [line for line in written.splitlines() if line.startswith("## ")]
    assert sections == ["## 1.2.14", "## 1.2.13"]
    assert "Against 1.2.13: 118 breaks clients, 386 breaks servers, 105 compatible." in written
    assert "Against 1.2.11: 4 breaks clients, 2 breaks servers, 14 compatible." in written
    assert (
        "  - [breaks clients] `response.result.state_sync_external_backoff` removed: array (a field of "
        "interface 1.2.14)" in written
    )


@pytest.mark.deep  # regenerates from an edited spec: a spec maintainer's round trip, ~10 s
def test_a_spec_edit_makes_the_changelog_stale_until_regenerated(scratch_repo: Path) -> None:
    spec_path = scratch_repo / "spec" / "openapi.json"
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    del spec["components"]["schemas"]["RpcViewAccountResponse"]["properties"]["storage_paid_at"]
    spec_path.write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")

    stale = regenerate(scratch_repo, "--check")
    assert stale.returncode == 1
    removal = (
        "+  - [breaks clients] `response.result.storage_paid_at` removed: integer/uint64 (a field of interface 1.2.14)"
    )
    assert removal in stale.stdout.splitlines()  # the diff of CHANGES.md says what and whom
    assert "CHANGES.md (on disk)" in stale.stdout

    assert regenerate(scratch_repo).returncode == 0
    assert removal[1:] in (scratch_repo / "spec" / "CHANGES.md").read_text(encoding="utf-8").splitlines()
    assert regenerate(scratch_repo, "--check").returncode == 0


def test_a_hand_edit_of_the_changelog_is_caught(scratch_repo: Path) -> None:
    changes = scratch_repo / "spec" / "CHANGES.md"
    changes.write_text(changes.read_text(encoding="utf-8").replace("[breaks servers]", "[compatible]", 1))
    stale = regenerate(scratch_repo, "--check")
    assert stale.returncode == 1 and "CHANGES.md" in stale.stdout


def _methods() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SPEC_DIR / "overlays.json").read_text(encoding="utf-8"))["methods"]
    return loaded


def _as_it_stands(path: Path) -> dict[str, Any]:
    return spec_sync.as_it_stands(json.loads(path.read_text(encoding="utf-8")))


def test_the_base_record_is_upstream_1_2_13_as_it_stands(reference: Path) -> None:
    upstream = _as_it_stands(reference / "upstream" / "nearcore-openapi-1.2.13.json")
    expected = spec_changes.fields_record(flatten(upstream, _methods()), "1.2.13")
    assert (SPEC_DIR / "changes" / "base.json").read_text(encoding="utf-8") == expected


def test_the_1_2_13_record_is_the_report_of_the_real_documents(reference: Path) -> None:
    command = [sys.executable, "-m", "tools.spec_sync", str(reference / "upstream" / "nearcore-openapi-1.2.13.json")]
    command += ["--report-only", "--against", str(reference / "nearcore-openapi.json"), "--json"]
    run = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120, check=True)
    assert run.stdout == (SPEC_DIR / "changes" / "1.2.11-to-1.2.13.json").read_text(encoding="utf-8")


def test_a_frozen_section_is_a_link_of_the_chain_the_next_version_continues(scratch_repo: Path) -> None:
    spec_path = scratch_repo / "spec" / "openapi.json"
    before = spec_changes.render_changes(spec_path)
    frozen = spec_changes.freeze(spec_path)
    assert frozen.name == "1.2.13-to-1.2.14.json"
    with pytest.raises(ValueError, match=r"spec version 1\.2\.14 is already recorded"):
        spec_changes.render_changes(spec_path)  # frozen and live would both be 1.2.14

    # upstream caught up with this spec (base = its fields), and the spec moved on to 1.2.15
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    base = spec_changes.fields_record(flatten(spec_sync.as_it_stands(spec), _methods()), "1.2.14")
    (scratch_repo / "spec" / "changes" / "base.json").write_text(base, encoding="utf-8")
    spec["info"]["version"] = "1.2.15"
    spec_path.write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")

    after = spec_changes.render_changes(spec_path)
    newest, _, older = after.partition("## 1.2.14\n")
    assert "## 1.2.15\n\nAgainst 1.2.14: 0 breaks clients, 0 breaks servers, 0 compatible." in newest
    assert "- `block`: no change" in newest
    assert "## 1.2.14\n" + older == "## 1.2.14\n" + before.partition("## 1.2.14\n")[2]  # the frozen section


def test_an_unreadable_base_document_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert spec_changes.main(["--base", str(tmp_path / "missing.json"), "--check"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("spec_changes: cannot read "), err
