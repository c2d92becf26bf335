"""Compiled modules are kept per code hash (bounded), and calls on many threads do not mix."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from nearrpc.contracts import ViewCallError, ViewEngine, run_view
from tests.contracts.support import CONTEXT, COSTS, IMPORTS, DictState, code_hash, module, run

STORAGE = IMPORTS + '(import "env" "storage_read" (func $storage_read (param i64 i64 i64) (result i64)))'
GET = module(
    '(data (i32.const 0) "STATE") (func (export "get")'
    " (drop (call $storage_read (i64.const 5) (i64.const 0) (i64.const 0)))"
    " (call $value_return (i64.const -1) (i64.const 0)))",
    STORAGE,
)


def test_the_same_code_hash_compiles_once() -> None:
    engine = ViewEngine()
    for value in (b"1", b"2", b"3"):
        assert run(GET, "get", state=DictState({b"STATE": value}), engine=engine).result == value
    assert engine.compilations == 1
    other = module('(func (export "get"))')
    run(other, "get", engine=engine)
    assert engine.compilations == 2


def test_a_failed_compilation_is_kept_too() -> None:
    engine = ViewEngine()
    for _ in range(2):
        with pytest.raises(ViewCallError):
            run(b"\x00asm\x01\x00\x00\x00\xff", "get", engine=engine)
    assert len(engine._cache) == 1


def test_the_cache_is_bounded_least_recently_used_first() -> None:
    engine = ViewEngine(cache_size=2)
    codes = [module(f'(func (export "get")) (func (export "f{i}"))') for i in range(3)]
    run(codes[0], "get", engine=engine)
    run(codes[1], "get", engine=engine)
    run(codes[0], "get", engine=engine)  # codes[0] is now the most recent
    run(codes[2], "get", engine=engine)  # evicts codes[1]
    assert engine.compilations == 3
    run(codes[0], "get", engine=engine)
    assert engine.compilations == 3
    run(codes[1], "get", engine=engine)
    assert engine.compilations == 4


def test_calls_on_many_threads_each_see_their_own_state_and_context() -> None:
    code = module(
        '(data (i32.const 0) "STATE") (func (export "get")'
        " (drop (call $storage_read (i64.const 5) (i64.const 0) (i64.const 0)))"
        " (call $current_account_id (i64.const 1)) (call $read_register (i64.const 1) (i64.const 100))"
        " (call $log_utf8 (call $register_len (i64.const 1)) (i64.const 100))"
        " (call $value_return (i64.const -1) (i64.const 0)))",
        STORAGE + '(import "env" "current_account_id" (func $current_account_id (param i64)))',
    )

    def call(i: int) -> tuple[bytes, list[str]]:
        context = replace(CONTEXT, account_id=f"a{i}.near")
        state = DictState({b"STATE": str(i).encode()})
        outcome = run_view(code, code_hash(code), "get", b"", context, state, COSTS)
        return outcome.result, outcome.logs

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(call, range(64)))
    assert results == [(str(i).encode(), [f"a{i}.near"]) for i in range(64)]


def test_a_compiled_module_is_kept_per_memory_config_too() -> None:
    # the prepared module declares the protocol's memory, so a config with other memory limits
    # compiles its own (nearcore's compiled-contract cache key holds the VM config)
    engine = ViewEngine()
    probe = module(
        '(func (export "get") (i64.store (i32.const 0) (i64.extend_i32_s (memory.size)))'
        " (call $value_return (i64.const 8) (i64.const 0)))"
    )
    small = replace(COSTS, initial_memory_pages=2, max_memory_pages=3)
    assert run(probe, "get", engine=engine).result == (1024).to_bytes(8, "little")
    assert run(probe, "get", engine=engine, costs=small).result == (2).to_bytes(8, "little")
    assert engine.compilations == 2


class _Failing:
    """A store whose read fails, with the caller's own failure (as a store that went away)."""

    def __init__(self, i: int) -> None:
        self.i = i

    def storage_read(self, key: bytes) -> bytes | None:
        raise LookupError(f"store {self.i} failed")


def test_a_host_functions_failure_reaches_the_caller_as_itself_on_its_own_thread() -> None:
    # the failure crosses the wasm frames as a trap and is raised again where the call returns
    # (contracts.wasm_api), kept per thread: each caller gets its own
    code = module(
        '(data (i32.const 0) "STATE") (func (export "get")'
        " (drop (call $storage_read (i64.const 5) (i64.const 0) (i64.const 0))))",
        STORAGE,
    )

    def call(i: int) -> str:
        try:
            run_view(code, code_hash(code), "get", b"", CONTEXT, _Failing(i), COSTS)
        except LookupError as failure:
            return str(failure)
        return "no failure"

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(call, range(32))) == [f"store {i} failed" for i in range(32)]
    # and the next call on those threads is not answered with a stale failure
    assert run(code, "get", state=DictState({b"STATE": b"1"})).result == b""
