"""Gas instrumentation as nearcore's Wasmtime runner does it: each function's instructions are
grouped as finite-wasm groups them, and each group's gas is taken from a wasm global at its start,
so the engine needs no fuel and no host call per group.

Facts from nearcore and finite-wasm 0.6 (the version nearcore's prepare step uses):
- prices (runtime/near-vm-runner/src/prepare/prepare_v3.rs, `SimpleGasCostCfg`): `block`, `end`
  and `else` cost nothing; `memory.init`/`copy`/`fill` and `table.init`/`copy`/`fill` cost
  `linear_op_base_cost` plus `linear_op_unit_cost` per element of their count operand; every other
  instruction, `loop`, `if`, `br`, calls and `memory.grow` included, costs `regular_op_cost`;
- grouping (finite-wasm src/gas/mod.rs, `Visitor`, and src/gas/optimize.rs, `optimize`): an
  instruction that may trap, branch or call (loads, stores, div/rem, float-to-int truncations,
  calls, `table.get`/`set`, `if`, `else`, `br*`, `return`, an `end` some branch targets, a `loop`
  some branch targets) ends its group, charged with it; an aggregate instruction (the bulk ones,
  `memory.grow`, `table.grow`) is charged alone; code after an unconditional branch is never
  charged. A group is charged before its first instruction runs, so a trap inside it has paid
  every instruction of it up to the trapping one, which is its last;
- each call of a function first pays `ceil(frame / 8) * regular_op_cost`, its frame being 64 bytes
  plus 4 per i32/f32 and 8 per i64/f64/reference parameter and local (prepare_v3.rs
  `SimpleMaxStackCfg::size_of_function_activation`, instrument_v3.rs `transform_code_section`);
- a charge past the gas left ends the run there (instrument_v3.rs `call_gas_instrumentation`:
  the remaining gas global is below the charge, then `finite_wasm_gas` charges it and fails).

Here the global (exported as GAS_EXPORT) holds the gas left; a charge subtracts from it and, when
it went below zero, runs `unreachable`: the engine reads the global and tells the gas trap from the
contract's own (the global is never negative otherwise), the charge being what took it below zero.
The start function is exported (START_EXPORT) instead of started, so it runs once the global holds
the gas, as nearcore's runner does (wasmtime_runner/mod.rs `START_EXPORT`). No function index
moves: the global is appended after the contract's (imported globals are refused by prepare).

The stack: each body is wrapped in a block; entering it takes its operand stack's most bytes
(stack_height.py) plus its frame's from a second global (exported as STACK_EXPORT) starting at
`max_stack_height`, and leaving it (its end, a branch out of the wrapper, `return`) gives them
back; below zero runs `unreachable`, which the engine answers as nearcore's
`finite_wasm_stack_exhausted` does: MemoryAccessViolation (instrument_v3.rs
`transform_code_section`, `call_unstack_instrumentation`; wasmtime_runner/logic.rs).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from nearrpc.contracts import leb128
from nearrpc.contracts.prepare import PrepareFailure, Section
from nearrpc.contracts.stack_height import ModuleTypes, max_operand_stack
from nearrpc.contracts.wasm_reader import WasmReader

GAS_EXPORT = "\x00nearrpc.gas"
STACK_EXPORT = "\x00nearrpc.stack"
START_EXPORT = "\x00nearrpc.start"

_TYPE, _IMPORT, _FUNCTION, _GLOBAL, _EXPORT, _START, _CODE = 1, 2, 3, 6, 7, 8, 10
_ORDER = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}

# finite-wasm's instrumentation kinds
PURE, UNREACHABLE, PRE, POST, BETWEEN, AGGREGATE = range(6)
# what an instruction is to the analysis
_PLAIN, _SIDE, _UNREACHABLE_OP, _BLOCK, _LOOP, _IF, _ELSE, _END, _BR, _BR_IF, _BR_TABLE, _RETURN = range(12)
_AGG_CONST, _AGG_LINEAR = 12, 13

_VALUE_SIZE = {0x7F: 4, 0x7E: 8, 0x7D: 4, 0x7C: 8, 0x7B: 16, 0x70: 8, 0x6F: 8}
# loads and stores, integer division and remainder, float-to-int truncations that trap
_TRAPPING = frozenset(range(0x28, 0x3F)) | {0x6D, 0x6E, 0x6F, 0x70, 0x7F, 0x80, 0x81, 0x82}
_TRAPPING |= {0xA8, 0xA9, 0xAA, 0xAB, 0xAE, 0xAF, 0xB0, 0xB1}


@dataclass(frozen=True)
class GasPrices:
    """The wasm_config prices the instrumentation charges (of the block's protocol)."""

    regular: int
    linear_base: int
    linear_unit: int
    max_stack_height: int = 0  # the stack budget in finite-wasm's bytes; 0: the stack is not metered


@dataclass
class Point:
    """An instrumentation point: charged before the instruction at `offset`."""

    offset: int
    kind: int
    constant: int
    linear: int = 0


class _Reader(WasmReader):
    def block_type(self) -> None:
        first = self.data[self.pos] if self.pos < self.end else -1
        if first == 0x40 or first in _VALUE_SIZE:
            self.pos += 1
        else:
            self.uleb()  # a type index (s33; its sign never matters to the length)


def _operators(reader: _Reader) -> Iterator[tuple[int, int, tuple[int, ...]]]:
    """(offset, what it is, branch depths) for each instruction of a body, the final `end` too."""
    while reader.pos < reader.end:
        offset = reader.pos
        op = reader.byte()
        targets: tuple[int, ...] = ()
        if op in _TRAPPING:
            if op < 0x3F:  # a load or a store: its memarg
                reader.uleb()
                reader.uleb()
            what = _SIDE
        elif 0x45 <= op <= 0xC4 or op in (0x01, 0x1A, 0x1B, 0xD1):
            what = _PLAIN
        elif 0x20 <= op <= 0x24 or op == 0xD2:
            reader.uleb()
            what = _PLAIN
        elif op == 0x41 or op == 0x42:
            reader.uleb()  # the sign never matters to the length
            what = _PLAIN
        elif op == 0x43 or op == 0x44:
            reader.skip(4 if op == 0x43 else 8)
            what = _PLAIN
        elif op == 0x00:
            what = _UNREACHABLE_OP
        elif op in (0x02, 0x03, 0x04):
            reader.block_type()
            what = {0x02: _BLOCK, 0x03: _LOOP, 0x04: _IF}[op]
        elif op == 0x05:
            what = _ELSE
        elif op == 0x0B:
            what = _END
        elif op == 0x0C or op == 0x0D:
            targets = (reader.uleb(),)
            what = _BR if op == 0x0C else _BR_IF
        elif op == 0x0E:
            count = reader.uleb()
            targets = tuple(reader.uleb() for _ in range(count + 1))
            what = _BR_TABLE
        elif op == 0x0F:
            what = _RETURN
        elif op == 0x10 or op == 0x25 or op == 0x26:
            reader.uleb()
            what = _SIDE
        elif op == 0x11:
            reader.uleb()
            reader.uleb()
            what = _SIDE
        elif op == 0x1C:
            for _ in range(reader.uleb()):
                reader.byte()
            what = _PLAIN
        elif op == 0x3F:
            reader.byte()
            what = _PLAIN
        elif op == 0x40:
            reader.byte()
            what = _AGG_CONST
        elif op == 0xD0:
            reader.byte()
            what = _PLAIN
        elif op == 0xFC:
            what = _prefixed(reader)
        else:  # SIMD, threads, tail calls, exceptions: off in every protocol (validation refused them)
            raise PrepareFailure("Deserialization")
        yield offset, what, targets


def _prefixed(reader: _Reader) -> int:
    sub = reader.uleb()
    if sub <= 7:  # saturating truncations
        return _PLAIN
    immediates = {8: 2, 9: 1, 10: 2, 11: 1, 12: 2, 13: 1, 14: 2, 15: 1, 16: 1, 17: 1}.get(sub)
    if immediates is None:
        raise PrepareFailure("Deserialization")
    for _ in range(immediates):
        reader.uleb()
    if sub in (9, 13, 16):  # data.drop, elem.drop, table.size
        return _PLAIN
    return _AGG_CONST if sub == 15 else _AGG_LINEAR  # table.grow; the bulk operations


def _merge_same(a: int, b: int) -> int:
    # finite-wasm optimize.rs `merge_same_point`
    if UNREACHABLE in (a, b):
        return UNREACHABLE
    if b == AGGREGATE or a == PURE:
        return b
    if a == PRE:
        return PRE if b in (PRE, PURE) else BETWEEN
    if a == POST:
        return POST if b in (POST, PURE) else BETWEEN
    return BETWEEN


def _merge_across(a: int, b: int) -> int | None:
    # finite-wasm optimize.rs `merge_across_instructions`
    if a == b and a in (PURE, UNREACHABLE):
        return a
    if a == POST and b == PRE:
        return BETWEEN
    if a == PURE and b == PRE:
        return PRE
    if a == POST and b == PURE:
        return POST
    return None


class _Frame:
    __slots__ = ("kind", "loop", "polymorphic")

    def __init__(self, polymorphic: bool, kind: str, loop: tuple[int, int] = (0, 0)) -> None:
        self.polymorphic = polymorphic
        self.kind = kind  # "untaken", "forward" or "loop"
        self.loop = loop  # a loop's points before and after it


def analyze(body: bytes, start: int, end: int, prices: GasPrices, returns: list[int] | None = None) -> list[Point]:
    """The charge points of one function body's instructions (bytes [start, end) of `body`), as
    finite-wasm's gas analysis and its optimisation leave them; the offsets of its `return`
    instructions appended to `returns`."""
    points: list[Point] = []
    frames: list[_Frame] = []
    frame = _Frame(False, "untaken")
    scheduled: Point | None = None
    regular = prices.regular

    def before(offset: int, kind: int, constant: int, linear: int = 0) -> None:
        points.append(Point(offset, UNREACHABLE if frame.polymorphic else kind, constant, linear))

    def side_effect(offset: int, cost: int) -> None:
        nonlocal scheduled
        before(offset, PRE, cost)
        scheduled = Point(-1, POST, 0)

    def target(depth: int) -> None:
        chosen = frame if depth == 0 else frames[len(frames) - depth]
        if chosen.kind == "untaken":
            chosen.kind = "forward"
        elif chosen.kind == "loop":
            points[chosen.loop[1]].kind = POST
            points[chosen.loop[0]].kind = PRE

    for offset, what, targets in _operators(_Reader(body, start, end)):
        if scheduled is not None:  # `set_offset`: what the previous instruction put after itself
            scheduled.offset = offset
            points.append(scheduled)
            scheduled = None
        if what == _PLAIN:
            before(offset, PURE, regular)
        elif what == _SIDE:
            side_effect(offset, regular)
        elif what == _UNREACHABLE_OP:
            before(offset, PRE, regular)
            scheduled = Point(-1, UNREACHABLE, 0)
            frame.polymorphic = True
        elif what == _BLOCK:
            before(offset, PURE, 0)
            frames.append(frame)
            frame = _Frame(frame.polymorphic, "untaken")
        elif what == _LOOP:
            pre = len(points)
            before(offset, PURE, 0)
            scheduled = Point(-1, PURE, regular)
            frames.append(frame)
            frame = _Frame(frame.polymorphic, "loop", (pre, pre + 1))
        elif what == _IF:
            side_effect(offset, regular)
            frames.append(frame)
            frame = _Frame(frame.polymorphic, "forward")
        elif what == _ELSE:
            if frames:
                frame = frames.pop()
            frames.append(frame)
            frame = _Frame(frame.polymorphic, "forward")
            side_effect(offset, 0)
        elif what == _END:
            if frame.kind == "forward":
                side_effect(offset, 0)
            else:
                before(offset, PURE, 0)
            if frames:
                frame = frames.pop()
        elif what in (_BR, _BR_IF, _RETURN):
            if what == _RETURN and returns is not None:
                returns.append(offset)
            side_effect(offset, regular)
            target(targets[0] if what != _RETURN else len(frames))
            if what != _BR_IF:
                frame.polymorphic = True
        elif what == _BR_TABLE:
            side_effect(offset, regular)
            for depth in targets:
                target(depth)
            frame.polymorphic = True
        elif what == _AGG_CONST:
            before(offset, AGGREGATE, regular)
            scheduled = Point(-1, POST, 0)
        else:  # _AGG_LINEAR
            before(offset, AGGREGATE, prices.linear_base, prices.linear_unit)
            scheduled = Point(-1, POST, 0)
    return _optimize(_optimize(points, same_offset=True), same_offset=False)


def _optimize(points: list[Point], same_offset: bool) -> list[Point]:
    """finite-wasm optimize.rs `optimize_with`: merge each point into the one before it where the
    rule allows (at the same offset first, then across instructions)."""
    if not points:
        return points
    out: list[Point] = []
    prev = Point(points[0].offset, points[0].kind, points[0].constant, points[0].linear)
    for point in points[1:]:
        if same_offset:
            kind: int | None = _merge_same(prev.kind, point.kind) if prev.offset == point.offset else None
        else:
            kind = _merge_across(prev.kind, point.kind)
        if kind is None:
            out.append(prev)
            prev = Point(point.offset, point.kind, point.constant, point.linear)
        else:
            prev = Point(
                min(prev.offset, point.offset), kind, prev.constant + point.constant, prev.linear + point.linear
            )
    out.append(prev)
    return out


def frame_charge(param_sizes: int, locals_size: int, regular: int) -> int:
    """What entering a function costs (instrument_v3.rs `transform_code_section`)."""
    frame = 64 + param_sizes + locals_size
    return (frame + 7) // 8 * regular


def _charge_constant(gas_global: bytes, constant: int) -> bytes:
    # global -= constant; if global < 0: unreachable
    return (
        b"\x23" + gas_global + b"\x42" + _sleb(constant) + b"\x7d\x24" + gas_global
        + b"\x23" + gas_global + b"\x42\x00\x53\x04\x40\x00\x0b"
    )  # fmt: skip


def _charge_linear(gas_global: bytes, count_local: bytes, constant: int, linear: int) -> bytes:
    # the count (an i32 on top of the stack) kept in a local: global -= count * linear + constant
    return (
        b"\x21" + count_local + b"\x23" + gas_global + b"\x20" + count_local + b"\xad\x42" + _sleb(linear)
        + b"\x7e\x42" + _sleb(constant) + b"\x7c\x7d\x24" + gas_global
        + b"\x23" + gas_global + b"\x42\x00\x53\x04\x40\x00\x0b\x20" + count_local
    )  # fmt: skip


def _sleb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40):
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)


