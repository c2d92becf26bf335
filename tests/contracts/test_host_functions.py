"""Each host function a view may call, through a contract that returns what it got."""

from __future__ import annotations

import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from nearrpc.contracts import ViewCallError, host
from tests.contracts.support import CONTEXT, IMPORTS, DictState, module, run

# returns register 0 (the pattern a contract uses to return what a host function wrote there)
RETURN_REGISTER_0 = (
    "(call $read_register (i64.const 0) (i64.const 0))"
    " (call $value_return (call $register_len (i64.const 0)) (i64.const 0))"
)


def register_getter(name: str) -> bytes:
    imports = IMPORTS + f'(import "env" "{name}" (func $f (param i64)))'
    return module(f'(func (export "m") (call $f (i64.const 0)) {RETURN_REGISTER_0})', imports)


def u64_getter(name: str) -> bytes:
    imports = IMPORTS + f'(import "env" "{name}" (func $f (result i64)))'
    body = '(func (export "m") (i64.store (i32.const 0) (call $f)) (call $value_return (i64.const 8) (i64.const 0)))'
    return module(body, imports)


def u128_getter(name: str) -> bytes:
    imports = IMPORTS + f'(import "env" "{name}" (func $f (param i64)))'
    body = '(func (export "m") (call $f (i64.const 0)) (call $value_return (i64.const 16) (i64.const 0)))'
    return module(body, imports)


def test_input_and_registers_return_the_arguments() -> None:
    code = module(f'(func (export "m") (call $input (i64.const 0)) {RETURN_REGISTER_0})')
    assert run(code, "m", b'{"account_id":"alice.near"}').result == b'{"account_id":"alice.near"}'


def test_write_register_then_value_return_from_the_register() -> None:
    body = """(data (i32.const 0) "abc")
      (func (export "m") (call $write_register (i64.const 7) (i64.const 3) (i64.const 0))
        (call $value_return (i64.const -1) (i64.const 7)))"""
    assert run(module(body), "m").result == b"abc"


def test_register_len_of_an_unused_register_is_u64_max() -> None:
    body = (
        '(func (export "m") (i64.store (i32.const 0) (call $register_len (i64.const 9)))'
        " (call $value_return (i64.const 8) (i64.const 0)))"
    )
    assert run(module(body), "m").result == b"\xff" * 8


@pytest.mark.parametrize(
    ("name", "expected"),
    [("current_account_id", CONTEXT.account_id.encode()), ("random_seed", CONTEXT.random_seed)],
)
def test_register_getters(name: str, expected: bytes) -> None:
    assert run(register_getter(name), "m").result == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("block_index", CONTEXT.block_height),
        ("block_timestamp", CONTEXT.block_timestamp),
        ("epoch_height", CONTEXT.epoch_height),
        ("storage_usage", CONTEXT.storage_usage),
    ],
)
def test_u64_getters(name: str, expected: int) -> None:
    assert run(u64_getter(name), "m").result == expected.to_bytes(8, "little")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("account_balance", CONTEXT.account_balance),
        ("account_locked_balance", CONTEXT.account_locked_balance),
        ("attached_deposit", 0),
    ],
)
def test_balance_getters(name: str, expected: int) -> None:
    assert run(u128_getter(name), "m").result == expected.to_bytes(16, "little")


STORAGE = (
    IMPORTS
    + """
 (import "env" "storage_read" (func $storage_read (param i64 i64 i64) (result i64)))
 (import "env" "storage_has_key" (func $storage_has_key (param i64 i64) (result i64)))
"""
)


def test_storage_read_returns_the_stored_value_and_reports_absence() -> None:
    body = f"""(data (i32.const 0) "STATEnone")
      (func (export "present")
        (drop (call $storage_read (i64.const 5) (i64.const 0) (i64.const 0))) {RETURN_REGISTER_0})
      (func (export "absent") (i64.store (i32.const 16) (call $storage_read (i64.const 4) (i64.const 5) (i64.const 0)))
        (call $value_return (i64.const 8) (i64.const 16)))"""
    code = module(body, STORAGE)
    state = DictState({b"STATE": (3).to_bytes(8, "little", signed=True)})
    assert run(code, "present", state=state).result == (3).to_bytes(8, "little")
    assert run(code, "absent", state=state).result == bytes(8)
    assert state.reads == [b"STATE", b"none"]


def test_storage_has_key() -> None:
    body = """(data (i32.const 0) "STATEnone")
      (func (export "m") (i64.store (i32.const 16) (call $storage_has_key (i64.const 5) (i64.const 0)))
        (i64.store (i32.const 24) (call $storage_has_key (i64.const 4) (i64.const 5)))
        (call $value_return (i64.const 16) (i64.const 16)))"""
    state = DictState({b"STATE": b"x"})
    assert run(module(body, STORAGE), "m", state=state).result == (1).to_bytes(8, "little") + bytes(8)


def digest_module(name: str) -> bytes:
    imports = IMPORTS + f'(import "env" "{name}" (func $h (param i64 i64 i64)))'
    body = (
        '(func (export "m") (call $input (i64.const 1)) (call $h (i64.const -1) (i64.const 1) (i64.const 0))'
        f" {RETURN_REGISTER_0})"
    )
    return module(body, imports)


