"""A sliced run (the server's first attempt on its event loop): it answers exactly what the whole
run answers when the work fits the slice, and otherwise says only that it ran out
(SliceExhausted), whatever the whole run would have answered, so the server runs it again."""

from __future__ import annotations

import pytest

from nearrpc.contracts import SliceExhausted, ViewCallError, ViewEngine
from tests.contracts.support import CONTEXT, IMPORTS, DictState, code_hash, module, run, with_limit

STORAGE = IMPORTS + '(import "env" "storage_read" (func $storage_read (param i64 i64 i64) (result i64)))'
# reads the storage key given as input and returns its value, logging on the way
READ = module(
    '(data (i32.const 0) "reading")'
    ' (func (export "m") (call $input (i64.const 0)) (call $log_utf8 (i64.const 7) (i64.const 0))'
    " (drop (call $storage_read (i64.const -1) (i64.const 0) (i64.const 1)))"
    " (call $value_return (i64.const -1) (i64.const 1)))",
    STORAGE,
)
LOOP = module('(func (export "m") (loop $l (br $l)))')
HOST_LOOP = module(
    '(func (export "m") (loop $l (drop (call $b)) (br $l)))',
    IMPORTS + '(import "env" "block_index" (func $b (result i64)))',
)
GAS_LIMIT_EXCEEDED = "wasm execution failed with error: HostError(GasLimitExceeded)"


def _sliced(code: bytes, slice_gas: int, host_calls: int | None = None, costs=None):  # type: ignore[no-untyped-def]
    engine = ViewEngine()
    state = DictState({b"k": b"value"})
    return engine.run_view(
        code, code_hash(code), "m", b"k", CONTEXT, state, costs or with_limit(10**15), slice_gas, host_calls
    )


def test_work_that_fits_the_slice_answers_as_the_whole_run() -> None:
    whole = run(READ, "m", b"k", DictState({b"k": b"value"}))
    sliced = _sliced(READ, 10**12, 64)
    assert sliced == whole
    assert sliced.result == b"value" and sliced.logs == ["reading"]


def test_an_infinite_loop_runs_out_of_its_slice_not_of_gas() -> None:
    with pytest.raises(SliceExhausted):
        _sliced(LOOP, 10**12)
    # and a slice over the view's limit is the limit: still only "ran out", never the verdict
    with pytest.raises(SliceExhausted):
        _sliced(LOOP, 10**15, costs=with_limit(10**12))
    with pytest.raises(ViewCallError) as whole:
        run(LOOP, "m", costs=with_limit(10**12))
    assert whole.value.vm_error == GAS_LIMIT_EXCEEDED


def test_host_calls_past_the_slices_count_run_out_of_it() -> None:
    with pytest.raises(SliceExhausted):
        _sliced(HOST_LOOP, 10**15, 100)
    # the same work with room for its host calls fits
    assert _sliced(READ, 10**12, 4) == _sliced(READ, 10**12)
    with pytest.raises(SliceExhausted):
        _sliced(READ, 10**12, 3)


def test_a_charge_just_past_the_slice_runs_out_of_it() -> None:
    burnt = run(READ, "m", b"k", DictState({b"k": b"value"})).burnt_gas
    assert _sliced(READ, burnt).burnt_gas == burnt
    with pytest.raises(SliceExhausted):
        _sliced(READ, burnt - 1)
