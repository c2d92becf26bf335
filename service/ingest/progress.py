"""A one-line progress bar with throughput, drawn on stderr only when it is a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO

_REDRAW_SECONDS = 0.1
_WIDTH = 28


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _amount(value: float, unit: str) -> str:
    if unit == "B":
        for scale, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
            if value >= scale:
                return f"{value / scale:.1f} {name}"
        return f"{value:.0f} B"
    return f"{value:.0f} {unit}"


class Progress:
    """Progress towards `total` (None: unknown) in `unit` ("B" for bytes, else a noun).

    `extra` counters (e.g. records, requests) are shown with their own rate.
    """

    def __init__(self, label: str, total: int | None, unit: str, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._enabled = self._stream.isatty()
        self._label = label
        self._total = total
        self._unit = unit
        self._done = 0
        self._extra: dict[str, int] = {}
        self._started = time.monotonic()
        self._drawn = 0.0

    @property
    def enabled(self) -> bool:
        return self._enabled

    def update(self, done: int | None = None, *, advance: int = 0, **counters: int) -> None:
        """Set (`done`) or advance the main count; set extra counters (e.g. records=1200)."""
        self._done = done if done is not None else self._done + advance
        self._extra.update(counters)
        self._redraw()

    def count(self, name: str, amount: int = 1) -> None:
        """Add to an extra counter (e.g. one more request)."""
        self._extra[name] = self._extra.get(name, 0) + amount
        self._redraw()

    def _redraw(self) -> None:
        now = time.monotonic()
        if self._enabled and now - self._drawn >= _REDRAW_SECONDS:
            self._drawn = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        elapsed = max(now - self._started, 1e-9)
        parts = [self._label]
        if self._total:
            share = min(self._done / self._total, 1.0)
            filled = int(share * _WIDTH)
            parts.append(f"[{'#' * filled}{'.' * (_WIDTH - filled)}] {share:4.0%}")
            if self._unit == "B":
                parts.append(f"{_amount(self._done, 'B')}/{_amount(self._total, 'B')}")
            else:
                parts.append(f"{self._done}/{self._total} {self._unit}")
        else:
            parts.append(_amount(self._done, self._unit))
        rate = self._done / elapsed
        parts.append(f"{_amount(rate, 'B')}/s" if self._unit == "B" else f"{rate:.1f} {self._unit}/s")
        parts.extend(f"{count} {name} ({count / elapsed:.0f}/s)" for name, count in self._extra.items())
        if self._total and self._done:
            parts.append(f"ETA {_duration(elapsed * (self._total - self._done) / self._done)}")
        self._stream.write("\r\x1b[K" + "  ".join(parts))
        self._stream.flush()

    def close(self) -> None:
        """Draw the final state and end the line."""
        if self._enabled:
            self._draw(time.monotonic())
            self._stream.write("\n")
            self._stream.flush()
