"""nearcore's prepare step: the checks a contract's wasm passes before it is compiled, and the one
memory it runs with.

Facts from nearcore's runtime/near-vm-runner/src/prepare.rs (`prepare_contract`: on Wasmtime, and
whenever `reftypes_bulk_memory` is on, `prepare_v3`) and prepare/prepare_v3.rs
(`PrepareContext::run`, `transform_import_section`), payload by payload in the module's order:

- the import section: an import from a module other than `env`, or of a table or a global, is
  `Instantiate`; an imported memory is `Memory`; an imported tag is `Deserialization`; each
  imported function counts against `max_functions_number_per_contract`;
- the table section: more tables than `max_tables_per_contract` is `TooManyTables`, a table whose
  initial size is over `max_elements_per_contract_table` is `TooManyTableElements`;
- the memory section: whatever the contract declares is replaced by one memory of
  `initial_memory_pages` growing to `max_memory_pages`, exported under a reserved name (nearcore's
  MEMORY_EXPORT; here `MEMORY_EXPORT` below), so host functions reach it; a second memory does not
  validate (multi-memory is off): `Deserialization`;
- the code section's start: the defined functions, with the imported ones, over
  `max_functions_number_per_contract` is `TooManyFunctions`;
- each function body: larger than `max_function_body_size` (its bytes, locals included) is
  `FunctionBodyTooLarge`; its locals, summed over the contract, over `max_locals_per_contract`
  is `TooManyLocals` (counted before the body is validated, so a million and one locals in one
  function is TooManyLocals, not the validator's Deserialization);
- any section the proposals left off bring (tags) or an unknown one is `Deserialization`; so is
  whatever the validator refuses with the features of the block's protocol
  (runtime/near-vm-runner/src/features.rs: bulk memory and reference types only with the
  protocol's `reftypes_bulk_memory`, on since protocol 84's config; SIMD, threads, multi-memory,
  memory64, tail calls, exceptions, GC never).

A limit the protocol config does not set is no limit (prepare_v3.rs: `unwrap_or(u64::MAX)`).
Code larger than the protocol's `max_contract_size` could never have been deployed
(runtime/runtime/src/actions.rs `action_deploy_contract`, HostError/ActionError
`ContractSizeExceeded`); it is refused first, before any byte of it is parsed, with that text.

Cost: one pass over the section framing and each body's local declarations, all bounded by the
code's size, which is checked first; nothing is allocated from a count the code declares. The
whole module is validated afterwards by the engine (`wasmtime.Module.validate`), so a limit may
be reported where nearcore, validating section by section, would report an earlier invalid
section as Deserialization.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nearrpc.contracts import leb128

MEMORY_EXPORT = "\x00nearrpc.memory"

# section ids in the order a module must hold them (the tag section, 13, sits before globals)
_ORDER = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}
_CUSTOM, _IMPORT, _TABLE, _MEMORY, _EXPORT, _CODE, _TAG = 0, 2, 4, 5, 7, 10, 13


class PrepareFailure(Exception):
    """The PrepareError variant name (Deserialization, Memory, ...)."""


class ContractTooLarge(Exception):
    """Code over the protocol's max_contract_size: its size and the limit."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{size} > {limit}")
        self.size = size
        self.limit = limit


@dataclass(frozen=True)
class PrepareRules:
    """What the block's protocol config says of a contract before it runs (limit_config and the
    wasm feature flag); None is no limit."""

    initial_pages: int
    max_pages: int
    max_contract_size: int | None = None
    max_functions: int | None = None
    max_locals: int | None = None
    max_function_body_size: int | None = None
    max_tables: int | None = None
    max_table_elements: int | None = None
    reftypes_bulk_memory: bool = True
    # the gas instrumentation's prices (instrument.py), part of what a compiled module depends on
    regular_op_cost: int = 0
    linear_op_base_cost: int = 0
    linear_op_unit_cost: int = 0
    max_stack_height: int = 0  # finite-wasm's stack budget in bytes (0: not metered)


@dataclass(frozen=True)
class Section:
    id: int
    body: bytes


def _leb(data: bytes, pos: int, end: int | None = None) -> tuple[int, int]:
    stop = len(data) if end is None else end
    result = shift = 0
    while True:
        if pos >= stop:
            raise PrepareFailure("Deserialization")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise PrepareFailure("Deserialization")


def _name(data: bytes, pos: int) -> int:
    length, pos = _leb(data, pos)
    if pos + length > len(data):
        raise PrepareFailure("Deserialization")
    return pos + length


def _byte(data: bytes, pos: int) -> int:
    if pos >= len(data):
        raise PrepareFailure("Deserialization")
    return data[pos]


def _limits(data: bytes, pos: int) -> tuple[int, int]:
    """A table's or memory's limits: (initial, position after them)."""
    flags = _byte(data, pos)
    initial, pos = _leb(data, pos + 1)
    if flags & 1:
        _, pos = _leb(data, pos)
    return initial, pos


def sections(wasm: bytes) -> list[Section]:
    if wasm[:8] != b"\x00asm\x01\x00\x00\x00":
        raise PrepareFailure("Deserialization")
    out, pos = [], 8
    while pos < len(wasm):
        section_id = wasm[pos]
        size, pos = _leb(wasm, pos + 1)
        if pos + size > len(wasm):
            raise PrepareFailure("Deserialization")
        out.append(Section(section_id, wasm[pos : pos + size]))
        pos += size
    return out


