"""The outcome of a conformance run: one row per method and check, as a rich table or JSON."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from nearrpc.conform.violations import Violation


class Outcome(enum.StrEnum):
    PASS = "pass"
    FAIL = "fail"
    NOTE = "note"  # answered within the rules, with something worth saying (e.g. no genesis block)
    NOT_RUN = "not run"


@dataclass(frozen=True, slots=True)
class CheckResult:
    method: str  # a method name, or "(endpoint)" for requests no method owns
    check: str  # e.g. "block_id height", "unknown account"
    request: str  # what was sent, short
    outcome: Outcome
    http_status: int | None = None
    violations: tuple[Violation, ...] = ()
    note: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "check": self.check,
            "request": self.request,
            "outcome": str(self.outcome),
            "http_status": self.http_status,
            "violations": [v.as_json() for v in self.violations],
            "note": self.note,
        }


@dataclass
class Report:
    url: str
    interface_version: str
    checks: list[CheckResult] = field(default_factory=list)
    requests: int = 0
    retries: int = 0
    seconds: float = 0.0
    stopped: str = ""  # why the run stopped early (request budget), "" when it ran through
    account_note: str = ""  # which account the run views, and why that one
    call_note: str = ""  # which contract's method the view calls ask, and how to name another
    spec: str = ""  # the --spec file answers were held to, "" for the packaged spec
    spec_notes: list[str] = field(default_factory=list)  # what that file does not describe

    @property
    def violation_count(self) -> int:
        return sum(len(check.violations) for check in self.checks)

    @property
    def passed(self) -> bool:
        return self.violation_count == 0 and not self.stopped

    def as_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "interface_version": self.interface_version,
            "passed": self.passed,
            "violations": self.violation_count,
            "checks": [check.as_json() for check in self.checks],
            "requests": self.requests,
            "retries": self.retries,
            "seconds": round(self.seconds, 3),
            "stopped": self.stopped,
            "account": self.account_note,
            "calls": self.call_note,
            **({"spec": self.spec, "spec_notes": self.spec_notes} if self.spec else {}),
        }

    def summary(self) -> str:
        counts = {outcome: sum(c.outcome is outcome for c in self.checks) for outcome in Outcome}
        text = (
            f"{len(self.checks)} checks: {counts[Outcome.PASS]} passed, {counts[Outcome.FAIL]} failed, "
            f"{counts[Outcome.NOTE]} with notes, {counts[Outcome.NOT_RUN]} not run; "
            f"{self.violation_count} violations; {self.requests} requests ({self.retries} retries) "
            f"in {self.seconds:.1f} s"
        )
        return text + (f"; stopped early: {self.stopped}" if self.stopped else "")


_STYLES = {Outcome.PASS: "green", Outcome.FAIL: "bold red", Outcome.NOTE: "yellow", Outcome.NOT_RUN: "dim"}


def render(report: Report, stream: TextIO) -> None:
    """The report as a table; full width on a terminal, 200 columns in a log (the extension's
    method and check names take 80 of them)."""
    console = Console(file=stream, highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console = Console(file=stream, highlight=False, width=200, no_color=True)
    against = f", {report.spec}" if report.spec else ""
    table = Table(title=Text(f"nearrpc conform {report.url} (interface {report.interface_version}{against})"))
    table.add_column("method", no_wrap=True)
    table.add_column("check", no_wrap=True)
    table.add_column("HTTP", justify="right")
    table.add_column("outcome", no_wrap=True)
    # wrapped, never cut: a word longer than the column (a hash, a JSON text) folds onto the next lines
    table.add_column("violations and notes (field path: kind, detail)", overflow="fold")
    for check in report.checks:
        lines = [f"{v.path}: {v.kind}, {v.message}" for v in check.violations]
        if check.note:
            lines.append(check.note)
        style = _STYLES[check.outcome]
        # Text, not markup: paths and messages contain brackets
        table.add_row(
            Text(check.method), Text(check.check), Text(str(check.http_status or "-")),
            Text(str(check.outcome), style=style), Text("\n".join(lines)),
        )
    console.print(table)
    for line in (report.account_note, report.call_note):
        if line:
            console.print(Text(line))
    for note in report.spec_notes:
        console.print(Text(f"note: {note}"))
    console.print(Text(report.summary(), style="bold green" if report.passed else "bold red"))
