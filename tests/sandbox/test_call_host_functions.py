"""The host functions a FunctionCall may run and a view may not (contracts.call), on WAT
modules: storage writes and removes with nearcore's storage-usage accounting and gas, the
signer, predecessor, deposit and gas getters, the prepaid gas limit, and promises refused to a
call the runtime gave no promise context (test_apply_promises runs them)."""

from __future__ import annotations

import hashlib

import pytest
import wasmtime

from nearrpc.contracts.call import CallContext, CallFailed, CallOutcome, run_call
from nearrpc.contracts.call_errors import function_call_error
from nearrpc.contracts.gas import GasCosts
from nearrpc.contracts.host import ViewContext
from tests.sandbox.runtime_support import RUNTIME_CONFIG

COSTS = GasCosts.from_protocol_config({"runtime_config": RUNTIME_CONFIG})
EXT = COSTS.ext
SIGNER_PK = b"\x00" + bytes(range(32))
VIEW = ViewContext("app.test", 120, 7, 3, 1000, 50, 400, bytes(32))
CALL = CallContext(VIEW, "signer.test", SIGNER_PK, "caller.test", 25, 20 * 10**12, 40)

IMPORTS = """
 (import "env" "read_register" (func $read_register (param i64 i64)))
 (import "env" "register_len" (func $register_len (param i64) (result i64)))
 (import "env" "value_return" (func $value_return (param i64 i64)))
 (import "env" "storage_write" (func $storage_write (param i64 i64 i64 i64 i64) (result i64)))
 (import "env" "storage_remove" (func $storage_remove (param i64 i64 i64) (result i64)))
 (import "env" "storage_has_key" (func $storage_has_key (param i64 i64) (result i64)))
 (import "env" "signer_account_id" (func $signer_account_id (param i64)))
 (import "env" "signer_account_pk" (func $signer_account_pk (param i64)))
 (import "env" "predecessor_account_id" (func $predecessor_account_id (param i64)))
 (import "env" "attached_deposit" (func $attached_deposit (param i64)))
 (import "env" "account_balance" (func $account_balance (param i64)))
 (import "env" "prepaid_gas" (func $prepaid_gas (result i64)))
 (import "env" "storage_usage" (func $storage_usage (result i64)))
 (import "env" "promise_batch_create" (func $promise_batch_create (param i64 i64) (result i64)))
"""


class Storage(dict[bytes, bytes]):
    def storage_read(self, key: bytes) -> bytes | None:
        return self.get(key)

    def storage_write(self, key: bytes, value: bytes) -> None:
        self[key] = value

    def storage_remove(self, key: bytes) -> None:
        self.pop(key, None)


def _module(body: str) -> bytes:
    return bytes(
        wasmtime.wat2wasm(f'(module {IMPORTS} (memory (export "memory") 1) (data (i32.const 0) "keyvalue!") {body})')
    )


def _run(code: bytes, method: str, state: Storage | None = None, call: CallContext = CALL) -> CallOutcome:
    return run_call(
        code, hashlib.sha256(code).hexdigest(), method, b"", call, state if state is not None else Storage(), COSTS
    )


# key "key" at 0 (3 bytes), value "value!" at 3 (6 bytes); the old value goes to register 0
WRITE = _module("""
 (func (export "write")
   (drop (call $storage_write (i64.const 3) (i64.const 0) (i64.const 6) (i64.const 3) (i64.const 0))))
 (func (export "write_short")
   (drop (call $storage_write (i64.const 3) (i64.const 0) (i64.const 2) (i64.const 3) (i64.const 0))))
 (func (export "remove") (drop (call $storage_remove (i64.const 3) (i64.const 0) (i64.const 0))))
 (func (export "who")
   (call $signer_account_id (i64.const 1))
   (call $read_register (i64.const 1) (i64.const 100))
   (call $value_return (call $register_len (i64.const 1)) (i64.const 100)))
 (func (export "pk")
   (call $signer_account_pk (i64.const 1))
   (call $value_return (i64.const -1) (i64.const 1)))
 (func (export "caller")
   (call $predecessor_account_id (i64.const 1))
   (call $value_return (i64.const -1) (i64.const 1)))
 (func (export "money")
   (call $attached_deposit (i64.const 200))
   (call $account_balance (i64.const 216))
   (call $value_return (i64.const 32) (i64.const 200)))
 (func (export "gas")
   (i64.store (i32.const 300) (call $prepaid_gas))
   (call $value_return (i64.const 8) (i64.const 300)))
 (func (export "promise") (drop (call $promise_batch_create (i64.const 3) (i64.const 0))))
""")


