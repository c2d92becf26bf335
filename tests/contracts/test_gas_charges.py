"""What each host function charges, term by term, as nearcore's logic.rs writes its `# Cost`
lines and pays them (runtime/near-vm-runner/src/logic/logic.rs; memory and registers in
logic/vmstate.rs `Memory::view` / `get_into` / `set` and `Registers::get` / `set`).

Each case is a method `m` of a module that also exports an empty `n`: the difference of their
burnt gas is the host calls' ext costs plus the instructions `m` runs (as nearcore's prepare_v3.rs
`SimpleGasCostCfg` prices them: one per operator, `drop` included, `block`/`end`/`else` free), each
at regular_op_cost; both pay the same frame charge on entry."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from nearrpc.contracts import ViewCallError
from tests.contracts.support import COSTS, IMPORTS, DictState, module, run

EXTRA_IMPORTS = """
 (import "env" "storage_read" (func $storage_read (param i64 i64 i64) (result i64)))
 (import "env" "storage_has_key" (func $storage_has_key (param i64 i64) (result i64)))
 (import "env" "log_utf16" (func $log_utf16 (param i64 i64)))
 (import "env" "storage_usage" (func $storage_usage (result i64)))
 (import "env" "account_balance" (func $account_balance (param i64)))
 (import "env" "ed25519_verify" (func $ed25519_verify (param i64 i64 i64 i64 i64 i64) (result i64)))
 (import "env" "abort" (func $abort (param i32 i32 i32 i32)))
 (import "env" "keccak256" (func $keccak256 (param i64 i64 i64)))
 (import "env" "ripemd160" (func $ripemd160 (param i64 i64 i64)))
