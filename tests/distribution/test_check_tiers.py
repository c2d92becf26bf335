"""./check's pytest runs: with --all, every test runs in exactly one tier, whatever its markers."""

from __future__ import annotations

import itertools
import re

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