def _vec(body: bytes) -> tuple[int, _Reader]:
    reader = _Reader(body, 0, len(body))
    return reader.uleb(), reader


def _types(body: bytes) -> list[tuple[bytes, bytes]]:
    """Each function type's (parameter types, result types)."""
    count, reader = _vec(body)
    types = []
    for _ in range(count):
        if reader.byte() != 0x60:
            raise PrepareFailure("Deserialization")
        params = bytes(reader.byte() for _ in range(reader.uleb()))
        results = bytes(reader.byte() for _ in range(reader.uleb()))
        types.append((params, results))
    return types


def _imported_function_types(body: bytes) -> list[int]:
    count, reader = _vec(body)
    functions = []
    for _ in range(count):
        reader.skip(reader.uleb())
        reader.skip(reader.uleb())
        if reader.byte() != 0:  # prepare lets only functions through
            raise PrepareFailure("Deserialization")
        functions.append(reader.uleb())
    return functions


def _global_types(body: bytes) -> list[int]:
    count, reader = _vec(body)
    types = []
    for _ in range(count):
        types.append(reader.byte())
        reader.byte()  # mutability
        while True:  # the constant initializer, to its `end`
            op = reader.byte()
            if op == 0x0B:
                break
            if op in (0x41, 0x42, 0x23, 0xD2):
                reader.uleb()
            elif op in (0x43, 0x44):
                reader.skip(4 if op == 0x43 else 8)
            elif op == 0xD0:
                reader.byte()
    return types


