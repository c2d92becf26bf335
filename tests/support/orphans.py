"""Servers the suite starts end with the test process that started them, also when that process
is killed (a CI timeout, `timeout pytest`, a SIGKILL): they run in sessions of their own (so a
Ctrl-C to the tests does not reach them first), where nothing else would ever stop them; a
timed-out run once left fourteen `nearrpc serve` processes holding ports and CPU behind it."""

from __future__ import annotations

import ctypes
import signal
import sys

_PR_SET_PDEATHSIG = 1  # linux/prctl.h
# looked up here, in the parent: the child between fork and exec only makes the call (loading a
# library there could wait forever on a lock another thread of the parent held at the fork)
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None


def end_with_parent() -> None:
    """For `subprocess.Popen(preexec_fn=...)`: the kernel sends the child SIGTERM when the thread
    that started it ends (Linux; elsewhere nothing changes)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGTERM)
