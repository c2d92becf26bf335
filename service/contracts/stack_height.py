"""The most bytes a function's operand stack holds, as finite-wasm 0.6's stack analysis counts
them (src/max_stack/mod.rs and instruction_visit.rs, `Visitor`), with nearcore's sizes
(prepare_v3.rs `SimpleMaxStackCfg`: i32 and f32 4 bytes, i64, f64 and references 8, v128 16).

The analysis follows each instruction's pops and pushes; a frame (block, loop, if) remembers the
stack's height, `end` drops to it and pushes the block's results, `else` drops to it and pushes
the block's parameters again; after an unconditional branch, `return` or `unreachable` the frame's
stack is polymorphic and nothing is pushed or popped until it ends. A unary operation or a
`local.tee` changes nothing, a conversion pops one value and pushes its result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nearrpc.contracts.prepare import PrepareFailure
from nearrpc.contracts.wasm_reader import WasmReader

I32, I64, F32, F64 = 0x7F, 0x7E, 0x7D, 0x7C
SIZE = {I32: 4, I64: 8, F32: 4, F64: 8, 0x7B: 16, 0x70: 8, 0x6F: 8}

# loads: the type each pushes
_LOADS = {0x28: I32, 0x29: I64, 0x2A: F32, 0x2B: F64}
_LOADS.update({op: I32 for op in range(0x2C, 0x30)})
_LOADS.update({op: I64 for op in range(0x30, 0x36)})
# conversions (and sign extensions): the type each pushes
_CONVERSIONS = {0xA7: I32, 0xA8: I32, 0xA9: I32, 0xAA: I32, 0xAB: I32, 0xAC: I64, 0xAD: I64}
_CONVERSIONS.update({0xAE: I64, 0xAF: I64, 0xB0: I64, 0xB1: I64})
_CONVERSIONS.update({op: F32 for op in range(0xB2, 0xB7)})
_CONVERSIONS.update({op: F64 for op in range(0xB7, 0xBC)})
_CONVERSIONS.update({0xBC: I32, 0xBD: I64, 0xBE: F32, 0xBF: F64, 0xC0: I32, 0xC1: I32})
_CONVERSIONS.update({0xC2: I64, 0xC3: I64, 0xC4: I64})
_TESTS = {0x45, 0x50}
_RELATIONS = set(range(0x46, 0x50)) | set(range(0x51, 0x67))
_UNARY = {0x67, 0x68, 0x69, 0x79, 0x7A, 0x7B} | set(range(0x8B, 0x92)) | set(range(0x99, 0xA0))
_BINARY = set(range(0x6A, 0x79)) | set(range(0x7C, 0x8B)) | set(range(0x92, 0x99)) | set(range(0xA0, 0xA7))


@dataclass(frozen=True)
class ModuleTypes:
    """What the analysis needs of the module: each type's (params, results), each function's
    type index (imported ones first), each global's type."""

    types: list[tuple[bytes, bytes]]
    functions: list[int]
    globals: list[int]


class _Frame:
    __slots__ = ("block_type", "height", "polymorphic")

    def __init__(self, height: int, block_type: tuple[bytes, bytes], polymorphic: bool) -> None:
        self.height = height
        self.block_type = block_type
        self.polymorphic = polymorphic


