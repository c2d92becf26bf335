"""Stopping a running view call from outside: its wall-clock deadline, its client gone, the server
stopping. The gas limit bounds the instructions a call runs, not the time it takes (a storage read
through a fork waits on an upstream; a busy machine runs fewer instructions a second), so each
call run on a worker carries an `Interrupt`, which the engine checks through Wasmtime's epoch
interruption: a ticker thread advances the engine's epoch every `TICK_SECONDS` while calls run,
and at each tick a running call's store asks its interrupt whether to go on (the engine's epoch
deadline callback, engine.py). A call told to stop traps at its next loop head or function entry,
so the worker thread is free again within a tick, rather than abandoned burning CPU.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Final

TICK_SECONDS: Final = 0.01  # the epoch's period while any interruptible call runs

# why a call was stopped (ExecutionInterrupted.reason)
DEADLINE: Final = "deadline"  # its wall-clock deadline passed
CANCELLED: Final = "cancelled"  # its client went away: nobody waits for the answer
SHUTDOWN: Final = "shutdown"  # the server is stopping
SLICE: Final = "slice"  # its time on the fast lane ran out: it goes on in the slow lane (not an answer)
BUSY: Final = "busy"  # the slow lane was full when it needed it
MEMORY: Final = "memory"  # its registers and return would take the executions' memory budget past its bound


class ExecutionInterrupted(Exception):
    """A call stopped before it ended, for `reason` (DEADLINE, CANCELLED or SHUTDOWN)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Interrupt:
    """One call's stop signal: a deadline (monotonic seconds, None for none) and a stop that
    any thread may ask. What the call waits on meanwhile (a storage read's future) registers a
    canceller, run when the stop is asked."""

    def __init__(self, timeout: float | None = None) -> None:
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self._stopped: str | None = None
        self._lock = threading.Lock()
        self._cancellers: list[Callable[[], object]] = []
        self._slice: float | None = None  # seconds of running before SLICE (`begin`)
        self._slice_end: float | None = None  # set when the run begins (`arm`)
        self.began = time.monotonic()  # when a worker took the call up (`begin`)

    def begin(self, timeout: float | None, slice_seconds: float | None = None) -> None:
        """Start the clock as a worker takes the call up (its wait for the worker is not
        counted): the deadline `timeout` seconds from now, and, with `slice_seconds`, SLICE that
        long after the contract starts running (`arm`: compiling first is not counted)."""
        self.began = time.monotonic()
        self.deadline = None if timeout is None else self.began + timeout
        self._slice, self._slice_end = slice_seconds, None

    def arm(self) -> None:
        """The contract begins to run: its slice starts now."""
        if self._slice is not None:
            self._slice_end = time.monotonic() + self._slice

    def reason(self) -> str | None:
        """Why the call must stop now, or None to go on."""
        if self._stopped is not None:
            return self._stopped
        if self.deadline is None and self._slice_end is None:
            return None
        now = time.monotonic()
        if self.deadline is not None and now >= self.deadline:
            return DEADLINE
        if self._slice_end is not None and now >= self._slice_end:
            return SLICE
        return None

    def check(self) -> None:
        """Raise ExecutionInterrupted if the call must stop."""
        reason = self.reason()
        if reason is not None:
            raise ExecutionInterrupted(reason)

    def remaining(self) -> float | None:
        """Seconds left before the deadline or the slice's end, the sooner (None: neither)."""
        ends = [end for end in (self.deadline, self._slice_end) if end is not None]
        return None if not ends else max(0.0, min(ends) - time.monotonic())

    def stop(self, reason: str) -> None:
        """Ask the call to stop (the first reason given stands), cancelling what it waits on."""
        with self._lock:
            if self._stopped is None:
                self._stopped = reason
            cancellers, self._cancellers = self._cancellers, []
        for cancel in cancellers:
            cancel()

    def on_stop(self, cancel: Callable[[], object]) -> Callable[[], None]:
        """Run `cancel` when the call is stopped (at once if it is already); returns the function
        that takes it back (once what it cancels is done)."""
        with self._lock:
            stopped = self._stopped is not None
            if not stopped:
                self._cancellers.append(cancel)
        if stopped:
            cancel()

        def forget() -> None:
            with self._lock:
                if cancel in self._cancellers:
                    self._cancellers.remove(cancel)

        return forget


class EpochTicker:
    """Advances an engine's epoch every `period` seconds while at least one call runs (`begin` /
    `end`), and sleeps otherwise; its thread starts with the first call."""

    def __init__(self, advance: Callable[[], None], period: float = TICK_SECONDS) -> None:
        self._advance = advance
        self._period = period
        self._running = 0
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self.ticks = 0

    def begin(self) -> None:
        with self._wake:
            self._running += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="nearrpc-epoch", daemon=True)
                self._thread.start()
            self._wake.notify()

    def end(self) -> None:
        with self._wake:
            self._running -= 1

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._running == 0:
                    self._wake.wait()
            time.sleep(self._period)
            self._advance()
            self.ticks += 1
