"""The memory of executions in flight has a budget (issue 43 item 1; contracts.budget): the
registers and return values of the calls run on workers count against one bound, and a call
that would take it past the bound is stopped and answered INTERNAL_ERROR, giving back what it
held; a call within it answers as before. The compiled modules kept in memory are bounded by
their size, not only their count (contracts.engine)."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from pathlib import Path

import pytest

from nearrpc.contracts import (
    MEMORY,
    ExecutionInterrupted,
    Interrupt,
    MemoryBudget,
    ViewCallError,
    ViewEngine,
    default_engine,
)
from nearrpc.methods.view_calls import ViewRunner, interrupted_error
from nearrpc.store import open_store
from tests.contracts.support import CONTEXT, IMPORTS, DictState, module, run, with_limit

COSTS = with_limit(10**14)
MIB = 1 << 20


def _register_of(size: int) -> bytes:
    """A contract writing `size` bytes of its memory into register 0, then returning 3 bytes."""
    return module(
        f'(func (export "m") (call $write_register (i64.const 0) (i64.const {size}) (i64.const 0))'
        " (call $value_return (i64.const 3) (i64.const 0)))",
        IMPORTS,
        memory="(memory 64)",
    )


def _call(sample_store: Path, code: bytes, name: str) -> bytes | str:
    async def call() -> bytes | str:
        reader = open_store(sample_store, "serve")
        runner = ViewRunner()
        try:
            return (await runner.run(reader, code, name, "m", b"", CONTEXT, COSTS)).result
        except ExecutionInterrupted as stopped:
            return stopped.reason
        finally:
            runner.close()
            await reader.close()

    return asyncio.run(call())


def test_a_call_past_the_budget_is_refused_and_gives_back_what_it_held(
    sample_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = MemoryBudget(2 * MIB)
    monkeypatch.setattr(default_engine(), "budget", budget)
    # 3 MiB of registers: nearcore's per-call limit (1 GiB) allows it, the process's budget does not
    assert _call(sample_store, _register_of(3 * MIB), "budget-big") == MEMORY
    assert (budget.refused, budget.used) == (1, 0)
    # within the budget the same contract answers as ever, and holds nothing once answered
    assert _call(sample_store, _register_of(MIB), "budget-small") == bytes(3)
    assert budget.used == 0
    error = interrupted_error(MEMORY)
    assert (str(error.kind.cause), error.kind.http_status) == ("INTERNAL_ERROR", 500)
    assert "--view-memory-mb" in str(error.info)


def test_calls_in_flight_share_the_budget(sample_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    budget = MemoryBudget(2 * MIB)
    monkeypatch.setattr(default_engine(), "budget", budget)
    budget.take(int(1.5 * MIB))  # what another call holds meanwhile
    assert _call(sample_store, _register_of(MIB), "budget-shared") == MEMORY
    budget.give(int(1.5 * MIB))
    assert _call(sample_store, _register_of(MIB), "budget-shared-after") == bytes(3)


def test_the_module_cache_is_bounded_by_bytes() -> None:
    padding = "x" * 40_000
    codes = [module(f'(func (export "m")) (data (i32.const 0) "{i}{padding}")') for i in range(4)]
    engine = ViewEngine(cache_bytes=100_000)  # room for two of these modules, though 64 by count
    for code in codes:
        run(code, "m", engine=engine)
    assert engine.cached_bytes <= 100_000 and len(engine._cache) == 2
    run(codes[3], "m", engine=engine)  # the most recent is kept
    assert engine.compilations == 4
    run(codes[0], "m", engine=engine)  # the oldest went
    assert engine.compilations == 5


def test_a_failed_call_lets_its_buffers_go_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call that fails after writing a large register holds none of it once it has failed,
    without the cyclic collector's help: its failure's traceback kept the call's frames alive in
    a cycle, and with them its last 8 MiB buffer (measured: RSS grew 128 MB a call, 1.25 GB
    under 8 calls flooding registers, while the budget held 256 MiB)."""
    flood = module(
        '(func (export "m") (loop $l (call $write_register (i64.const 0) (i64.const 8388608) (i64.const 0))'
        " (br $l)))",
        IMPORTS,
    )
    engine = ViewEngine()
    interrupt = Interrupt()
    interrupt.begin(30)
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        with pytest.raises(ViewCallError):  # its gas ends the loop
            engine.run_view(flood, "flood-failed", "m", b"", CONTEXT, DictState(), with_limit(10**14), None, None,
                            interrupt)  # fmt: skip
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        gc.enable()
    assert held < MIB
