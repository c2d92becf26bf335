"""One log line format for nearrpc and uvicorn: UTC timestamps, as text or as JSON objects.

`log_config(level, fmt)` is a `logging.config.dictConfig` document; `nearrpc serve` hands it to
uvicorn, which applies it in every worker process, and applies it itself in the supervisor.

    2026-11-22T16:55:01.123Z INFO nearrpc.serve: serving data/x.sqlite (...) at http://127.0.0.1:3030/
    {"time": "2026-11-22T16:55:01.123Z", "level": "INFO", "logger": "nearrpc.serve", "pid": 4242, "message": "..."}

Extra fields a log call passes (`request_id`, `rpc_method`, ...) become members of the JSON
object; the text format shows them through the message itself.

Every line is bounded here, whatever a log call carries (a contract's answer, an upstream's, a
failure's text): the message, each extra field and a traceback are cut to a few kilobytes, keeping
their beginning and end and saying how much was left out, so no record writes more than
`MAX_LINE` characters (a verify-mode warning once wrote 24.8 MB in one line).
"""

from __future__ import annotations

import logging
import logging.config
import time
from typing import Any, Final, Literal

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.orjson import OrjsonFormatter

LogFormat = Literal["text", "json"]

# What one record may write: its message, each extra field and its traceback are cut to these
# (characters), and a text line as a whole to MAX_LINE.
MAX_MESSAGE: Final = 2048
MAX_FIELD: Final = 512
MAX_TRACEBACK: Final = 2048
MAX_LINE: Final = 4096
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "color_message"}

# The start-up lines (what is served where, or why not) show at every --log-level.
STARTUP_LOGGER: Final = "nearrpc.serve"
_TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _utc_time(record: logging.LogRecord) -> str:
    """ISO 8601 UTC with milliseconds, e.g. 2026-11-22T16:55:01.123Z."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"


def cut(text: str, limit: int) -> str:
    """`text` within `limit` characters: its beginning and its end around a note of what was cut."""
    if len(text) <= limit:
        return text
    note = f" ...[{len(text) - limit} characters cut]... "
    keep = max(limit - len(note), 0)
    head = keep - keep // 4
    return text[:head] + note + text[len(text) - (keep - head) :]


def bounded(record: logging.LogRecord) -> logging.LogRecord:
    """A copy of `record` whose message, extra string fields and traceback are cut to their bounds
    (the record itself is left as it was, for any other handler)."""
    message = record.getMessage()
    extras = [
        name for name, value in record.__dict__.items()
        if name not in _STANDARD and isinstance(value, str) and len(value) > MAX_FIELD
    ]  # fmt: skip
    traceback = record.exc_text
    if record.exc_info and not traceback:
        traceback = logging.Formatter().formatException(record.exc_info)
    if len(message) <= MAX_MESSAGE and not extras and (traceback is None or len(traceback) <= MAX_TRACEBACK):
        return record
    copy = logging.makeLogRecord(record.__dict__)
    copy.msg, copy.args = cut(message, MAX_MESSAGE), None
    for name in extras:
        setattr(copy, name, cut(getattr(record, name), MAX_FIELD))
    if traceback is not None:
        copy.exc_info, copy.exc_text = None, cut(traceback, MAX_TRACEBACK)
    return copy


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__(_TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        return cut(super().format(bounded(record)), MAX_LINE)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return _utc_time(record)


class JsonFormatter(OrjsonFormatter):
    def __init__(self) -> None:
        super().__init__(
            ["asctime", "levelname", "name", "process", "message"],
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger", "process": "pid"},
            # uvicorn adds a coloured copy of its messages to every record
            reserved_attrs=[*RESERVED_ATTRS, "color_message"],
        )

    def format(self, record: logging.LogRecord) -> str:
        return super().format(bounded(record))

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return _utc_time(record)


def log_config(level: str, fmt: LogFormat) -> dict[str, Any]:
    level = level.upper()
    formatter = TextFormatter if fmt == "text" else JsonFormatter
    to_stderr = {"handlers": ["stderr"], "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"line": {"()": f"{formatter.__module__}.{formatter.__qualname__}"}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "line", "stream": "ext://sys.stderr"}},
        "loggers": {
            "nearrpc": {**to_stderr, "level": level},
            STARTUP_LOGGER: {"level": min(logging.INFO, logging.getLevelName(level))},
            "uvicorn": {**to_stderr, "level": level},
            "uvicorn.error": {"level": level},
            # uvicorn.access has its own level (uvicorn sets it); --access-log decides if it logs
            "uvicorn.access": {**to_stderr, "level": "INFO"},
        },
        # any other library's warnings (asyncio's, ...) through the same bounded line, not
        # logging's last-resort handler
        "root": {"handlers": ["stderr"], "level": "WARNING"},
    }


def configure_logging(level: str, fmt: LogFormat) -> None:
    """Apply the format in this process (uvicorn applies `log_config` in its workers)."""
    logging.config.dictConfig(log_config(level, fmt))