"""
# "k" at 0, "hello" at 1, UTF-16 "hé" at 8 (4 bytes) then a NUL pair, "hi\0" at 16,
# an AssemblyScript string "ok" (u32 length, UTF-16) at 24 and "f" at 40
DATA = (
    '(data (i32.const 0) "khello") (data (i32.const 8) "h\\00\\e9\\00\\00\\00")'
    ' (data (i32.const 16) "hi\\00") (data (i32.const 20) "\\04\\00\\00\\00o\\00k\\00")'
    ' (data (i32.const 36) "\\02\\00\\00\\00f\\00") (data (i32.const 363) "\\20")'
)
BIG = b"v" * 5000


def c(*values: int) -> str:
    return " ".join(f"(i64.const {value})" for value in values)


def extra(body: str, state: DictState | None = None) -> int:
    """Gas `m` burns beyond the empty `n` of the same module."""
    code = module(f'{DATA} (func (export "m") {body}) (func (export "n"))', IMPORTS + EXTRA_IMPORTS)
    return run(code, "m", state=state).burnt_gas - run(code, "n", state=state).burnt_gas


def gas(ops: int, **terms: int) -> int:
    """`ops` instructions, plus each ext cost named times its count."""
    return ops * COSTS.regular_op_cost + sum(COSTS.ext[name] * times for name, times in terms.items())


def memory_read(size: int, times: int = 1) -> Counter[str]:
    return Counter({"read_memory_base": times, "read_memory_byte": size * times})


def register_write(size: int) -> Counter[str]:
    return Counter({"write_register_base": 1, "write_register_byte": size})


CASES: dict[str, tuple[str, int, Counter[str]]] = {
    # write_register: base, the memory read, the register write; read_register: base, the
    # register read, the memory write
    "write_then_read_register": (
        f"(call $write_register {c(0, 5, 1)}) (call $read_register {c(0, 100)})",
        7,
        Counter(base=2, read_register_base=1, read_register_byte=5, write_memory_base=1, write_memory_byte=5)
        + memory_read(5)
        + register_write(5),
    ),
    # log_utf8: base, utf8 decoding of the bytes read, log_base and log_byte per UTF-8 byte
    "log_utf8": (
        f"(call $log_utf8 {c(5, 1)})",
        3,
        Counter(base=1, utf8_decoding_base=1, utf8_decoding_byte=5, log_base=1, log_byte=5) + memory_read(5),
    ),
    # a NUL-terminated UTF-8 string reads byte by byte, the NUL included
    "log_utf8_nul_terminated": (
        f"(call $log_utf8 {c(-1, 16)})",
        3,
        Counter(base=1, utf8_decoding_base=1, utf8_decoding_byte=2, log_base=1, log_byte=2) + memory_read(1, 3),
    ),
    # log_utf16: decoding per UTF-16 byte (4), log_byte per byte of the decoded UTF-8 text (3)
    "log_utf16": (
        f"(call $log_utf16 {c(4, 8)})",
        3,
        Counter(base=1, utf16_decoding_base=1, utf16_decoding_byte=4, log_base=1, log_byte=3) + memory_read(4),
    ),
    # NUL-terminated UTF-16: a u16 read per unit, the NUL pair included; the string itself is
    # then viewed for free (logic.rs get_nul_terminated_utf16_len, view_for_free)
    "log_utf16_nul_terminated": (
        f"(call $log_utf16 {c(-1, 8)})",
        3,
        Counter(base=1, utf16_decoding_base=1, utf16_decoding_byte=4, log_base=1, log_byte=3) + memory_read(2, 3),
    ),
    # storage_read of a present value past INLINE_DISK_VALUE_THRESHOLD: the large-read overhead
    "storage_read_large": (
        f"(drop (call $storage_read {c(1, 0, 0)}))",
        5,
        Counter(
            base=1,
            storage_read_base=1,
            storage_read_key_byte=1,
            storage_read_value_byte=5000,
            storage_large_read_overhead_base=1,
            storage_large_read_overhead_byte=5000,
        )
        + memory_read(1)
        + register_write(5000),
    ),
    "storage_read_absent": (
        f"(drop (call $storage_read {c(5, 1, 0)}))",
        5,
        Counter(base=1, storage_read_base=1, storage_read_key_byte=5) + memory_read(5),
    ),
    "storage_has_key": (
        f"(drop (call $storage_has_key {c(1, 0)}))",
        4,
        Counter(base=1, storage_has_key_base=1, storage_has_key_byte=1) + memory_read(1),
    ),
    "storage_usage": ("(drop (call $storage_usage))", 2, Counter(base=1)),
    "account_balance": (
        f"(call $account_balance {c(64)})",
        2,
        Counter(base=1, write_memory_base=1, write_memory_byte=16),
    ),
    # keccak256 and ripemd160 charge their own base (not `base`); ripemd160 per 64-byte block
    # after padding: (5 + 8) / 64 + 1 = 1 block
    "keccak256": (
        f"(call $keccak256 {c(5, 1, 0)})",
        4,
        Counter(keccak256_base=1, keccak256_byte=5) + memory_read(5) + register_write(32),
    ),
    "ripemd160_two_blocks": (
        f"(call $ripemd160 {c(56, 0, 0)})",
        4,
        Counter(ripemd160_base=1, ripemd160_block=2) + memory_read(56) + register_write(20),
    ),
    "ripemd160_one_block": (
        f"(call $ripemd160 {c(55, 0, 0)})",
        4,
        Counter(ripemd160_base=1, ripemd160_block=1) + memory_read(55) + register_write(20),
    ),
    # ed25519_verify: its base, the three inputs read, ed25519_verify_byte per message byte
    # (a zero signature at 100, a zero key at 200: the verification fails, the charges stay)
    "ed25519_verify": (
        f"(drop (call $ed25519_verify {c(64, 100, 5, 1, 32, 200)}))",
        8,
        Counter(ed25519_verify_base=1, ed25519_verify_byte=5) + memory_read(64) + memory_read(5) + memory_read(32),
    ),
    # a signature whose last byte has any of its top three bits set is refused at once, before
    # the message is read or charged (logic.rs keeps ed25519-dalek 1's check); its byte 63 at 363
    "ed25519_verify_early_refusal": (
        f"(drop (call $ed25519_verify {c(64, 300, 5, 1, 32, 200)}))",
        8,
        Counter(ed25519_verify_base=1) + memory_read(64),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_host_call_charges_what_nearcore_charges(case: str) -> None:
    body, ops, terms = CASES[case]
    state = DictState({b"k": BIG})
    assert extra(body, state) == gas(ops, **terms)


def test_a_value_at_the_inline_threshold_has_no_large_read_overhead() -> None:
    # logic.rs storage_read: the overhead applies to values longer than INLINE_DISK_VALUE_THRESHOLD (4000)
    def read(size: int) -> int:
        return extra(f"(drop (call $storage_read {c(1, 0, 0)}))", DictState({b"k": b"v" * size}))

    plain = Counter(base=1, storage_read_base=1, storage_read_key_byte=1) + memory_read(1)
    # three constants, the call and the `drop`
    assert read(4000) == gas(5, **(plain + register_write(4000) + Counter(storage_read_value_byte=4000)))
    assert read(4001) == gas(
        5,
        **(
            plain
            + register_write(4001)
            + Counter(
                storage_read_value_byte=4001,
                storage_large_read_overhead_base=1,
                storage_large_read_overhead_byte=4001,
            )
        ),
    )


def outcome_at(body: str, imports: str, limit_above_n: int) -> str:
    """The Debug text `m` ends with when the view's limit leaves exactly `limit_above_n` gas
    beyond what the empty `n` burns ("ok" when it returns)."""
    code = module(f'{DATA} (func (export "m") {body}) (func (export "n"))', IMPORTS + imports)
    base_line = run(code, "n").burnt_gas
    try:
        run(code, "m", costs=replace(COSTS, view_gas_limit=base_line + limit_above_n))
    except ViewCallError as failure:
        return failure.debug
    return "ok"


GAS_LIMIT = "HostError(GasLimitExceeded)"


@pytest.mark.parametrize(
    ("name", "imported", "call", "cost"),
    [
        # logic.rs: a prohibited function pays `base` before its view check ...
        ("prepaid_gas", "(func $f (result i64))", "(drop (call $f))", gas(1, base=1)),
        # ... and promise_return its own `promise_return` cost too
        ("promise_return", "(func $f (param i64))", "(call $f (i64.const 0))", gas(2, base=1, promise_return=1)),
    ],
)
def test_a_prohibited_function_pays_before_it_fails(name: str, imported: str, call: str, cost: int) -> None:
    imports = f'(import "env" "{name}" {imported})'
    prohibited = f'HostError(ProhibitedInView {{ method_name: "{name}" }})'
    assert outcome_at(call, imports, cost) == prohibited
    assert outcome_at(call, imports, cost - 1) == GAS_LIMIT


def test_abort_pays_its_reads_decoding_and_log() -> None:
    # logic.rs `abort`: base, the two u32 lengths, both UTF-16 strings, then the log's
    # log_base and log_byte per byte of the message (without its "ABORT: " prefix)
    message = 'ok, filename: "f" line: 3 col: 9'
    terms = (
        Counter(base=1, utf16_decoding_base=2, utf16_decoding_byte=6, log_base=1, log_byte=len(message))
        + memory_read(4, 2)
        + memory_read(4)
        + memory_read(2)
    )
    cost = gas(5, **terms)
    call = "(call $abort (i32.const 24) (i32.const 40) (i32.const 3) (i32.const 9))"
    panic = f'HostError(GuestPanic {{ panic_msg: "{message.replace(chr(34), chr(92) + chr(34))}" }})'
    assert outcome_at(call, EXTRA_IMPORTS, cost) == panic
    assert outcome_at(call, EXTRA_IMPORTS, cost - 1) == GAS_LIMIT