def max_operand_stack(
    body: bytes, start: int, end: int, local_type: Callable[[int], int | None], module: ModuleTypes
) -> int:
    """The most bytes the operand stack of the function body at body[start:end] holds."""
    operands: list[int] = []
    size = max_size = 0
    frames: list[_Frame] = []
    frame = _Frame(0, (b"", b""), False)
    reader = WasmReader(body, start, end)

    def push(value_type: int) -> None:
        nonlocal size, max_size
        if not frame.polymorphic:
            value_size = SIZE.get(value_type, 8)
            operands.append(value_size)
            size += value_size
            max_size = max(max_size, size)

    def pop(count: int = 1) -> None:
        nonlocal size
        if count and not frame.polymorphic:
            if count > len(operands):
                raise PrepareFailure("Deserialization")
            for _ in range(count):
                size -= operands.pop()

    def block_type() -> tuple[bytes, bytes]:
        first = body[reader.pos] if reader.pos < end else -1
        if first == 0x40:
            reader.pos += 1
            return b"", b""
        if first in SIZE:
            reader.pos += 1
            return b"", bytes([first])
        index = reader.sleb()
        if not 0 <= index < len(module.types):
            raise PrepareFailure("Deserialization")
        return module.types[index]

    def new_frame(kind: tuple[bytes, bytes], shift: int) -> None:
        nonlocal frame
        height = len(operands) if frame.polymorphic else len(operands) - shift
        frames.append(frame)
        frame = _Frame(height, kind, frame.polymorphic)

    def end_frame() -> _Frame | None:
        nonlocal frame
        if not frames:
            return None
        ended, frame = frame, frames.pop()
        pop(len(operands) - ended.height)
        return ended

    def call(type_index: int) -> None:
        if not 0 <= type_index < len(module.types):
            raise PrepareFailure("Deserialization")
        params, results = module.types[type_index]
        pop(len(params))
        for result in results:
            push(result)

    while reader.pos < end:
        op = reader.byte()
        if op in _LOADS:
            reader.uleb(), reader.uleb()
            pop()
            push(_LOADS[op])
        elif 0x36 <= op <= 0x3E:  # stores
            reader.uleb(), reader.uleb()
            pop(2)
        elif op == 0x41 or op == 0x42:
            reader.sleb()
            push(I32 if op == 0x41 else I64)
        elif op == 0x43 or op == 0x44:
            reader.pos += 4 if op == 0x43 else 8
            push(F32 if op == 0x43 else F64)
        elif op in _UNARY:
            pass
        elif op in _BINARY:
            pop()
        elif op in _TESTS:
            pop()
            push(I32)
        elif op in _RELATIONS:
            pop(2)
            push(I32)
        elif op in _CONVERSIONS:
            pop()
            push(_CONVERSIONS[op])
        elif op == 0x20:  # local.get
            value_type = local_type(reader.uleb())
            if value_type is None:
                raise PrepareFailure("Deserialization")
            push(value_type)
        elif op == 0x21 or op == 0x24:  # local.set, global.set
            reader.uleb()
            pop()
        elif op == 0x22:  # local.tee
            reader.uleb()
        elif op == 0x23:  # global.get
            index = reader.uleb()
            if index >= len(module.globals):
                raise PrepareFailure("Deserialization")
            push(module.globals[index])
        elif op == 0x00:  # unreachable
            frame.polymorphic = True
        elif op == 0x01:  # nop
            pass
        elif op == 0x02 or op == 0x03:  # block, loop
            kind = block_type()
            new_frame(kind, len(kind[0]))
        elif op == 0x04:  # if
            pop()
            kind = block_type()
            new_frame(kind, len(kind[0]))
        elif op == 0x05:  # else
            ended = end_frame()
            if ended is None:
                raise PrepareFailure("Deserialization")
            new_frame(ended.block_type, 0)
            for param in ended.block_type[0]:
                push(param)
        elif op == 0x0B:  # end
            ended = end_frame()
            if ended is not None:
                for result in ended.block_type[1]:
                    push(result)
        elif op == 0x0C:  # br
            reader.uleb()
            frame.polymorphic = True
        elif op == 0x0D:  # br_if
            reader.uleb()
            pop()
        elif op == 0x0E:  # br_table
            for _ in range(reader.uleb() + 1):
                reader.uleb()
            frame.polymorphic = True
        elif op == 0x0F:  # return
            frame.polymorphic = True
        elif op == 0x10:  # call
            index = reader.uleb()
            if index >= len(module.functions):
                raise PrepareFailure("Deserialization")
            call(module.functions[index])
        elif op == 0x11:  # call_indirect
            type_index = reader.uleb()
            reader.uleb()
            # the callee's signature only: finite-wasm leaves the table index operand counted
            # (instruction_visit.rs `visit_call_indirect`), so nearcore's budget does too
            call(type_index)
        elif op == 0x1A:  # drop
            pop()
        elif op == 0x1B:  # select
            pop(2)
        elif op == 0x1C:  # select with types
            for _ in range(reader.uleb()):
                reader.byte()
            pop(2)
        elif op == 0x25:  # table.get
            reader.uleb()
            pop()
            push(0x70)
        elif op == 0x26:  # table.set
            reader.uleb()
            pop(2)
        elif op == 0x3F:  # memory.size
            reader.byte()
            push(I32)
        elif op == 0x40:  # memory.grow
            reader.byte()
        elif op == 0xD0:  # ref.null
            push(reader.byte())
        elif op == 0xD1:  # ref.is_null: a test
            pop()
            push(I32)
        elif op == 0xD2:  # ref.func
            reader.uleb()
            push(0x70)
        elif op == 0xFC:
            _prefixed(reader, pop, push)
        else:
            raise PrepareFailure("Deserialization")
    return max_size


def _prefixed(reader: WasmReader, pop: Callable[..., None], push: Callable[[int], None]) -> None:
    sub = reader.uleb()
    if sub <= 7:  # saturating truncations: conversions to i32 (0-3) or i64 (4-7)
        pop()
        push(I32 if sub <= 3 else I64)
        return
    immediates = {8: 2, 9: 1, 10: 2, 11: 1, 12: 2, 13: 1, 14: 2, 15: 1, 16: 1, 17: 1}.get(sub)
    if immediates is None:
        raise PrepareFailure("Deserialization")
    for _ in range(immediates):
        reader.uleb()
    if sub in (8, 10, 11, 12, 14, 17):  # memory.init/copy/fill, table.init/copy/fill
        pop(3)
    elif sub == 15:  # table.grow
        pop(2)
        push(I32)
    elif sub == 16:  # table.size
        push(I32)