def _function_types(body: bytes) -> list[int]:
    count, reader = _vec(body)
    return [reader.uleb() for _ in range(count)]


class _Locals:
    """A function's parameter and local types, looked up by index without listing each local."""

    def __init__(self, params: bytes) -> None:
        self.params = params
        self.ends: list[int] = []  # the index past each run of locals
        self.kinds: list[int] = []

    def add(self, count: int, value_type: int) -> None:
        self.ends.append((self.ends[-1] if self.ends else len(self.params)) + count)
        self.kinds.append(value_type)

    def __call__(self, index: int) -> int | None:
        if index < len(self.params):
            return self.params[index]
        run = bisect_right(self.ends, index)
        return self.kinds[run] if run < len(self.kinds) else None


def _unstack(stack_global: bytes, charge: int) -> bytes:
    # global += charge (instrument_v3.rs `call_unstack_instrumentation`)
    return b"\x23" + stack_global + b"\x42" + _sleb(charge) + b"\x7c\x24" + stack_global


@dataclass
class _Module:
    types: list[tuple[bytes, bytes]]
    signatures: list[int]  # each defined function's type index
    stack: ModuleTypes  # what the stack analysis needs
    gas_global: bytes
    stack_global: bytes
    added_types: list[tuple[bytes, bytes]]  # appended for the bodies' wrapping blocks


