"""The sample chain's contracts, as WebAssembly bytes.

COUNTER and FT are built from WAT source in contracts/ (`python -m tools.build_contracts`;
./check holds the committed .wasm to its source) and do what their source says: a view call
runs them. GREETER, a global contract nobody calls, is assembled here: a well-formed module
shaped like rustc output (host imports from `env`, a memory, a data segment, a `producers`
section) whose bytes only give a code hash and a size.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from nearrpc.contracts import leb128

_MAGIC_AND_VERSION = b"\x00asm\x01\x00\x00\x00"
_I64 = 0x7E
_FUNC_TYPE = 0x60

# Opcodes used in the function bodies.
_CALL = 0x10
_DROP = 0x1A
_END = 0x0B
_I32_CONST = 0x41
_I64_CONST = 0x42


def _name(text: str) -> bytes:
    raw = text.encode()
    return leb128.unsigned(len(raw)) + raw


def _vec(items: list[bytes]) -> bytes:
    return leb128.unsigned(len(items)) + b"".join(items)


def _section(section_id: int, payload: bytes) -> bytes:
    return bytes([section_id]) + leb128.unsigned(len(payload)) + payload


def _func_type(params: int, results: int) -> bytes:
    return bytes([_FUNC_TYPE]) + _vec([bytes([_I64])] * params) + _vec([bytes([_I64])] * results)


# Host imports every module below declares, with their type indices.
_IMPORTS = (
    ("storage_read", 1),  # (key_len, key_ptr, register) -> found
    ("storage_write", 2),  # (key_len, key_ptr, value_len, value_ptr, register) -> evicted
    ("value_return", 3),  # (len, ptr)
    ("read_register", 3),  # (register, ptr)
)
_STORAGE_READ, _STORAGE_WRITE, _VALUE_RETURN, _READ_REGISTER = range(len(_IMPORTS))
_TYPES = (_func_type(0, 0), _func_type(3, 1), _func_type(5, 1), _func_type(2, 0))

_KEY_PTR = 1024
_VALUE_PTR = 2048


def _consts(*values: int) -> bytes:
    return b"".join(bytes([_I64_CONST]) + leb128.signed(v) for v in values)


def _call(index: int) -> bytes:
    return bytes([_CALL]) + leb128.unsigned(index)


def _read_method(key_len: int) -> bytes:
    # Read the state key into register 0, copy it to memory and return it.
    return (
        _consts(key_len, _KEY_PTR, 0)
        + _call(_STORAGE_READ)
        + bytes([_DROP])
        + _consts(0, _VALUE_PTR)
        + _call(_READ_REGISTER)
        + _consts(8, _VALUE_PTR)
        + _call(_VALUE_RETURN)
    )


def _write_method(key_len: int, value_len: int) -> bytes:
    return _consts(key_len, _KEY_PTR, value_len, _VALUE_PTR, 0) + _call(_STORAGE_WRITE) + bytes([_DROP])


def _module(state_key: bytes, methods: list[tuple[str, bytes]], producer: str) -> bytes:
    import_entries = [_name("env") + _name(name) + b"\x00" + leb128.unsigned(t) for name, t in _IMPORTS]
    first_local = len(_IMPORTS)
    exports = [_name("memory") + b"\x02" + leb128.unsigned(0)]
    exports += [_name(name) + b"\x00" + leb128.unsigned(first_local + i) for i, (name, _) in enumerate(methods)]
    bodies = []
    for _, code in methods:
        body = leb128.unsigned(0) + code + bytes([_END])  # no locals
        bodies.append(leb128.unsigned(len(body)) + body)
    data_segment = (
        leb128.unsigned(0)  # active segment for memory 0
        + bytes([_I32_CONST])
        + leb128.signed(_KEY_PTR)
        + bytes([_END])
        + leb128.unsigned(len(state_key))
        + state_key
    )
    producers = _vec(
        [
            _name("language") + _vec([_name("Rust") + _name("")]),
            _name("processed-by") + _vec([_name("rustc") + _name(producer)]),
        ]
    )
    return (
        _MAGIC_AND_VERSION
        + _section(1, _vec(list(_TYPES)))
        + _section(2, _vec(import_entries))
        + _section(3, _vec([leb128.unsigned(0)] * len(methods)))  # every method is () -> ()
        + _section(5, _vec([b"\x00" + leb128.unsigned(17)]))  # one memory, at least 17 pages
        + _section(7, _vec(exports))
        + _section(10, _vec(bodies))
        + _section(11, _vec([data_segment]))
        + _section(0, _name("producers") + producers)
    )


@dataclass(frozen=True, slots=True)
class Contract:
    name: str
    code: bytes


def _built(name: str) -> Contract:
    # package data, so an installed wheel carries the bytes too
    return Contract(name, (resources.files("nearrpc.sample") / "contracts" / f"{name}.wasm").read_bytes())


def _greeter() -> Contract:
    key = b"greeting"
    methods = [
        ("get_greeting", _read_method(len(key))),
        ("set_greeting", _write_method(len(key), 32)),
    ]
    return Contract("greeter", _module(key, methods, "1.86.0 (05f9846f8 2025-03-31)"))


# Deployed on the contract account of the sample chain; key b"STATE" holds the count (i64 LE).
COUNTER = _built("counter")
# The fungible token on its own account; b"b" + account id -> balance, b"t" -> total supply
# (u128 LE each).
FT = _built("ft")
# Published as a global contract (by hash) and used by the global-contract accounts.
GREETER = _greeter()
