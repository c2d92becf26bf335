"""Read a schemathesis NDJSON report into a per-operation summary.

Each `ScenarioFinished` event carries a recorder: its `label` names the operation (e.g.
"POST /block"), `cases` the cases generated for it, `checks` the check results per case and
`interactions` the request and response per case. Unsupported-method probes (GET /block, ...)
belong to the scenario of the operation they probe and are counted with it.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class OperationSummary:
    operation: str
    cases: int = 0
    failures: int = 0  # cases with at least one failed check
    by_phase: Counter[str] = field(default_factory=Counter)
    by_mode: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    failed_checks: Counter[str] = field(default_factory=Counter)
    checked: Counter[str] = field(default_factory=Counter)  # cases each check ran on
    outcomes: Counter[str] = field(default_factory=Counter)  # "result", an error cause, "text", ...


@dataclass
class RunSummary:
    operations: dict[str, OperationSummary]
    errors: list[str]  # NonFatalError / FatalError / scenario errors, as text

    @property
    def cases(self) -> int:
        return sum(op.cases for op in self.operations.values())

    @property
    def failures(self) -> int:
        return sum(op.failures for op in self.operations.values())


def _record_scenario(summary: RunSummary, event: dict[str, Any]) -> None:
    recorder = event.get("recorder") or {}
    label = recorder.get("label", "?")
    if event.get("status") == "error":
        summary.errors.append(f"{label} ({event.get('phase')}): scenario ended with an error")
    cases = recorder.get("cases") or {}
    if not cases:
        return
    operation = summary.operations.setdefault(label, OperationSummary(label))
    checks = recorder.get("checks") or {}
    interactions = recorder.get("interactions") or {}
    for case_id, case in cases.items():
        value = case.get("value") or {}
        meta = value.get("meta") or {}
        operation.cases += 1
        operation.by_phase[(meta.get("phase") or {}).get("name", "?")] += 1
        operation.by_mode[(meta.get("generation") or {}).get("mode", "?")] += 1
        response = (interactions.get(case_id) or {}).get("response") or {}
        if "status_code" in response:
            operation.statuses[response["status_code"]] += 1
            operation.outcomes[outcome(response)] += 1
        operation.checked.update({check["name"] for check in checks.get(case_id, [])})
        failed = [check["name"] for check in checks.get(case_id, []) if check.get("status") == "failure"]
        if failed:
            operation.failures += 1
            operation.failed_checks.update(failed)


def outcome(response: dict[str, Any]) -> str:
    """What a recorded response said: "result", the error's cause name, or "text" (not JSON-RPC)."""
    content = response.get("content")
    raw = content.get("$base64") if isinstance(content, dict) else None
    if raw is None:
        return "empty"
    try:
        body = json.loads(base64.b64decode(raw))
    except (binascii.Error, ValueError):
        return "text"
    if isinstance(body, dict) and "result" in body:
        return "result"
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        cause = body["error"].get("cause")
        return str(cause.get("name")) if isinstance(cause, dict) else "error"
    return "other JSON"


def read_ndjson(path: Path) -> RunSummary:
    summary = RunSummary({}, [])
    with path.open(encoding="utf-8") as events:
        for line in events:
            if not line.strip():
                continue
            event = json.loads(line)
            (kind, payload), *_ = event.items()
            if kind == "ScenarioFinished":
                _record_scenario(summary, payload)
            elif kind in ("NonFatalError", "FatalError"):
                summary.errors.append(f"{kind}: {json.dumps(payload)[:500]}")
    return summary


def render(summary: RunSummary) -> list[str]:
    """The summary as table lines, operations in alphabetical order."""
    rows = [("operation", "cases", "coverage", "fuzzing", "positive", "negative", "failures", "HTTP statuses")]
    for name in sorted(summary.operations):
        op = summary.operations[name]
        statuses = " ".join(f"{status}x{count}" for status, count in sorted(op.statuses.items()))
        rows.append(
            (
                name,
                str(op.cases),
                str(op.by_phase["coverage"]),
                str(op.by_phase["fuzzing"]),
                str(op.by_mode["positive"]),
                str(op.by_mode["negative"]),
                str(op.failures),
                statuses,
            )
        )
    rows.append(("total", str(summary.cases), "", "", "", "", str(summary.failures), ""))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        name, *numbers = (
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row[:-1], widths, strict=True))
        )
        lines.append("  ".join([name, *numbers, row[-1]]).rstrip())
    for name in sorted(summary.operations):
        op = summary.operations[name]
        said = ", ".join(f"{what} x{count}" for what, count in op.outcomes.most_common())
        lines.append(f"{name}: {said}")
        if op.failed_checks:
            checks = ", ".join(f"{check} x{count}" for check, count in sorted(op.failed_checks.items()))
            lines.append(f"{name}: failed checks: {checks}")
    lines.extend(f"error: {error}" for error in summary.errors)
    return lines