def _wrapper_type(module: _Module, signature: int) -> bytes:
    """The block type of a body's wrapping block: the function's results (instrument_v3.rs
    `transform_code_section`)."""
    params, results = module.types[signature]
    if not results:
        return b"\x40"
    if len(results) == 1:
        return results[:1]
    if not params:
        return _sleb(signature)
    module.added_types.append((b"", results))
    return _sleb(len(module.types) + len(module.added_types) - 1)


def _instrument_code(body: bytes, module: _Module, prices: GasPrices) -> bytes:
    count, reader = _vec(body)
    if count != len(module.signatures):
        raise PrepareFailure("Deserialization")
    metered = prices.max_stack_height > 0
    out = bytearray(leb128.unsigned(count))
    for index in range(count):
        size = reader.uleb()
        start = reader.pos
        end = start + size
        signature = module.signatures[index]
        if end > len(body) or signature >= len(module.types) or size == 0 or body[end - 1] != 0x0B:
            raise PrepareFailure("Deserialization")
        params = module.types[signature][0]
        local = _Reader(body, start, end)
        locals_types = _Locals(params)
        groups = local.uleb()
        groups_start = local.pos
        locals_count = locals_size = 0
        for _ in range(groups):
            n = local.uleb()
            kind = local.byte()
            locals_types.add(n, kind)
            locals_count += n
            locals_size += n * _VALUE_SIZE.get(kind, 8)
        code_start = local.pos
        params_size = sum(_VALUE_SIZE.get(kind, 8) for kind in params)
        frame = 64 + params_size + locals_size
        returns: list[int] = []
        points = analyze(body, code_start, end, prices, returns)
        new = bytearray()
        count_local = b""
        if any(point.linear and point.kind != UNREACHABLE for point in points):
            # the count of bulk operations kept in an i32 local after all the function has
            count_local = leb128.unsigned(len(params) + locals_count)
            new += leb128.unsigned(groups + 1) + body[groups_start:code_start] + b"\x01\x7f"
        else:
            new += body[start:code_start]
        charge = 0
        if metered:
            # the body in a block, so any way out of it passes the unstack after it; the stack
            # charged first (its operand stack's most and its frame), then the frame's gas
            operand = max_operand_stack(body, code_start, end, locals_types, module.stack)
            charge = operand + frame
            new += b"\x02" + _wrapper_type(module, signature)
            new += _charge_constant(module.stack_global, charge)
        new += _charge_constant(module.gas_global, frame_charge(params_size, locals_size, prices.regular))
        inserts: dict[int, bytearray] = {}
        for point in points:
            if point.kind == UNREACHABLE or (point.constant == 0 and point.linear == 0):
                continue
            code = inserts.setdefault(point.offset, bytearray())
            if point.linear:
                code += _charge_linear(module.gas_global, count_local, point.constant, point.linear)
            else:
                code += _charge_constant(module.gas_global, point.constant)
        if metered:
            for offset in returns:  # a `return` gives its frame back first
                inserts.setdefault(offset, bytearray()).extend(_unstack(module.stack_global, charge))
        at = code_start
        for offset in sorted(inserts):
            new += body[at:offset]
            new += inserts[offset]
            at = offset
        new += body[at : end - 1]  # up to the final `end`
        if metered:
            new += b"\x0b" + _unstack(module.stack_global, charge)
        new += b"\x0b"
        out += leb128.unsigned(len(new)) + new
        reader.pos = end
    return bytes(out)


