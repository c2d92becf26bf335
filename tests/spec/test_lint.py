"""spec/openapi.json passes two common OpenAPI linters with their default rulesets, no rule
switched off: Spectral (`spectral:oas`) and Redocly CLI (`recommended`), pinned by
tests/spec/lint/package-lock.json and installed with `npm ci` once (tests/support/npm.py).

What they asked for went in as overlays (spec/DEVIATIONS.md: the `doc-*` metadata and the
`form-*` rewrites that change no set of valid documents)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO
from tests.support.npm import pinned_tools

SPEC = REPO / "spec" / "openapi.json"
LINT = Path(__file__).resolve().parent / "lint"
SPECTRAL_RULESET = LINT / "spectral.yaml"
REDOCLY_CONFIG = LINT / "redocly.yaml"


@dataclass(frozen=True)
class Finding:
    linter: str
    rule: str
    severity: str  # error | warning | info | hint
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.linter} {self.severity} {self.rule} at {self.where}: {self.message}"


Linter = Callable[[Path, Path], list[Finding]]


@pytest.fixture(scope="module")
def lint_tools() -> Path:
    return pinned_tools(LINT, "spec-lint", "spectral")


def _run(command: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=LINT, env=env, capture_output=True, text=True, timeout=300, check=False)


_SPECTRAL_SEVERITIES = ("error", "warning", "info", "hint")  # its JSON numbers them 0..3


def spectral(tools: Path, spec: Path) -> list[Finding]:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "findings.json"
        done = _run([str(tools / "spectral"), "lint", "--ruleset", str(SPECTRAL_RULESET), "--format", "json",
                     "--output", str(out), "--quiet", str(spec)])  # fmt: skip
        # exit 1: it found errors; anything else but 0 means it did not lint
        assert done.returncode in (0, 1) and out.is_file(), done.stdout + done.stderr
        results: list[dict[str, Any]] = json.loads(out.read_text(encoding="utf-8"))
    return [
        Finding("spectral", r["code"], _SPECTRAL_SEVERITIES[r["severity"]], ".".join(map(str, r["path"])), r["message"])
        for r in results
    ]


_REDOCLY_SEVERITIES = {"error": "error", "warn": "warning"}


def redocly(tools: Path, spec: Path) -> list[Finding]:
    env = {**os.environ, "REDOCLY_TELEMETRY": "off", "REDOCLY_SUPPRESS_UPDATE_NOTICE": "true", "NO_COLOR": "1"}
    done = _run([str(tools / "redocly"), "lint", "--config", str(REDOCLY_CONFIG), "--format", "json",
                 "--max-problems", "100000", str(spec)], env)  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["totals"]["ignored"] == 0, report["totals"]  # no lint-ignore file switches findings off
    return [
        Finding("redocly", p["ruleId"], _REDOCLY_SEVERITIES.get(p["severity"], p["severity"]),
                p["location"][0]["pointer"] if p["location"] else "", p["message"])
        for p in report["problems"]
    ]  # fmt: skip


LINTERS = [pytest.param(spectral, id="spectral"), pytest.param(redocly, id="redocly")]


def test_the_rulesets_are_the_linters_defaults() -> None:
    assert yaml.safe_load(SPECTRAL_RULESET.read_text(encoding="utf-8")) == {"extends": ["spectral:oas"]}
    assert yaml.safe_load(REDOCLY_CONFIG.read_text(encoding="utf-8")) == {"extends": ["recommended"]}


@pytest.mark.parametrize("linter", LINTERS)
def test_the_spec_has_no_lint_error_or_warning(lint_tools: Path, linter: Linter) -> None:
    findings = linter(lint_tools, SPEC)
    print("\n".join(map(str, findings)))
    assert [f for f in findings if f.severity in ("error", "warning")] == [], "\n".join(map(str, findings))


def _without_the_lint_overlays(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with one of each thing the overlays fixed undone."""
    undone = copy.deepcopy(spec)
    del undone["servers"]
    del undone["paths"]["/block"]["post"]["summary"]
    del undone["components"]["schemas"]["BlockHeaderView"]["properties"]["shard_split"]["items"]
    undone["components"]["schemas"]["BlockHeaderView"]["properties"]["hash"] = {
        "allOf": [{"$ref": "#/components/schemas/CryptoHash"}]
    }
    return undone


@pytest.mark.parametrize(
    ("linter", "rules"),
    [
        pytest.param(spectral, {"oas3-api-servers", "array-items"}, id="spectral"),
        pytest.param(redocly, {"no-empty-servers", "operation-summary", "no-illogical-composition-keywords"},
                     id="redocly"),
    ],
)  # fmt: skip
def test_the_linters_see_what_the_overlays_fixed(
    lint_tools: Path, tmp_path: Path, linter: Linter, rules: set[str]
) -> None:
    undone = tmp_path / "undone.json"
    undone.write_text(json.dumps(_without_the_lint_overlays(json.loads(SPEC.read_text(encoding="utf-8")))))
    assert {f.rule for f in linter(lint_tools, undone)} == rules
