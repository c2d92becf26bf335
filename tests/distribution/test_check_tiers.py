"""./check's pytest runs: with --all, every test runs in exactly one tier, whatever its markers."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
from pathlib import Path

from _pytest.mark.expression import Expression  # what `-m` compiles with (pytest pinned)

from tests.conftest import REPO

TIER_MARKERS = ("deep", "toolchain", "container")


def _tiers() -> dict[str, str]:
    """The tiers ./check runs, by name: their `-m` expressions."""
    text = (REPO / "check").read_text(encoding="utf-8")
    return dict(re.findall(r'^\s*pytest_tier "([^"]+)" "([^"]+)"', text, re.MULTILINE))


def _selects(expression: str, markers: set[str]) -> bool:
    """Whether `-m expression` selects a test with `markers`, read by pytest's own parser."""

    def marked(name: str, /, **_: str | int | bool | None) -> bool:
        return name in markers

    return Expression.compile(expression).evaluate(marked)


def test_every_combination_of_tier_markers_runs_in_exactly_one_tier() -> None:
    tiers = _tiers()
    assert list(tiers) == ["the suite", "the deep tier", "external toolchains", "the container image"]
    for present in itertools.product((False, True), repeat=len(TIER_MARKERS)):
        markers = {name for name, marked in zip(TIER_MARKERS, present, strict=True) if marked}
        running = [name for name, expression in tiers.items() if _selects(expression, markers)]
        assert len(running) == 1, (markers, running)


def test_the_suite_alone_leaves_out_every_marked_tier() -> None:
    """`./check` without --all runs the first tier only: none of the slow ones."""
    suite = _tiers()["the suite"]
    assert _selects(suite, set())
    for marker in TIER_MARKERS:
        assert not _selects(suite, {marker}), marker


_PYTEST_STUB = """#!/bin/sh
# records the tier it was asked for and fails the one named by FAILING_TIER
while [ $# -gt 0 ]; do [ "$1" = "-m" ] && marker=$2; shift; done
echo "$marker" >> "$TIERS_RAN"
[ "$marker" = "$FAILING_TIER" ] && exit "$FAILING_STATUS"
exit 0
"""


def _run_check(folder: Path, *args: str, failing: str = "", status: int = 1) -> tuple[int, list[str]]:
    """./check (the repository's script, copied) over a .venv whose tools pass and whose pytest
    fails the tier `failing` with `status`: its exit status and the tiers it ran."""
    shutil.copy(REPO / "check", folder / "check")
    tools = folder / ".venv" / "bin"
    tools.mkdir(parents=True, exist_ok=True)
    for name in ("python", "ruff", "mypy", "lint-imports", "vulture"):
        (tools / name).write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    (tools / "pytest").write_text(_PYTEST_STUB, encoding="utf-8")
    for tool in tools.iterdir():
        tool.chmod(0o755)
    ran = folder / "tiers"
    ran.write_text("", encoding="utf-8")
    env = {**os.environ, "TIERS_RAN": str(ran), "FAILING_TIER": failing, "FAILING_STATUS": str(status)}
    run = subprocess.run(["bash", str(folder / "check"), *args], env=env, capture_output=True, text=True,
                         check=False, timeout=60)
    return run.returncode, ran.read_text(encoding="utf-8").splitlines()


def test_a_failing_tier_fails_check_all_whichever_it_is(tmp_path: Path) -> None:
    """CI runs `./check --all`: a failure in any tier is its exit status, not only the suite's
    or the last tier's; pytest's "no tests collected" (5) is no failure."""
    tiers = _tiers()
    assert _run_check(tmp_path, "--all") == (0, list(tiers.values()))
    for name, expression in tiers.items():
        status, ran = _run_check(tmp_path, "--all", failing=expression)
        assert status == 1 and ran == list(tiers.values()), (name, status, ran)
        assert _run_check(tmp_path, "--all", failing=expression, status=5)[0] == 0, name
    suite = tiers["the suite"]
    assert _run_check(tmp_path, failing=suite) == (1, [suite])
    assert _run_check(tmp_path, failing=tiers["the deep tier"]) == (0, [suite])  # not run without --all
