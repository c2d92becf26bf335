"""Progress of a long import, drawn as a rich progress bar on stderr when it is a terminal."""

from __future__ import annotations

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


class Progress:
    """Progress towards `total` (None: unknown) in `unit` ("B" for bytes, else a noun).

    Extra counters (records, requests) are shown after the bar with their rate.
    """

    def __init__(self, label: str, total: int | None, unit: str, console: Console | None = None) -> None:
        console = console if console is not None else Console(stderr=True)
        columns: list[ProgressColumn | str] = [TextColumn("{task.description}"), BarColumn(), TaskProgressColumn()]
        if unit == "B":
            columns += [DownloadColumn(), TransferSpeedColumn()]
        else:
            columns += [MofNCompleteColumn(), TextColumn(unit)]
        columns += [TextColumn("{task.fields[counters]}"), TimeRemainingColumn()]
        self._bar = RichProgress(*columns, console=console, disable=not console.is_terminal)
        self._task = self._bar.add_task(label, total=total, counters="")
        self._counters: dict[str, int] = {}
        self._started = time.monotonic()
        self._bar.start()

    def update(self, done: int | None = None, *, advance: int = 0, **counters: int) -> None:
        """Set (`done`) or advance the main count; set extra counters (e.g. records=1200)."""
        self._counters.update(counters)
        if done is not None:
            self._bar.update(self._task, completed=done, counters=self._counter_text())
        else:
            self._bar.update(self._task, advance=advance, counters=self._counter_text())

    def count(self, name: str, amount: int = 1) -> None:
        """Add to an extra counter (e.g. one more request)."""
        self._counters[name] = self._counters.get(name, 0) + amount
        self._bar.update(self._task, counters=self._counter_text())

    def _counter_text(self) -> str:
        elapsed = max(time.monotonic() - self._started, 1e-9)
        return "  ".join(f"{count} {name} ({count / elapsed:.0f}/s)" for name, count in self._counters.items())

    def close(self) -> None:
        """Draw the final state and end the line."""
        self._bar.stop()