def test_a_new_key_adds_key_value_and_record_bytes_then_a_replacement_the_difference() -> None:
    state = Storage()
    first = _run(WRITE, "write", state)
    assert state == {b"key": b"value!"}
    assert first.storage_usage == 400 + 3 + 6 + 40
    shorter = _run(
        WRITE,
        "write_short",
        state,
        CallContext(
            ViewContext("app.test", 120, 7, 3, 1000, 50, first.storage_usage, bytes(32)),
            "signer.test",
            SIGNER_PK,
            "caller.test",
            0,
            10**13,
            40,
        ),
    )
    assert state == {b"key": b"va"}
    assert shorter.storage_usage == first.storage_usage - 4


def test_a_write_pays_the_key_value_and_evicted_bytes() -> None:
    fresh = _run(WRITE, "write", Storage())
    over = _run(WRITE, "write", Storage({b"key": b"0123456789"}))
    # the same work, and the evicted value's ten bytes, and its copy into a register
    extra = over.burnt_gas - fresh.burnt_gas
    evicted = 10 * EXT["storage_write_evicted_byte"]
    register = EXT["write_register_base"] + 10 * EXT["write_register_byte"]
    assert extra == evicted + register


def test_remove_takes_the_whole_record_off() -> None:
    state = Storage({b"key": b"value!"})
    removed = _run(WRITE, "remove", state)
    assert state == {}
    assert removed.storage_usage == 400 - (3 + 6 + 40)
    absent = _run(WRITE, "remove", Storage())
    assert absent.storage_usage == 400


def test_the_signer_its_key_and_the_predecessor() -> None:
    assert _run(WRITE, "who").returned == b"signer.test"
    assert _run(WRITE, "pk").returned == SIGNER_PK
    assert _run(WRITE, "caller").returned == b"caller.test"


def test_the_balance_includes_the_attached_deposit() -> None:
    returned = _run(WRITE, "money").returned or b""
    assert int.from_bytes(returned[:16], "little") == 25
    assert int.from_bytes(returned[16:], "little") == 1000 + 25


def test_prepaid_gas_and_its_limit() -> None:
    assert int.from_bytes(_run(WRITE, "gas").returned or b"", "little") == 20 * 10**12
    tiny = CallContext(VIEW, "signer.test", SIGNER_PK, "caller.test", 0, 10**6, 40)
    with pytest.raises(CallFailed) as failed:
        _run(WRITE, "write", call=tiny)
    assert failed.value.debug == "HostError(GasExceeded)"
    assert failed.value.burnt_gas == 10**6  # never more than what was prepaid
    assert function_call_error(failed.value.debug) == {"ExecutionError": "Exceeded the prepaid gas."}


def test_a_promise_is_refused_with_a_clear_error() -> None:
    with pytest.raises(CallFailed) as failed:
        _run(WRITE, "promise")
    assert function_call_error(failed.value.debug) == {
        "ExecutionError": "promise_batch_create is not available: nearrpc's sandbox does not run this "
        "promise host function yet"
    }


READ_WRITE_READ = _module("""
 (func (export "read_write_read") (local $before i64)
  (local.set $before (call $storage_has_key (i64.const 3) (i64.const 0)))
  (drop (call $storage_write (i64.const 3) (i64.const 0) (i64.const 6) (i64.const 3) (i64.const 0)))
  ;; returns two bytes: whether the key was there before the write, and whether it is after
  (i32.store8 (i32.const 100) (i32.wrap_i64 (local.get $before)))
  (i32.store8 (i32.const 101) (i32.wrap_i64 (call $storage_has_key (i64.const 3) (i64.const 0))))
  (call $value_return (i64.const 2) (i64.const 100)))
""")


def test_a_call_reads_back_what_it_wrote() -> None:
    """A view keeps the values it read (it writes nothing); a call must not: near-sdk's
    storage_deposit checks a key, writes it, and reads it back in one call."""
    state = Storage()
    assert _run(READ_WRITE_READ, "read_write_read", state).returned == b"\x00\x01"