class _Budget:
    """The limits counted down as the module is read (prepare_v3.rs `PrepareContext`)."""

    def __init__(self, rules: PrepareRules) -> None:
        self.rules = rules
        self.functions = rules.max_functions
        self.locals = rules.max_locals

    def take_functions(self, count: int) -> None:
        if self.functions is not None:
            self.functions -= count
            if self.functions < 0:
                raise PrepareFailure("TooManyFunctions")

    def take_locals(self, count: int) -> None:
        if self.locals is not None:
            self.locals -= count
            if self.locals < 0:
                raise PrepareFailure("TooManyLocals")


def _check_imports(body: bytes, budget: _Budget) -> None:
    count, pos = _leb(body, 0)
    for _ in range(count):
        length, start = _leb(body, pos)
        module = body[start : start + length]
        pos = _name(body, _name(body, pos))
        kind = _byte(body, pos)
        if module != b"env":  # checked first, whatever the kind (transform_import_section)
            raise PrepareFailure("Instantiate")
        if kind == 0:  # a function (its type index): it counts as one of the contract's
            _, pos = _leb(body, pos + 1)
            budget.take_functions(1)
        elif kind in (1, 3):  # a table, a global
            raise PrepareFailure("Instantiate")
        elif kind == 2:  # a memory: nearcore gives the contract its own
            raise PrepareFailure("Memory")
        else:  # a tag (exceptions are off), or no kind at all
            raise PrepareFailure("Deserialization")


def _check_tables(body: bytes, rules: PrepareRules) -> None:
    count, pos = _leb(body, 0)
    if rules.max_tables is not None and count > rules.max_tables:
        raise PrepareFailure("TooManyTables")
    for _ in range(count):
        if _byte(body, pos) == 0x40:  # a table with an initializer expression: function references
            raise PrepareFailure("Deserialization")
        initial, pos = _limits(body, pos + 1)
        if rules.max_table_elements is not None and initial > rules.max_table_elements:
            raise PrepareFailure("TooManyTableElements")


def _check_code(body: bytes, budget: _Budget) -> None:
    count, pos = _leb(body, 0)
    budget.take_functions(count)
    body_limit = budget.rules.max_function_body_size
    for _ in range(count):
        size, start = _leb(body, pos)
        end = start + size
        if end > len(body):
            raise PrepareFailure("Deserialization")
        if body_limit is not None and size > body_limit:
            raise PrepareFailure("FunctionBodyTooLarge")
        groups, at = _leb(body, start, end)
        for _ in range(groups):
            locals_, at = _leb(body, at, end)
            budget.take_locals(locals_)
            at += 1  # the locals' type
            if at > end:
                raise PrepareFailure("Deserialization")
        pos = end


def check(wasm: bytes, rules: PrepareRules) -> list[Section]:
    """The module's sections once nearcore's limits hold (else PrepareFailure, or
    ContractTooLarge before anything is read)."""
    if rules.max_contract_size is not None and len(wasm) > rules.max_contract_size:
        raise ContractTooLarge(len(wasm), rules.max_contract_size)
    parts = sections(wasm)
    budget = _Budget(rules)
    memories = 0
    for section in parts:
        if section.id == _IMPORT:
            _check_imports(section.body, budget)
        elif section.id == _TABLE:
            _check_tables(section.body, rules)
        elif section.id == _MEMORY:
            memories += _leb(section.body, 0)[0]
            if memories > 1:
                raise PrepareFailure("Deserialization")
        elif section.id == _CODE:
            _check_code(section.body, budget)
        elif (section.id != _CUSTOM and section.id not in _ORDER) or section.id == _TAG:
            raise PrepareFailure("Deserialization")
    return parts


def prepare(
    wasm: bytes, rules: PrepareRules, transform: Callable[[list[Section]], list[Section]] | None = None
) -> bytes:
    """The module, checked, with nearcore's one memory (declared here, exported as MEMORY_EXPORT),
    and `transform` (the gas instrumentation) applied last."""
    rebuilt = [section for section in check(wasm, rules) if section.id != _MEMORY]
    memory = Section(_MEMORY, b"\x01\x01" + leb128.unsigned(rules.initial_pages) + leb128.unsigned(rules.max_pages))
    export_entry = leb128.unsigned(len(MEMORY_EXPORT.encode())) + MEMORY_EXPORT.encode() + b"\x02\x00"
    has_export = any(section.id == _EXPORT for section in rebuilt)
    out: list[Section] = []
    placed_memory = placed_export = False
    for section in rebuilt:
        rank = _ORDER.get(section.id)
        if rank is not None and not placed_memory and rank > _ORDER[_MEMORY]:
            out.append(memory)
            placed_memory = True
        if rank is not None and not has_export and not placed_export and rank > _ORDER[_EXPORT]:
            out.append(Section(_EXPORT, b"\x01" + export_entry))
            placed_export = True
        if section.id == _EXPORT:
            count, pos = _leb(section.body, 0)
            section = Section(_EXPORT, leb128.unsigned(count + 1) + section.body[pos:] + export_entry)
            placed_export = True
        out.append(section)
    if not placed_memory:
        out.append(memory)
    if not placed_export:
        out.append(Section(_EXPORT, b"\x01" + export_entry))
    if transform is not None:
        out = transform(out)
    blob = bytearray(wasm[:8])
    for section in out:
        blob.append(section.id)
        blob += leb128.unsigned(len(section.body))
        blob += section.body
    return bytes(blob)
