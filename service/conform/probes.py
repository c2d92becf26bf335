"""A probe: one request to the endpoint and the judge of its answer; running it gives a row.

Judges return the violations they find and, for answers that are within the rules but worth
saying (an allowed error), a note.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nearrpc.conform.answers import Answer, error_violations, expected_error_status, read_answer, status_violation
from nearrpc.conform.endpoint import Endpoint, Exchange
from nearrpc.conform.report import CheckResult, Outcome
from nearrpc.conform.violations import Kind, Violation, note_text, unique_paths
from nearrpc.methods.errors import Cause

OMITTED: Any = object()  # `params` left out of the request


@dataclass(frozen=True, slots=True)
class Judgement:
    violations: list[Violation]
    note: str = ""
    answer: Answer | None = None  # the parsed answer, for the checks that learn from it


Judge = Callable[[Exchange], Judgement]


@dataclass(frozen=True, slots=True)
class Probe:
    method: str
    check: str
    shown: str  # the request, short
    body: bytes
    judge: Judge
    content_type: str = "application/json"

    def run(self, endpoint: Endpoint) -> tuple[CheckResult, Answer | None]:
        """The row for this probe and the parsed answer; raises Unreachable when no HTTP
        answer came, BudgetExhausted when the request budget is spent."""
        exchange = endpoint.post(self.body, self.content_type)
        judgement = self.judge(exchange)
        found = tuple(unique_paths(judgement.violations))
        outcome = Outcome.FAIL if found else Outcome.NOTE if judgement.note else Outcome.PASS
        result = CheckResult(self.method, self.check, self.shown, outcome, exchange.status, found, judgement.note)
        return result, judgement.answer

    def unanswered(self, why: str) -> CheckResult:
        violation = Violation("(transport)", Kind.NO_ANSWER, why)
        return CheckResult(self.method, self.check, self.shown, Outcome.FAIL, None, (violation,))

    def not_run(self, why: str) -> CheckResult:
        return CheckResult(self.method, self.check, self.shown, Outcome.NOT_RUN, note=why)


@dataclass
class RequestIds:
    """Distinct request ids, so that an echoed id proves which request was answered."""

    next: int = field(default=0)

    def take(self) -> str:
        self.next += 1
        return f"nearrpc-conform-{self.next}"


def request_body(method: str, params: Any, request_id: object) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not OMITTED:
        body["params"] = params
    return json.dumps(body, separators=(",", ":")).encode()


def shown_params(params: Any) -> str:
    return "params omitted" if params is OMITTED else json.dumps(params, separators=(",", ":"))


def error_summary(answer: Answer) -> str:
    data = answer.error.get("data") if answer.error else None
    return note_text(f"{answer.cause}: {data}" if isinstance(data, str) and data else str(answer.cause))


def expect_error(
    method: str | None, error_component: str, request_id: object, params: object, cause: Cause,
    head_height: int | None, extra: Callable[[Answer], list[Violation]] | None = None,
) -> Judge:
    """A judge for a request nearcore refuses with `cause`, at the HTTP status its rule gives."""
    status = expected_error_status(cause, params, head_height)

    def judge(exchange: Exchange) -> Judgement:
        answer, found = read_answer(exchange, request_id)
        found += status_violation(exchange, status, cause)
        if answer is None:
            return Judgement(found)
        if answer.error is None:
            found.append(Violation("result", Kind.MISMATCH, f"a result, nearcore answers {cause} here"))
            return Judgement(found, answer=answer)
        found += error_violations(method, error_component, answer.error)
        if answer.cause != cause:
            found.append(
                Violation("error.cause.name", Kind.MISMATCH, f"{answer.cause!r}, nearcore answers {cause} here")
            )
        elif extra is not None:
            found += extra(answer)
        return Judgement(found, answer=answer)

    return judge
