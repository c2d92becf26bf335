"""nearcore's limits at their edges: a value exactly at a limit passes, one byte more fails with
nearcore's text (logic.rs `get_utf8_string`, `get_utf16_string` / `get_nul_terminated_utf16_len`,
`checked_push_log`, `storage_read` / `storage_has_key`, `value_return`; the memory bounds of
logic/vmstate.rs `Memory::view` / `set`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from nearrpc.contracts import ViewCallError
from tests.contracts.support import COSTS, IMPORTS, module, run

MORE = """
 (import "env" "log_utf16" (func $log_utf16 (param i64 i64)))
 (import "env" "storage_has_key" (func $storage_has_key (param i64 i64) (result i64)))
"""
# "hello" at 0, UTF-16 "hé" and a NUL pair at 8, "hello" NUL-terminated at 16
DATA = '(data (i32.const 0) "hello") (data (i32.const 8) "h\\00\\e9\\00\\00\\00") (data (i32.const 16) "hello\\00")'
MEMORY_BYTES = COSTS.initial_memory_pages * 65536


def outcome(body: str, **limits: Any) -> bytes | str | list[str]:
    """The result (or the logs when there is no result), or the error's Debug text."""
    try:
        done = run(module(f'{DATA} (func (export "m") {body})', IMPORTS + MORE), "m", costs=replace(COSTS, **limits))
    except ViewCallError as failure:
        return failure.debug
    return done.result or done.logs


def log8(length: int, ptr: int) -> str:
    return f"(call $log_utf8 (i64.const {length}) (i64.const {ptr}))"


def log16(length: int, ptr: int) -> str:
    return f"(call $log_utf16 (i64.const {length}) (i64.const {ptr}))"


def too_long(length: int, limit: int) -> str:
    return f"HostError(TotalLogLengthExceeded {{ length: {length}, limit: {limit} }})"


def test_the_total_log_length_is_inclusive_and_accumulates() -> None:
    assert outcome(log8(5, 0), max_total_log_length=5) == ["hello"]
    assert outcome(log8(5, 0) + log8(1, 0), max_total_log_length=5) == too_long(6, 5)
    assert outcome(log8(5, 0), max_total_log_length=4) == too_long(5, 4)


def test_a_log_longer_than_the_room_fails_before_memory_is_read() -> None:
    # nearcore checks the length against the room first: no MemoryAccessViolation for a length
    # past the memory's end
    assert outcome(log8(10**9, 0)) == too_long(10**9, COSTS.max_total_log_length)


def test_a_nul_terminated_utf8_log_at_the_limit() -> None:
    assert outcome(log8(-1, 16), max_total_log_length=5) == ["hello"]
    assert outcome(log8(-1, 16), max_total_log_length=4) == too_long(5, 4)


def test_utf16_logs_at_the_limit() -> None:
    assert outcome(log16(4, 8), max_total_log_length=4) == ["hé"]
    assert outcome(log16(4, 8), max_total_log_length=3) == too_long(4, 3)
    assert outcome(log16(-1, 8), max_total_log_length=4) == ["hé"]
    assert outcome(log16(-1, 8), max_total_log_length=3) == too_long(4, 3)
    # an odd length is BadUTF16 before the length limit (nearcore reads, then judges)
    assert outcome(log16(3, 8), max_total_log_length=2) == "HostError(BadUTF16)"


def test_a_storage_key_at_the_length_limit() -> None:
    has_key = "(i64.store (i32.const 64) (call $storage_has_key (i64.const {n}) (i64.const 0)))"
    back = "(call $value_return (i64.const 8) (i64.const 64))"
    assert outcome(has_key.format(n=2) + back, max_length_storage_key=2) == bytes(8)
    assert outcome(has_key.format(n=3) + back, max_length_storage_key=2) == (
        "HostError(KeyLengthExceeded { length: 3, limit: 2 })"
    )


def test_a_returned_value_at_the_length_limit() -> None:
    ret = "(call $value_return (i64.const {n}) (i64.const 0))"
    assert outcome(ret.format(n=5), max_length_returned_data=5) == b"hello"
    assert outcome(ret.format(n=6), max_length_returned_data=5) == (
        "HostError(ReturnedValueLengthExceeded { length: 6, limit: 5 })"
    )


def test_memory_reads_and_writes_up_to_the_last_byte() -> None:
    last_two = MEMORY_BYTES - 2
    assert outcome(f"(call $value_return (i64.const 2) (i64.const {last_two}))") == bytes(2)
    assert outcome(f"(call $value_return (i64.const 2) (i64.const {last_two + 1}))") == (
        "HostError(MemoryAccessViolation)"
    )
    write = (
        "(call $write_register (i64.const 0) (i64.const 2) (i64.const 0))"
        " (call $read_register (i64.const 0) (i64.const {at}))"
    )
    ret = f"(call $value_return (i64.const 2) (i64.const {last_two}))"
    assert outcome(write.format(at=last_two) + ret) == b"he"
    assert outcome(write.format(at=last_two + 1) + ret) == "HostError(MemoryAccessViolation)"
