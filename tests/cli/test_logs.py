"""No log line over a few kilobytes, whatever a log call carries (issue 43: verify mode wrote one
line of 24.8 MB, a 4 MB local answer beside an 8 MB lie): the configured formatters of
`nearrpc serve`, text and JSON, bound the message, extra fields and tracebacks, and say so."""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Callable

import orjson
import pytest

from nearrpc.cli.logs import MAX_LINE, MAX_MESSAGE, JsonFormatter, TextFormatter, log_config

BIG = 4 * 1024 * 1024
VERIFY = "verify-calls: x.m at block h (1) differs: local %s, upstream %s"


def test_serve_formats_with_these_formatters() -> None:
    for fmt, formatter in (("text", TextFormatter), ("json", JsonFormatter)):
        assert log_config("INFO", fmt)["formatters"]["line"]["()"].endswith(formatter.__qualname__)  # type: ignore[arg-type]


def _lines(formatter: type[logging.Formatter], emit: Callable[[logging.Logger], None]) -> list[str]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter())
    logger = logging.getLogger("nearrpc.test_logs")
    logger.addHandler(handler)
    try:
        emit(logger)
    finally:
        logger.removeHandler(handler)
    return stream.getvalue().splitlines()


def test_a_text_line_is_bounded_and_says_what_was_cut() -> None:
    # what handlers' verify mode logs for a difference: both answers, whole
    local, lie = "L" * BIG, "U" * (2 * BIG)
    (line,) = _lines(TextFormatter, lambda logger: logger.warning(VERIFY, local, lie))
    assert len(line) <= MAX_LINE
    assert "verify-calls: x.m at block h (1) differs: local LLL" in line
    whole = len(VERIFY % (local, lie))
    assert f"[{whole - MAX_MESSAGE} characters cut]" in line
    assert line.endswith("UUU")


def test_a_json_line_is_bounded_and_still_json() -> None:
    def emit(logger: logging.Logger) -> None:
        logger.warning("refused %s", "x" * BIG, extra={"rpc_method": "m" * BIG})

    (line,) = _lines(JsonFormatter, emit)
    assert len(line) <= MAX_LINE
    record = orjson.loads(line)
    assert record["message"].startswith("refused xxx") and "characters cut]" in record["message"]
    assert len(record["rpc_method"]) <= 512


@pytest.mark.parametrize("formatter", [TextFormatter, JsonFormatter])
def test_a_huge_traceback_is_bounded(formatter: type[logging.Formatter]) -> None:
    try:
        raise ValueError("v" * BIG)
    except ValueError:
        record = logging.LogRecord("nearrpc.x", logging.ERROR, __file__, 1, "failed", None, sys.exc_info())
    line = formatter().format(record)
    assert len(line) <= MAX_LINE + 1024  # the JSON envelope around the bounded parts
    assert "characters cut]" in line


def test_short_lines_are_untouched() -> None:
    record = logging.LogRecord("nearrpc.x", logging.INFO, __file__, 1, "served %s", ("ok",), None)
    assert TextFormatter().format(record).endswith("INFO nearrpc.x: served ok")
