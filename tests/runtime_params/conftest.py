"""Print how many of nearcore's runtime config snapshots the parameter store reproduced."""

from __future__ import annotations

import pytest

_SNAPSHOT_TEST = "test_snapshots.py::test_nearcore_view_matches_snapshot["


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    counts: dict[str, int] = {}
    for outcome in ("passed", "failed", "xfailed", "skipped"):
        counts[outcome] = sum(
            1
            for report in terminalreporter.stats.get(outcome, [])
            if _SNAPSHOT_TEST in getattr(report, "nodeid", "") and getattr(report, "when", "call") in ("call", "setup")
        )
    total = sum(counts.values())
    if total:
        terminalreporter.write_line(
            f"runtime config snapshots: {counts['passed']} of {total} match nearcore field for field; "
            f"{counts['xfailed']} stale upstream (xfail), {counts['failed']} failed, {counts['skipped']} skipped"
        )
