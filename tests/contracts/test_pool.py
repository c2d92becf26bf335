"""Calls allocate from Wasmtime's pooling allocator (engine.py, POOL_BOUNDS) without changing an
answer:
- a module past the pool's bounds (a table longer than its slots, two tables: possible under a
  protocol whose prepare step sets no table limits) runs on the engine that allocates per call,
  answering what an engine without a pool answers (the store's limits at instantiation);
- a module within them runs from the pool, and a memory handed back to the pool comes to the next
  call as a new one (zeroed: what one call wrote, another never reads);
- more calls at once than the pool has slots wait for one, none fails.
"""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from nearrpc.contracts import ViewCallError, ViewEngine, ViewOutcome
from tests.contracts.support import COSTS, IMPORTS, module, run

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
    code = module(body)
    engine = ViewEngine(pool_slots=2)
    results: list[bytes] = []
    failures: list[BaseException] = []
    start = threading.Barrier(8)

    def call() -> None:
        start.wait()
        try:
            results.append(run(code, "m", engine=engine).result)
        except BaseException as failure:  # noqa: BLE001 - reported by the assertion below
            failures.append(failure)

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    assert results == [b"ok"] * 8
