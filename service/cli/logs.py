"""One log line format for nearrpc and uvicorn: UTC timestamps, as text or as JSON objects.

`log_config(level, fmt)` is a `logging.config.dictConfig` document; `nearrpc serve` hands it to
uvicorn, which applies it in every worker process, and applies it itself in the supervisor.

    2026-11-22T16:55:01.123Z INFO nearrpc.serve: serving data/x.sqlite (...) at http://127.0.0.1:3030/
    {"time": "2026-11-22T16:55:01.123Z", "level": "INFO", "logger": "nearrpc.serve", "pid": 4242, "message": "..."}

Extra fields a log call passes (`request_id`, `rpc_method`, ...) become members of the JSON
object; the text format shows them through the message itself.
"""

from __future__ import annotations

import logging
import logging.config
import time
from typing import Any, Final, Literal

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.orjson import OrjsonFormatter

LogFormat = Literal["text", "json"]

# The start-up lines (what is served where, or why not) show at every --log-level.
STARTUP_LOGGER: Final = "nearrpc.serve"
_TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _utc_time(record: logging.LogRecord) -> str:
    """ISO 8601 UTC with milliseconds, e.g. 2026-11-22T16:55:01.123Z."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__(_TEXT_FORMAT)

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
    }


def configure_logging(level: str, fmt: LogFormat) -> None:
    """Apply the format in this process (uvicorn applies `log_config` in its workers)."""
    logging.config.dictConfig(log_config(level, fmt))
