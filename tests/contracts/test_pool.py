"""Calls allocate from Wasmtime's pooling allocator (engine.py, POOL_BOUNDS) without changing an
answer:
- a module past the pool's bounds (a table longer than its slots, two tables: possible under a
  protocol whose prepare step sets no table limits) runs on the engine that allocates per call,
  answering what an engine without a pool answers (the store's limits at instantiation);
- a module within them runs from the pool, and a memory handed back to the pool comes to the next
  call as a new one (zeroed: what one call wrote, another never reads);
- more calls at once than the pool has slots wait for one, none fails;
- a process whose address space cannot hold the pool runs its calls without one (said once).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from nearrpc.contracts import ViewCallError, ViewEngine, ViewOutcome
from tests.contracts.support import COSTS, IMPORTS, module, run

ROOT = Path(__file__).resolve().parents[2]
# a protocol whose prepare step checks no table (older protocols): only the store's limits apply
UNCHECKED_TABLES = replace(COSTS, prepare_max_tables=None, prepare_max_table_elements=None)


def _answer(code: bytes, engine: ViewEngine) -> ViewOutcome | str:
    try:
        return run(code, "m", costs=UNCHECKED_TABLES, engine=engine)
    except ViewCallError as failure:
        return failure.debug


@pytest.mark.parametrize(
    "tables",
    [
        f"(table {COSTS.max_elements_per_contract_table + 1} funcref)",
        "(table 1 funcref) (table 1 funcref)",
        f"(table {COSTS.max_elements_per_contract_table + 1} funcref) (table 1 funcref)",
    ],
)
def test_a_module_past_the_pools_bounds_answers_as_without_a_pool(tables: str) -> None:
    code = module(f'{tables} (func (export "m"))')
    pooled = ViewEngine()
    assert pooled._spare is None
    answer = _answer(code, pooled)
    assert pooled._spare is not None  # the pool refused it: the engine without one ran it
    assert answer == _answer(code, ViewEngine(pool_slots=None))
    assert isinstance(answer, str) and answer.startswith("LinkError")


def test_a_module_within_the_bounds_runs_from_the_pool_on_a_zeroed_memory() -> None:
    # `m` returns the byte at 40,000 (inside the memory kept resident between calls: zeroed in
    # place) and the byte at 200,000 (past it: handed back to the kernel), then writes both
    body = """
     (func (export "m")
      (i32.store8 (i32.const 0) (i32.add (i32.const 48) (i32.load8_u (i32.const 40000))))
      (i32.store8 (i32.const 1) (i32.add (i32.const 48) (i32.load8_u (i32.const 200000))))
      (i32.store8 (i32.const 40000) (i32.const 7))
      (i32.store8 (i32.const 200000) (i32.const 9))
      (call $value_return (i64.const 2) (i64.const 0)))"""
    code = module(body, IMPORTS, memory="(memory 4)")
    engine = ViewEngine(pool_slots=1)  # one slot: every call reuses the same memory
    for _ in range(3):
        assert run(code, "m", engine=engine).result == b"00"
    assert engine._spare is None


def test_more_calls_at_once_than_slots_wait_for_one() -> None:
    # each call loops 20,000 times: long enough that the eight overlap on two slots
    body = """
     (func (export "m") (local $i i32)
      (loop $again
       (local.set $i (i32.add (local.get $i) (i32.const 1)))
       (br_if $again (i32.lt_u (local.get $i) (i32.const 20000))))
      (call $value_return (i64.const 2) (i64.const 0)))
     (data (i32.const 0) "ok")"""
    results, failures = _at_once(8, module(body), ViewEngine(pool_slots=2))
    assert failures == []
    assert results == [b"ok"] * 8


def _at_once(calls: int, code: bytes, engine: ViewEngine) -> tuple[list[bytes], list[str]]:
    """`calls` calls of `m` started together on threads: their results, and their failures."""
    results: list[bytes] = []
    failures: list[str] = []
    start = threading.Barrier(calls)

    def call() -> None:
        start.wait()
        try:
            results.append(run(code, "m", engine=engine).result)
        except ViewCallError as failure:
            failures.append(failure.debug)

    threads = [threading.Thread(target=call) for _ in range(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results, failures


def test_an_address_space_too_small_for_the_pool_runs_calls_without_one() -> None:
    # Wasmtime aborts the process when its pool cannot be mapped: the engine asks first. A child
    # process capped at 16 GB of address space (the pool reserves about 130)
    script = (
        "import logging; logging.basicConfig(level=logging.WARNING)\n"
        "from tests.contracts.support import module, run\n"
        "from nearrpc.contracts import ViewEngine\n"
        "engine = ViewEngine()\n"
        'code = module(\'(data (i32.const 0) "ok") (func (export "m")\'\n'
        "              ' (call $value_return (i64.const 2) (i64.const 0)))')\n"
        "print(engine._main.pooled, run(code, 'm', engine=engine).result)\n"
    )

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (16 << 30, 16 << 30))

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          preexec_fn=cap, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False b'ok'"
    assert "cannot hold Wasmtime's pool of 32 memories" in done.stderr


def test_a_module_dropped_while_calls_run_never_fails_one() -> None:
    # eight threads ask for a module not compiled yet: several compile it at once, the copies not
    # kept are dropped while the others' calls instantiate, and Wasmtime holds a dropped module's
    # warm slots while it clears them (without the engine's retry about one round in sixty
    # answered "maximum concurrent limit of 2 ... reached" as a LinkError)
    failures: list[str] = []
    for round_ in range(60):
        code = module(f'(data (i32.const 0) "ok") (func (export "m") (call $value_return (i64.const 2) (i64.const 0)))'
                      f' (global i32 (i32.const {round_}))')  # fmt: skip
        failures += _at_once(8, code, ViewEngine(pool_slots=2))[1]
    assert failures == []
