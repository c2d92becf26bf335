"""Progress of a long import: a rich progress bar on stderr when it is a terminal, else log lines.

Under nohup, in a container or a CI job, stderr is a file or a pipe; a bar would draw nothing
there, so the same progress is logged every `log_every` seconds (and once at the end) as
    genesis: 512.0 MiB of 2.0 GiB (25%), 120000 records (1700/s), 32 s
Notes (e.g. a request being retried) print above the bar, or are logged as warnings.
"""

from __future__ import annotations

import logging
import time

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    ProgressColumn,
    TaskProgressColumn,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.progress import Progress as RichProgress

log = logging.getLogger("nearrpc.import")

DEFAULT_LOG_EVERY = 10.0  # seconds between progress lines when stderr is not a terminal


def _size(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


class Progress:
    """Progress towards `total` (None: unknown) in `unit` ("B" for bytes, else a noun).

    Extra counters (records, requests) are shown after the bar with their rate.
    """

    def __init__(
        self, label: str, total: int | None, unit: str, console: Console | None = None,
        log_every: float = DEFAULT_LOG_EVERY,
    ) -> None:
        console = console if console is not None else Console(stderr=True)
        columns: list[ProgressColumn | str] = [TextColumn("{task.description}"), BarColumn(), TaskProgressColumn()]
        if unit == "B":
            columns += [DownloadColumn(), TransferSpeedColumn()]
        else:
            columns += [MofNCompleteColumn(), TextColumn(unit)]
        columns += [TextColumn("{task.fields[counters]}"), TimeRemainingColumn()]
        self._drawn = console.is_terminal
        self._bar = RichProgress(*columns, console=console, disable=not self._drawn)
        self._task = self._bar.add_task(label, total=total, counters="")
        self._label, self._total, self._unit = label, total, unit
        self._done = 0
        self._counters: dict[str, int] = {}
        self._started = time.monotonic()
        self._log_every = log_every
        self._next_line = self._started + log_every
        self._logged: tuple[int, tuple[tuple[str, int], ...]] | None = None  # the state last logged
        self._bar.start()

    def update(self, done: int | None = None, *, advance: int = 0, **counters: int) -> None:
        """Set (`done`) or advance the main count; set extra counters (e.g. records=1200)."""
        self._counters.update(counters)
        self._done = done if done is not None else self._done + advance
        self._bar.update(self._task, completed=self._done, counters=self._counter_text())
        self._maybe_log()

    def count(self, name: str, amount: int = 1) -> None:
        """Add to an extra counter (e.g. one more request)."""
        self._counters[name] = self._counters.get(name, 0) + amount
        self._bar.update(self._task, counters=self._counter_text())
        self._maybe_log()

    def note(self, message: str) -> None:
        """Something the operator should see now (a retry): above the bar, or a log warning."""
        if self._drawn:
            self._bar.console.print(message, markup=False, highlight=False)
        else:
            log.warning("%s: %s", self._label, message)

    def _counter_text(self) -> str:
        elapsed = max(time.monotonic() - self._started, 1e-9)
        return "  ".join(f"{count} {name} ({count / elapsed:.0f}/s)" for name, count in self._counters.items())

    def _line(self) -> str:
        """e.g. `recording: 50/200 heights (25%), 120 requests (40/s), 3 s`."""
        if self._unit == "B":
            done = _size(self._done) + (f" of {_size(self._total)}" if self._total else "")
        else:
            done = f"{self._done}" + (f"/{self._total}" if self._total is not None else "") + f" {self._unit}"
        if self._total:
            done += f" ({100 * self._done / self._total:.0f}%)"
        parts = [done, *(self._counter_text().split("  ") if self._counters else ())]
        return f"{self._label}: {', '.join(parts)}, {time.monotonic() - self._started:.0f} s"

    def _maybe_log(self) -> None:
        if self._drawn:
            return
        now = time.monotonic()
        if now >= self._next_line:
            self._next_line = now + self._log_every
            self._log_line()

    def _log_line(self) -> None:
        self._logged = (self._done, tuple(self._counters.items()))
        log.info("%s", self._line())

    def close(self) -> None:
        """Draw the last state and end the line; or log it, when progress lines were logged and
        it moved on since (an import that ends before its first line logs none: its summary, or
        its error, is the one thing to say)."""
        self._bar.stop()
        if not self._drawn and self._logged not in (None, (self._done, tuple(self._counters.items()))):
            self._log_line()
