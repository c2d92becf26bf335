"""tools.regenerate: golden records for our generator, determinism, and the drift gate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.spec.scratch import regenerate
from tools.regenerate import drift, render_generated

GOLDEN = REPO / "tests" / "golden"


def test_golden_records_match() -> None:
    """Output for the fixture spec equals the checked-in expected files (re-record with
    `python -m tests.golden.record`, on purpose only)."""
    diffs = drift(render_generated(GOLDEN / "fixture_openapi.json"), GOLDEN / "expected")
    assert not diffs, "".join(diffs)


def test_golden_dispatch_table_describes_the_fixture() -> None:
    methods = (GOLDEN / "expected" / "methods.py").read_text(encoding="utf-8")
    assert '"lookup": MethodSpec(' in methods and '"ping": MethodSpec(' in methods
    assert "accepts_positional=True" in methods  # lookup's [block_id] form
    assert 'params_members=("block_id","finality","key",)' in "".join(methods.split())


@pytest.mark.deep  # renders the whole of generated/ twice, ~5 s; the drift gate below renders it once
def test_output_is_deterministic() -> None:
    spec = REPO / "spec" / "openapi.json"
    assert render_generated(spec) == render_generated(spec)


def test_generated_matches_spec() -> None:
    """The drift gate itself, as CI runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "tools.regenerate", "--check"], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.deep  # regenerates from an edited spec: a spec maintainer's round trip, ~10 s
def test_adding_an_optional_field_trips_the_gate_until_regenerated(scratch_repo: Path) -> None:
    spec_path = scratch_repo / "spec" / "openapi.json"
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    spec["components"]["schemas"]["RpcViewAccountResponse"]["properties"]["rainbow_colour"] = {"type": "string"}
    spec_path.write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")

    stale = regenerate(scratch_repo, "--check")
    assert stale.returncode == 1
    assert "rainbow_colour" in stale.stdout  # the diff names the new field
    assert "generated/models.py" in stale.stdout and "generated/openapi.json" in stale.stdout

    assert regenerate(scratch_repo).returncode == 0
    models = (scratch_repo / "generated" / "models.py").read_text(encoding="utf-8")
    assert "rainbow_colour: str | None = None" in models
    assert regenerate(scratch_repo, "--check").returncode == 0


def test_hand_edits_to_generated_are_caught(scratch_repo: Path) -> None:
    routes = scratch_repo / "generated" / "routes.py"
    routes.write_text(routes.read_text(encoding="utf-8") + "\n# hand edit\n", encoding="utf-8")
    assert regenerate(scratch_repo, "--check").returncode == 1


@pytest.mark.deep  # regenerates from an edited spec: a spec maintainer's round trip, ~10 s
def test_a_new_optional_params_member_updates_models_and_stubs(scratch_repo: Path) -> None:
    spec_path = scratch_repo / "spec" / "openapi.json"
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    # beside the block-reference `anyOf`, where upstream declares members (the spec itself repeats
    # them in each branch: overlay form-params-members-in-variants)
    request = spec["components"]["schemas"]["RpcViewAccountRequest"]
    request.setdefault("properties", {})["include_proof"] = {"type": "boolean"}
    spec_path.write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")

    stale = regenerate(scratch_repo, "--check")
    assert stale.returncode == 1
    assert "generated/methods.py" in stale.stdout and "generated/models.py" in stale.stdout

    assert regenerate(scratch_repo).returncode == 0
    methods = "".join((scratch_repo / "generated" / "methods.py").read_text(encoding="utf-8").split())
    assert 'params_members=("account_id","block_id","finality","include_proof","sync_checkpoint",)' in methods
    assert "include_proof: bool | None = None" in (scratch_repo / "generated" / "models.py").read_text(encoding="utf-8")
    assert regenerate(scratch_repo, "--check").returncode == 0


def test_missing_generators_are_named_in_one_line(tmp_path: Path) -> None:
    """Without the codegen extra, regenerate says how to install it instead of a traceback."""
    without_jinja = "import sys; sys.modules['jinja2'] = None; from tools.regenerate import main; sys.exit(main())"
    done = subprocess.run([sys.executable, "-c", without_jinja], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith("regenerate: the code generators are not installed: pip install -e '.[codegen]'")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr

    without_codegen = (
        "import sys; sys.executable = '/nonexistent/python'; from tools.regenerate import main; sys.exit(main())"
    )
    done = subprocess.run(
        [sys.executable, "-c", without_codegen], cwd=REPO, capture_output=True, text=True, env={"PATH": str(tmp_path)}
    )
    assert done.returncode == 2
    assert done.stderr == "regenerate: the code generators are not installed: pip install -e '.[codegen]'\n"
