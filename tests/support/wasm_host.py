"""A minimal NEAR host for running the sample contracts on raw Wasmtime in tests.

Only what the sample contracts import: registers, `input`, storage reads (and writes, so the
counter's change methods can be shown), `value_return`, `panic_utf8` and `predecessor_account_id`.
No gas, no view rules: the real executor (nearrpc.contracts) owns those.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import wasmtime

_U64_MAX = 2**64 - 1


class ContractPanic(Exception):
    """The contract called panic_utf8; the message is its text."""


@dataclass
class Outcome:
    result: bytes | None
    state: dict[bytes, bytes]


@dataclass
class _Host:
    memory: wasmtime.Memory | None = None
    store: wasmtime.Store = field(default_factory=wasmtime.Store)
    registers: dict[int, bytes] = field(default_factory=dict)
    state: dict[bytes, bytes] = field(default_factory=dict)
    args: bytes = b""
    predecessor: bytes = b"alice.localnet"
    returned: bytes | None = None

    def read(self, ptr: int, length: int) -> bytes:
        assert self.memory is not None
        return bytes(self.memory.read(self.store, ptr, ptr + length))

    def write(self, ptr: int, data: bytes) -> None:
        assert self.memory is not None
        self.memory.write(self.store, data, ptr)


def _functions(host: _Host) -> dict[str, tuple[int, int, Callable[..., Any]]]:
    """name -> (parameter count, result count, implementation), all i64 as nearcore declares."""

    def storage_read(key_len: int, key_ptr: int, register: int) -> int:
        value = host.state.get(host.read(key_ptr, key_len))
        if value is None:
            return 0
        host.registers[register] = value
        return 1

    def storage_write(key_len: int, key_ptr: int, value_len: int, value_ptr: int, register: int) -> int:
        key = host.read(key_ptr, key_len)
        old = host.state.get(key)
        host.state[key] = host.read(value_ptr, value_len)
        if old is None:
            return 0
        host.registers[register] = old
        return 1

    def register_len(register: int) -> int:
        return len(host.registers[register]) if register in host.registers else _U64_MAX

    def value_return(length: int, ptr: int) -> None:
        host.returned = host.read(ptr, length)

    def panic_utf8(length: int, ptr: int) -> None:
        raise ContractPanic(host.read(ptr, length).decode())

    return {
        "input": (1, 0, lambda register: host.registers.__setitem__(register, host.args)),
        "register_len": (1, 1, register_len),
        "read_register": (2, 0, lambda register, ptr: host.write(ptr, host.registers[register])),
        "storage_read": (3, 1, storage_read),
        "storage_write": (5, 1, storage_write),
        "value_return": (2, 0, value_return),
        "panic_utf8": (2, 0, panic_utf8),
        "predecessor_account_id": (1, 0, lambda register: host.registers.__setitem__(register, host.predecessor)),
    }


def call(code: bytes, method: str, args: bytes = b"", state: Mapping[bytes, bytes] | None = None) -> Outcome:
    """Run `method` of the contract `code` over a copy of `state`; raises ContractPanic on a panic."""
    host = _Host(state=dict(state or {}), args=args)
    module = wasmtime.Module(host.store.engine, code)
    linker = wasmtime.Linker(host.store.engine)
    functions = _functions(host)
    for item in module.imports:
        assert item.module == "env", item.module
        assert item.name is not None
        params, results, implementation = functions[item.name]
        i64 = wasmtime.ValType.i64()
        linker.define_func("env", item.name, wasmtime.FuncType([i64] * params, [i64] * results), implementation)
    instance = linker.instantiate(host.store, module)
    exports = instance.exports(host.store)
    memory = exports["memory"]
    assert isinstance(memory, wasmtime.Memory)
    host.memory = memory
    function = exports[method]
    assert isinstance(function, wasmtime.Func)
    try:
        function(host.store)
    except wasmtime.Trap as trap:
        # a host function's exception surfaces as the cause of the trap
        if isinstance(trap.__cause__, ContractPanic):
            raise trap.__cause__ from None
        raise
    return Outcome(host.returned, host.state)
