"""The report's table wraps what it says: a note or a violation is never cut to fit (issue 43:
a contract's error, a hash, cut with "…" at the column's edge)."""

from __future__ import annotations

import io

from nearrpc.conform.answers import Answer
from nearrpc.conform.probes import error_summary
from nearrpc.conform.report import CheckResult, Outcome, Report, render

LONG_WORD = "CompilationError(CodeDoesNotExist{account_id:AccountId(" + "x" * 120 + ")})"
NOTE = "answered CONTRACT_EXECUTION_ERROR: Function call returned an error: " + LONG_WORD + " and " + "more " * 40


def _cells(text: str) -> str:
    """The table's text without its borders and the spaces of wrapping."""
    return "".join(char for char in text if not char.isspace() and char not in "│┃┏┓┗┛┡┩└┘━─╇┳┻╋┼┬┴")


def test_a_long_note_is_wrapped_in_full() -> None:
    report = Report("http://127.0.0.1:3030/", "1.2.14")
    report.checks.append(CheckResult("EXPERIMENTAL_call_function", "finality final", "{}", Outcome.NOTE, 200,
                                     note=NOTE))  # fmt: skip
    stream = io.StringIO()
    render(report, stream)
    assert "…" not in stream.getvalue()
    assert _cells(NOTE) in _cells(stream.getvalue())


def test_an_error_note_keeps_the_whole_text() -> None:
    data = "Function call returned an error: " + LONG_WORD + " and " + "more " * 40
    answer = Answer(None, {"cause": {"name": "CONTRACT_EXECUTION_ERROR"}, "data": data})
    assert error_summary(answer).endswith(data)