def _export_entry(name: str, kind: int, index: int) -> bytes:
    encoded = name.encode()
    return leb128.unsigned(len(encoded)) + encoded + bytes([kind]) + leb128.unsigned(index)


def instrument(parts: list[Section], prices: GasPrices) -> list[Section]:
    """The prepared module's sections with the gas instrumentation: the gas global added and
    exported, the start function exported instead of started, each body charging its groups."""
    by_id = {section.id: section.body for section in parts}
    types = _types(by_id[_TYPE]) if _TYPE in by_id else []
    signatures = _function_types(by_id[_FUNCTION]) if _FUNCTION in by_id else []
    imported = _imported_function_types(by_id[_IMPORT]) if _IMPORT in by_id else []
    global_types = _global_types(by_id[_GLOBAL]) if _GLOBAL in by_id else []
    globals_count = len(global_types)
    module = _Module(
        types,
        signatures,
        ModuleTypes(types, imported + signatures, [*global_types, 0x7E, 0x7E]),
        leb128.unsigned(globals_count),
        leb128.unsigned(globals_count + 1),
        [],
    )
    code = by_id.get(_CODE)
    new_code = _instrument_code(code, module, prices) if code is not None else None
    # the gas left (mutable i64 = 0: the engine sets it before any code runs), then the stack left
    new_global = b"\x7e\x01\x42\x00\x0b" + b"\x7e\x01\x42" + _sleb(prices.max_stack_height) + b"\x0b"
    exports = [_export_entry(GAS_EXPORT, 3, globals_count), _export_entry(STACK_EXPORT, 3, globals_count + 1)]
    if _START in by_id:
        exports.append(_export_entry(START_EXPORT, 0, _vec(by_id[_START])[0]))
    out: list[Section] = []
    placed_global = placed_export = False
    for section in parts:
        rank = _ORDER.get(section.id)
        if rank is not None and not placed_global and rank > _ORDER[_GLOBAL]:
            out.append(Section(_GLOBAL, b"\x02" + new_global))
            placed_global = True
        if rank is not None and not placed_export and rank > _ORDER[_EXPORT]:
            out.append(Section(_EXPORT, leb128.unsigned(len(exports)) + b"".join(exports)))
            placed_export = True
        if section.id == _GLOBAL:
            count, reader = _vec(section.body)
            section = Section(_GLOBAL, leb128.unsigned(count + 2) + section.body[reader.pos :] + new_global)
            placed_global = True
        elif section.id == _EXPORT:
            count, reader = _vec(section.body)
            body = leb128.unsigned(count + len(exports)) + section.body[reader.pos :] + b"".join(exports)
            section = Section(_EXPORT, body)
            placed_export = True
        elif section.id == _START:
            continue
        elif section.id == _CODE:
            assert new_code is not None
            section = Section(_CODE, new_code)
        elif section.id == _TYPE and module.added_types:
            added = b"".join(
                b"\x60" + leb128.unsigned(len(p)) + p + leb128.unsigned(len(r)) + r for p, r in module.added_types
            )
            section = Section(
                _TYPE,
                leb128.unsigned(len(types) + len(module.added_types))
                + section.body[_vec(section.body)[1].pos :]
                + added,
            )
        out.append(section)
    if not placed_global:
        out.append(Section(_GLOBAL, b"\x02" + new_global))
    if not placed_export:
        out.append(Section(_EXPORT, leb128.unsigned(len(exports)) + b"".join(exports)))
    return out