@pytest.mark.parametrize(
    ("name", "message", "digest"),
    [
        ("sha256", b"abc", hashlib.sha256(b"abc").hexdigest()),
        ("keccak256", b"abc", "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"),
        ("keccak256", b"", "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"),
        (
            "keccak512",
            b"",
            "0eab42de4c3ceb9235fc91acffe746b29c29a8c366b7c60e4e67c466f36a4304"
            "c00fa9caf9d87976ba469bcbe06713b435f091ef2769fb160cdab33d3670680e",
        ),
        ("ripemd160", b"abc", "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc"),
    ],
)
def test_hashes_read_their_input_from_a_register(name: str, message: bytes, digest: str) -> None:
    assert run(digest_module(name), "m", message).result.hex() == digest


ED25519 = (
    IMPORTS
    + """
 (import "env" "ed25519_verify" (func $verify (param i64 i64 i64 i64 i64 i64) (result i64)))
"""
)


def test_ed25519_verify_accepts_a_good_signature_and_refuses_a_bad_one() -> None:
    key = Ed25519PrivateKey.generate()
    public = key.public_key().public_bytes_raw()
    message = b"a view may verify"
    signature = key.sign(message)
    # args: signature (64) | public key (32) | message
    body = """(func (export "m") (call $input (i64.const 0)) (call $read_register (i64.const 0) (i64.const 0))
        (i64.store (i32.const 1000) (call $verify (i64.const 64) (i64.const 0)
          (i64.sub (call $register_len (i64.const 0)) (i64.const 96)) (i64.const 96) (i64.const 32) (i64.const 64)))
        (call $value_return (i64.const 8) (i64.const 1000)))"""
    code = module(body, ED25519)
    assert run(code, "m", signature + public + message).result == (1).to_bytes(8, "little")
    assert run(code, "m", signature + public + message + b"!").result == bytes(8)


@pytest.mark.parametrize(("signature", "public_key"), [(63, 32), (65, 32), (64, 31), (64, 33)])
def test_ed25519_verify_refuses_an_input_of_the_wrong_length(signature: int, public_key: int) -> None:
    body = (
        f'(func (export "m") (drop (call $verify (i64.const {signature}) (i64.const 0)'
        f" (i64.const 0) (i64.const 0) (i64.const {public_key}) (i64.const 0))))"
    )
    with pytest.raises(ViewCallError) as failure:
        run(module(body, ED25519), "m")
    which = "signature" if signature != 64 else "public key"
    assert failure.value.debug == f'HostError(Ed25519VerifyInvalidInput {{ msg: "invalid {which} length" }})'


def test_logs_and_a_result() -> None:
    imports = IMPORTS + '(import "env" "log_utf16" (func $log_utf16 (param i64 i64)))'
    body = """(data (i32.const 0) "first") (data (i32.const 16) "h\\00i\\00") (data (i32.const 32) "\\223\\22")
      (func (export "m") (call $log_utf8 (i64.const 5) (i64.const 0)) (call $log_utf16 (i64.const 4) (i64.const 16))
        (call $log_utf8 (i64.const -1) (i64.const 0)) (call $value_return (i64.const 3) (i64.const 32)))"""
    outcome = run(module(body, imports), "m")
    assert outcome.result == b'"3"'
    assert outcome.logs == ["first", "hi", "first"]  # a length of u64::MAX reads up to the NUL
    assert outcome.burnt_gas > 0


def test_a_method_that_returns_nothing_answers_empty_bytes() -> None:
    assert run(module('(func (export "m"))'), "m").result == b""


def test_attached_deposit_writes_sixteen_zero_bytes() -> None:
    # a view attaches nothing: the whole u128 is written, over whatever the memory held
    imports = IMPORTS + '(import "env" "attached_deposit" (func $f (param i64)))'
    body = (
        '(data (i32.const 0) "\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff\\ff")'
        ' (func (export "m") (call $f (i64.const 0)) (call $value_return (i64.const 17) (i64.const 0)))'
    )
    assert run(module(body, imports), "m").result == bytes(16) + b"\xff"


def _reads_twice(second: str) -> bytes:
    """Reads key "k", then `second` (has_key), then "k" again, and returns the last value."""
    body = f"""(data (i32.const 0) "k{second}")
      (func (export "m")
        (drop (call $storage_read (i64.const 1) (i64.const 0) (i64.const 0)))
        (drop (call $storage_has_key (i64.const 1) (i64.const 1)))
        (drop (call $storage_read (i64.const 1) (i64.const 0) (i64.const 0))) {RETURN_REGISTER_0})"""
    return module(body, STORAGE)


def test_a_key_read_again_is_asked_of_the_state_once_and_paid_each_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A view writes nothing: what a call read, it reads again from what it kept (near-sdk's
    TreeMap walks from its root at every step), and pays every read as nearcore charges it."""
    values = {b"k": b"value", b"j": b"other"}
    state = DictState(values)
    again = run(_reads_twice("k"), "m", state=state)
    assert (again.result, state.reads) == (b"value", [b"k"])
    # the same reads of another key cost the same: the kept ones are paid for
    other = DictState(values)
    assert run(_reads_twice("j"), "m", state=other).burnt_gas == again.burnt_gas
    assert other.reads == [b"k", b"j"]
    # past the bytes kept, the state is asked again
    monkeypatch.setattr(host, "READS_KEPT_BYTES", 0)
    state = DictState(values)
    assert run(_reads_twice("k"), "m", state=state) == again
    assert state.reads == [b"k", b"k", b"k"]
