"""The two host-call crossings (wasm_api.py: the C extension `_crossing` and the ctypes callback
it replaces where it is built) answer alike: the same result, logs and gas, the same failure
with the same logs, the same exception out of a host function, over modules that cross with
each kind of argument and result, fail inside and outside host functions, run out of gas in
wasm and in a host function, and over the real contracts' recorded views."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.real_contracts_store import CODES, NFT, reference_contracts
from nearrpc.contracts import ViewCallError, ViewEngine, wasm_api
from tests.contracts.support import CONTEXT, IMPORTS, DictState, code_hash, module, with_limit
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
