"""The two host-call crossings (wasm_api.py: the C extension `_crossing` and the ctypes callback
it replaces where it is built) answer alike: the same result, logs and gas, the same failure
with the same logs, the same exception out of a host function, over modules that cross with
each kind of argument and result, fail inside and outside host functions, run out of gas in
wasm and in a host function, and over the real contracts' recorded views."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import wasmtime

from bench.real_contracts_store import CODES, NFT, reference_contracts
from nearrpc.contracts import DEADLINE, ExecutionInterrupted, Interrupt, ViewCallError, ViewEngine, _crossing, wasm_api
from nearrpc.contracts.gas import GasCosts
from nearrpc.contracts.instrument import GAS_EXPORT
from nearrpc.contracts.prepare import MEMORY_EXPORT
from tests.contracts.support import CONTEXT, COSTS, IMPORTS, DictState, code_hash, module, with_limit
from tests.contracts.test_errors import PANICS, signature_of
from tests.contracts.test_real_contract_outcomes import CASES, outcome

STORAGE = IMPORTS + '(import "env" "storage_read" (func $storage_read (param i64 i64 i64) (result i64)))'
GAS_IMPORT = '(import "env" "gas" (func $gas (param i32)))'
UNAVAILABLE, UNAVAILABLE_CALL = signature_of("alt_bn128_g1_sum")
PROHIBITED, PROHIBITED_CALL = signature_of("promise_create")
# AssemblyScript strings for abort: u32 byte length, then UTF-16
STRINGS = '(data (i32.const 0) "\\04\\00\\00\\00o\\00k\\00") (data (i32.const 16) "\\02\\00\\00\\00f\\00")'

# (name, module, method, arguments, state, gas limit or None, slice gas and host calls or None)
Case = tuple[str, bytes, str, bytes, dict[bytes, bytes], int | None, tuple[int, int] | None]
MODULES: list[Case] = [
    ("echo the input", module('(func (export "m") (call $input (i64.const 0))'
                              ' (call $value_return (i64.const -1) (i64.const 0)))'), "m", b"abc", {}, None, None),
    # an unused register's length is u64::MAX: an i64 result past i64's range, read back unsigned
    ("u64 result", module('(func (export "m") (i64.store (i32.const 0) (call $register_len (i64.const 9)))'
                          ' (call $value_return (i64.const 8) (i64.const 0)))'), "m", b"", {}, None, None),
    ("read state", module('(func (export "m") (call $input (i64.const 0))'
                          ' (drop (call $storage_read (i64.const -1) (i64.const 0) (i64.const 1)))'
                          ' (call $value_return (i64.const -1) (i64.const 1)))', STORAGE),
     "m", b"k", {b"k": b"value"}, None, None),
    ("logs, then a panic", module('(data (i32.const 0) "before") (func (export "m")'
                                  ' (call $log_utf8 (i64.const 6) (i64.const 0))'
                                  ' (call $panic_utf8 (i64.const 6) (i64.const 0)))'), "m", b"", {}, None, None),
    # i32 arguments, negative ones sign-extended into the message as they always were
    ("i32 arguments", module(STRINGS + ' (func (export "m") (call $abort (i32.const 4) (i32.const 20)'
                             ' (i32.const -1) (i32.const -2147483648)))', PANICS), "m", b"", {}, None, None),
    ("a u32 of opcodes", module('(func (export "m") (call $gas (i32.const -1)))', IMPORTS + GAS_IMPORT),
     "m", b"", {}, None, None),
    ("out of gas in wasm", module('(func (export "m") (loop $l (drop (call $register_len (i64.const 0)))'
                                  ' (br $l)))'), "m", b"", {}, 10**12, None),
    ("out of gas in a host function", module('(func (export "m") (call $gas (i32.const 2000000000)))',
                                             IMPORTS + GAS_IMPORT), "m", b"", {}, 10**12, None),
    ("too many logs", module('(data (i32.const 0) "x") (func (export "m")'
                             ' (loop $l (call $log_utf8 (i64.const 1) (i64.const 0)) (br $l)))'),
     "m", b"", {}, None, None),
    ("a memory fault in a host function", module('(func (export "m")'
                                                 ' (call $value_return (i64.const 8) (i64.const 70000)))'),
     "m", b"", {}, None, None),
    ("a trap after host calls", module('(func (export "m") (call $input (i64.const 0)) unreachable)'),
     "m", b"x", {}, None, None),
    ("prohibited in a view", module(f'(func (export "m") {PROHIBITED_CALL})', IMPORTS + PROHIBITED),
     "m", b"", {}, None, None),
    ("not implemented here", module(f'(func (export "m") {UNAVAILABLE_CALL})', IMPORTS + UNAVAILABLE),
     "m", b"", {}, None, None),
    ("a slice's host calls", module('(func (export "m") (loop $l (drop (call $register_len (i64.const 0)))'
                                    ' (br $l)))'), "m", b"", {}, None, (10**15, 100)),
    ("a slice's gas", module('(func (export "m") (loop $l (drop (call $register_len (i64.const 0)))'
                             ' (br $l)))'), "m", b"", {}, None, (10**11, 10**6)),
]  # fmt: skip


def _answer(engine: ViewEngine, case: Case) -> tuple[object, ...]:
    _, code, method, args, state, limit, sliced = case
    costs = with_limit(limit) if limit is not None else with_limit(300 * 10**12)
    slice_gas, host_calls = sliced if sliced is not None else (None, None)
    try:
        done = engine.run_view(
            code, code_hash(code), method, args, CONTEXT, DictState(state), costs, slice_gas, host_calls
        )
    except ViewCallError as failure:
        return ("error", failure.debug, tuple(failure.logs))
    except Exception as failure:  # what a host function raised (SliceExhausted too), out of the call
        return ("raised", type(failure).__name__, str(failure))
    return ("ok", done.result, tuple(done.logs), done.burnt_gas)


@pytest.fixture(scope="module")
def engines() -> tuple[ViewEngine, ViewEngine]:
    return ViewEngine(native=True), ViewEngine(native=False)


def test_the_native_crossing_is_built() -> None:
    # the extension is a required part of the install (pyproject's ext-modules): here it is built
    assert wasm_api.NATIVE
    assert ViewEngine().native


# where the extension cannot be imported (a build without a C compiler), the ctypes crossing serves
WITHOUT_EXTENSION = """
import sys
sys.modules["nearrpc.contracts._crossing"] = None  # an import of it fails
from nearrpc.contracts import ViewEngine, wasm_api
from tests.contracts.support import module, run
assert not wasm_api.NATIVE and not ViewEngine().native
try:
    ViewEngine(native=True)
