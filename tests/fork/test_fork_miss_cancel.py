"""A fork's fetch goes when nobody waits for it any more (fork.misses, issue 43 item 2): a view
call stopped (its deadline, its client gone) cancels the upstream fetch it alone waited for; a
fetch others still wait for goes on; one whose answer is being written is written whole."""

from __future__ import annotations

import asyncio
from typing import Any

from nearrpc.fork.misses import ForkMisses


class _Writer:
    def __init__(self) -> None:
        self.started = self.finished = 0

    async def write(self, writes: Any) -> None:
        self.started += 1
        await asyncio.sleep(0.05)
        self.finished += 1


class _Misses(ForkMisses):
    """ForkMisses over no upstream: only the single flight is exercised."""

    def __init__(self) -> None:
        self._writer: Any = _Writer()
        self._miss_timeout = 30.0
        self._observe = None
        self._running = {}
        self._waiters = {}
        self._writing = set()
        self._settled = {}
        self.fetches = self.cancelled = 0

    async def _check_chain(self) -> None:
        return None

    async def slow_fetch(self) -> tuple[str, Any]:
        self.fetches += 1
        try:
            await asyncio.sleep(30)  # an upstream that takes its time
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return "value", None

    async def quick_fetch_kept(self) -> tuple[str, Any]:
        return "value", object()  # its answer is written


async def _settle_a_bit() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_the_last_waiter_to_go_cancels_the_fetch() -> None:
    async def scenario() -> _Misses:
        misses = _Misses()
        first = asyncio.create_task(misses._miss("k", misses.slow_fetch))
        second = asyncio.create_task(misses._miss("k", misses.slow_fetch))
        await _settle_a_bit()
        assert misses.fetches == 1  # one fetch for both
        first.cancel()
        await _settle_a_bit()
        assert misses.cancelled == 0 and "k" in misses._running  # the other still waits
        second.cancel()
        await _settle_a_bit()
        assert misses.cancelled == 1 and misses._running == {} and misses._waiters == {}
        return misses

    asyncio.run(scenario())


def test_a_fetch_being_written_is_written_whole() -> None:
    async def scenario() -> _Writer:
        misses = _Misses()
        waiter = asyncio.create_task(misses._miss("k", misses.quick_fetch_kept))
        while misses._writer.started == 0:
            await asyncio.sleep(0)
        waiter.cancel()
        await asyncio.sleep(0.1)
        return misses._writer  # type: ignore[no-any-return]

    writer = asyncio.run(scenario())
    assert (writer.started, writer.finished) == (1, 1)
