"""The register limits as nearcore's `Registers::check_set_register` applies them
(runtime/near-vm-runner/src/logic/vmstate.rs and its tests `registers_max_number_limit`,
`registers_register_size_limit`, `registers_usage_limit`): a register counts its length plus
eight bytes, and once the count limit is reached even replacing a register fails."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from nearrpc.contracts import ViewCallError
from tests.contracts.support import COSTS, module, run

# "foo" at 0, "bar" at 3, "baz" at 6, "quux" at 9, "O_o" at 13
DATA = '(data (i32.const 0) "foobarbazquuxO_o")'
WORDS = {"foo": (0, 3), "bar": (3, 3), "baz": (6, 3), "quux": (9, 4), "O_o": (13, 3), "": (0, 0)}


def writes(*steps: tuple[int, str]) -> bytes:
    """A contract whose method `m` writes the registers in order, then returns the last one."""
    calls = " ".join(
        f"(call $write_register (i64.const {register}) (i64.const {WORDS[word][1]}) (i64.const {WORDS[word][0]}))"
        for register, word in steps
    )
    last = steps[-1][0]
    return module(f'{DATA} (func (export "m") {calls} (call $value_return (i64.const -1) (i64.const {last})))')


MAV = "HostError(MemoryAccessViolation)"


def outcome(code: bytes, **limits: Any) -> bytes | str:
    try:
        return run(code, "m", costs=replace(COSTS, **limits)).result
    except ViewCallError as failure:
        return failure.debug


def test_the_count_limit_refuses_a_new_register_and_even_a_replacement() -> None:
    assert outcome(writes((42, "foo"), (24, "bar")), max_number_registers=2) == b"bar"
    assert outcome(writes((42, "foo"), (24, "bar"), (12, "baz")), max_number_registers=2) == MAV
    # nearcore's "historical bug, now part of the protocol": at the limit a replacement fails too
    assert outcome(writes((42, "foo"), (24, "bar"), (42, "O_o")), max_number_registers=2) == MAV
    assert outcome(writes((42, "foo"), (42, "O_o")), max_number_registers=2) == b"O_o"


def test_the_size_limit_is_inclusive() -> None:
    assert outcome(writes((42, "foo")), max_register_size=3) == b"foo"
    assert outcome(writes((42, "foo"), (24, "quux")), max_register_size=3) == MAV


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        # one register of three bytes uses 3 + 8 = 11; replacing it frees its old usage
        (((42, "foo"), (42, "bar"), (42, ""), (42, "baz")), b"baz"),
        (((42, "foo"), (42, "quux")), MAV),
        # a second register costs its eight bytes too, even when empty
        (((42, "foo"), (24, "")), MAV),
    ],
)
def test_the_memory_limit_counts_eight_bytes_per_register(steps: tuple[tuple[int, str], ...], expected: object) -> None:
    assert outcome(writes(*steps), registers_memory_limit=11) == expected


def test_an_empty_register_reads_into_the_end_of_memory() -> None:
    # logic.rs `read_register` writes through `memory_set_slice`, whose bounds check is
    # offset + length <= memory size: zero bytes at the memory's end fit (nearcore's memory,
    # initial_memory_pages of 64 KiB, whatever the module declares)
    end = COSTS.initial_memory_pages * 65536

    def read_empty_at(ptr: int) -> bytes:
        return module(
            f'(data (i32.const 16) "ok") (func (export "m")'
            " (call $write_register (i64.const 1) (i64.const 0) (i64.const 0))"
            f" (call $read_register (i64.const 1) (i64.const {ptr}))"
            " (call $value_return (i64.const 2) (i64.const 16)))"
        )

    assert outcome(read_empty_at(end)) == b"ok"
    assert outcome(read_empty_at(end + 1)) == MAV
