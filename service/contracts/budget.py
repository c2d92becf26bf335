"""The memory budget of the executions in flight: the bytes their registers and return values
hold, summed over every call run on a worker, kept under one bound for the process.

nearcore bounds a call's registers (`registers_memory_limit`, 1 GiB) and its return
(`max_length_returned_data`, 4 MiB) per call; a node that runs a few calls at a time stays
within its memory. Here any number of clients may ask at once, so the calls share one budget: a
register write or a return that would take the sum past it stops that call (ExecutionInterrupted
MEMORY, answered as the node's own failure, INTERNAL_ERROR), and what a call holds is given back
when it ends. A call's instance memory is bounded apart from it: nearcore's `max_memory_pages`
per instance, times the workers that run calls (methods.view_calls).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from typing import Final

from nearrpc.contracts.interrupt import MEMORY, ExecutionInterrupted

EXECUTION_MEMORY_MB: Final = 256  # the default budget (`serve --view-memory-mb`)


class MemoryBudget:
    """Bytes taken and given back by the calls in flight, at most `limit` at once; thread-safe."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.refused = 0  # takes refused so far
        self._lock = threading.Lock()

    def take(self, size: int) -> None:
        """Hold `size` more bytes, or raise ExecutionInterrupted(MEMORY) holding nothing more."""
        with self._lock:
            if self.used + size > self.limit:
                self.refused += 1
                raise ExecutionInterrupted(MEMORY)
            self.used += size

    def give(self, size: int) -> None:
        with self._lock:
            self.used -= size


# glibc's mallopt parameter: allocations from this size up are mapped apart and unmapped when freed
_M_MMAP_THRESHOLD: Final = -3
LARGE_BUFFER_BYTES: Final = 1 << 20


def return_large_buffers() -> bool:
    """Have the C allocator give large buffers (registers, memory reads, returns: up to 100 MiB
    each) back to the system as soon as they are freed. By default glibc raises its threshold for
    that after the first such buffer is freed, and then serves them from the worker threads'
    arenas, which keep the memory: measured here, calls writing 16 MiB registers took the RSS to
    1.25 GB while the budget held 256 MiB of registers. Whether it was set (glibc only)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, LARGE_BUFFER_BYTES))
    except (OSError, AttributeError):
        return False