except ValueError:
    pass
else:
    raise AssertionError("a native engine without the extension")
code = module('(func (export "m") (call $input (i64.const 0)) (call $value_return (i64.const -1) (i64.const 0)))')
print(run(code, "m", b"echo"))
"""


def test_without_the_extension_host_calls_cross_through_ctypes() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTENSION],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ViewOutcome(result=b'echo', logs=[], burnt_gas=")


@pytest.mark.parametrize("case", MODULES, ids=lambda case: case[0])
def test_both_crossings_answer_alike(engines: tuple[ViewEngine, ViewEngine], case: Case) -> None:
    native, ctypes_crossing = engines
    answer = _answer(native, case)
    assert answer == _answer(ctypes_crossing, case)
    assert answer[0] in ("ok", "error", "raised")


def test_the_cases_cross_each_way_they_can_end(engines: tuple[ViewEngine, ViewEngine]) -> None:
    """The modules above reach answers, failures inside host functions, gas past the limit both
    in wasm and in a host function, and exceptions carried out of wasm."""
    answers = {case[0]: _answer(engines[0], case) for case in MODULES}
    assert answers["echo the input"] == ("ok", b"abc", (), answers["echo the input"][3])
    assert answers["u64 result"][1] == (2**64 - 1).to_bytes(8, "little")
    assert answers["i32 arguments"][2] == (f'ABORT: ok, filename: "f" line: {2**64 - 1} col: {2**64 - 2**31}',)
    assert (
        answers["out of gas in wasm"][1]
        == answers["out of gas in a host function"][1]
        == ("HostError(GasLimitExceeded)")
    )
    assert answers["not implemented here"][:2] == ("raised", "HostFunctionUnavailable")
    assert answers["a slice's host calls"] == answers["a slice's gas"] == ("raised", "SliceExhausted", "")


def test_the_real_contracts_answer_alike(engines: tuple[ViewEngine, ViewEngine]) -> None:
    if not (reference_contracts() / CODES[NFT]).is_file():
        pytest.skip(f"the example contracts are not in {reference_contracts()} (set NEARRPC_REFERENCE_DIR)")
    native, ctypes_crossing = engines
    for case in CASES:
        assert outcome(native, case) == outcome(ctypes_crossing, case), case


# Failures where the call's store is made and instantiated (wasm_api.Store: the C one and the
# ctypes one), and calls stopped by their Interrupt at an epoch tick:
# (name, module, method, costs, interrupt's deadline in seconds or None)
UNCHECKED_TABLES = replace(COSTS, prepare_max_tables=None, prepare_max_table_elements=None)
SPIN = '(func (export "m") (loop $l (br $l)))'
InstanceCase = tuple[str, bytes, str, GasCosts, float | None]
INSTANCE_CASES: list[InstanceCase] = [
    # prepare sets the memory's minimum to 1,024 pages (64 MiB): two bytes across its end
    ("a data segment past the memory", module(f'(data (i32.const {(64 << 20) - 1}) "xy") (func (export "m"))'),
     "m", COSTS, None),
    # prepare checks no table here (an older protocol's step): the store's limit refuses it
    ("a table past the store's limit",
     module(f'(table {COSTS.max_elements_per_contract_table + 1} funcref) (func (export "m"))'),
     "m", UNCHECKED_TABLES, None),
    ("a start function that traps", module('(func $s unreachable) (start $s) (func (export "m"))'),
     "m", COSTS, None),
    ("a start function that panics", module('(data (i32.const 0) "early") (func $s (call $log_utf8 (i64.const 5)'
                                            ' (i64.const 0)) (call $panic_utf8 (i64.const 5) (i64.const 0)))'
                                            ' (start $s) (func (export "m"))'), "m", COSTS, None),
    ("a start function out of gas", module(f'(func $s (loop $l (br $l))) (start $s) {SPIN}'),
     "m", with_limit(10**12), None),
    ("a start function, then the method", module('(data (i32.const 0) "startedm") (func $s (call $log_utf8'
                                                 ' (i64.const 7) (i64.const 0))) (start $s) (func (export "m")'
                                                 ' (call $value_return (i64.const 1) (i64.const 7)))'),
     "m", COSTS, None),
    ("interrupted in wasm", module(SPIN), "m", with_limit(10**17), 0.05),
    ("interrupted between host calls", module('(func (export "m") (loop $l (drop (call $register_len'
                                              ' (i64.const 0))) (br $l)))'), "m", with_limit(10**17), 0.05),
    ("an interrupt that never stops it", module('(func (export "m") (call $input (i64.const 0))'
                                                ' (call $value_return (i64.const -1) (i64.const 0)))'),
     "m", COSTS, 60.0),
]  # fmt: skip


def _instance_answer(engine: ViewEngine, case: InstanceCase) -> tuple[object, ...]:
    _, code, method, costs, seconds = case
    interrupt = None if seconds is None else Interrupt(seconds)
    try:
        done = engine.run_view(code, code_hash(code), method, b"in", CONTEXT, DictState(), costs, interrupt=interrupt)
    except ViewCallError as failure:
        return ("error", failure.debug, tuple(failure.logs))
    except ExecutionInterrupted as stopped:
        return ("interrupted", stopped.reason)
    return ("ok", done.result, tuple(done.logs), done.burnt_gas)


@pytest.mark.parametrize("case", INSTANCE_CASES, ids=lambda case: case[0])
def test_both_stores_answer_alike(engines: tuple[ViewEngine, ViewEngine], case: InstanceCase) -> None:
    native, ctypes_crossing = engines
    answer = _instance_answer(native, case)
    assert answer == _instance_answer(ctypes_crossing, case)


def test_the_store_cases_end_each_way_they_can(engines: tuple[ViewEngine, ViewEngine]) -> None:
    """Instantiation's trap and link error, the start function's trap, panic and gas limit, and
    an interrupt's stop, each as nearcore's runner words them (engine.py)."""
    answers = {case[0]: _instance_answer(engines[0], case) for case in INSTANCE_CASES}
    assert answers["a data segment past the memory"] == ("error", "WasmTrap(MemoryOutOfBounds)", ())
    limit = COSTS.max_elements_per_contract_table + 1
    assert answers["a table past the store's limit"] == (
        "error",
        f'LinkError {{ msg: "table minimum size of {limit} elements exceeds table limits" }}',
        (),
    )
    assert answers["a start function that traps"] == ("error", "WasmTrap(Unreachable)", ())
    assert answers["a start function that panics"] == (
        "error",
        'HostError(GuestPanic { panic_msg: "early" })',
        ("early",),
    )
    assert answers["a start function out of gas"] == ("error", "HostError(GasLimitExceeded)", ())
    assert answers["a start function, then the method"][:3] == ("ok", b"m", ("started",))
    assert answers["interrupted in wasm"] == answers["interrupted between host calls"] == ("interrupted", DEADLINE)
    assert answers["an interrupt that never stops it"][:3] == ("ok", b"in", ())


def test_the_c_store_refuses_what_it_does_not_have() -> None:
    # a store without its instance has no globals, memory or functions; deleted, nothing
    engine = ViewEngine(native=True, pool_slots=None)
    code = module('(func (export "m"))')
    compiled = engine.compiled(code, code_hash(code), COSTS)
    assert not isinstance(compiled, str)
    store = wasm_api.store_type(True)(compiled.engine_address, COSTS.max_memory_pages * 65536, 10, 1, 1 << 40, 0)
    assert not store.bound
    for ask in (store.get, store.memory_size, lambda: store.call(False), lambda: store.set(1)):
        with pytest.raises(RuntimeError):
            ask()
    with pytest.raises(RuntimeError):
        wasm_api.enter_crossing(object(), store)
    store.instantiate(compiled.pre_address, MEMORY_EXPORT, GAS_EXPORT, "m", None)
    assert store.bound and store.memory_size() == 64 << 20 and store.memory_base() != 0
    store.set(-5)
    assert store.get() == -5  # signed
    with pytest.raises(RuntimeError):
        store.call(True)  # it has no start function
    store.delete()
    store.delete()
    assert not store.bound
    with pytest.raises(RuntimeError):
        store.get()


def _own_host_store(handler: Any) -> tuple[Any, Any, Any]:
    """A module whose `run` calls the host function `f(i64)` (served by `handler` through the C
    crossing), instantiated in a C store: (the store, and the engine and host kept alive)."""
    engine = wasmtime.Engine()
    linker = wasmtime.Linker(engine)
    host = wasm_api.native_host(handler, ("i64",), ())
    wasm_api.define(linker, "env", "f", wasmtime.FuncType([wasmtime.ValType.i64()], []), host)
    wat = """(module (import "env" "f" (func $f (param i64))) (memory (export "memory") 1)
      (global (export "gas") (mut i64) (i64.const 1000)) (func (export "run") (call $f (i64.const 7))))"""
    pre = linker.instantiate_pre(wasmtime.Module(engine, wat))
    store = wasm_api.store_type(True)(wasm_api.address(engine.ptr()), 1 << 20, 100, 1, 1 << 40, 0)
    store.instantiate(wasm_api.address(pre.ptr()), "memory", "gas", "run", None)
    return store, (engine, linker, pre), host


def test_the_c_crossing_refuses_what_would_touch_a_freed_store() -> None:
    # each case crashed the process (a store's memory read after it was freed) before the C layer
    # held the entered store and marked a running one; now each is an exception
    deleted, _, kept = _own_host_store(lambda crossing, caller, gas, value: (None, gas))
    wasm_api.enter_crossing("call", deleted)
    deleted.delete()
    other, _, kept_too = _own_host_store(lambda crossing, caller, gas, value: (None, gas))
    with pytest.raises(RuntimeError, match="store is deleted"):
        other.call(False)  # the thread's entered store is the deleted one
    box: dict[str, Any] = {}

    def delete_own_store(crossing: object, caller: int, gas: int, value: int) -> tuple[None, int]:
        box["store"].delete()
        return None, gas

    running, _, kept_three = _own_host_store(delete_own_store)
    box["store"] = running
    wasm_api.enter_crossing("call", running)
    with pytest.raises(RuntimeError, match="running its wasm"):
        running.call(False)
    assert running.bound  # not deleted under its own wasm
    wasm_api.leave_crossing()
    with pytest.raises(TypeError, match="initialised once"):
        kept.__init__(lambda *args: (None, 0), ("i64",) * 16, ())
    with pytest.raises(ValueError, match="not negative"):
        wasm_api.store_type(True)(1, -1, 100, 1, 1, 0)
    with pytest.raises(OverflowError):
        _crossing.memory_read(-8, 1)
    del kept_too, kept_three
