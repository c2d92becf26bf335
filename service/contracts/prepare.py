"""Preparing a contract's wasm as nearcore does before it runs it.

nearcore (runtime/near-vm-runner/src/prepare.rs and prepare_v2.rs, `prepare_contract`) validates
the module (an invalid one is `PrepareError(Deserialization)`) and replaces whatever memory the
contract declares with one memory of `initial_memory_pages` growing to at most
`max_memory_pages` (limit_config), imported as `env.memory`; more than one memory is
`PrepareError(Memory)`. Here the same memory is declared inside the module (sizes from the
protocol config) and exported under a reserved name, so host functions reach it and one engine-wide
linker serves every store. Only section framing is parsed: the engine validates the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

from nearrpc.contracts import leb128

MEMORY_EXPORT = "\x00nearrpc.memory"

# section ids in the order a module must hold them (the tag section, 13, sits before globals)
_ORDER = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}
_IMPORT, _MEMORY, _EXPORT = 2, 5, 7


class PrepareFailure(Exception):
    """The PrepareError variant name (Deserialization, Memory, ...)."""


@dataclass(frozen=True)
class Section:
    id: int
    body: bytes


def _leb(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
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
    return pos + length


def _limits(data: bytes, pos: int) -> int:
    flags = data[pos]
    _, pos = _leb(data, pos + 1)
    if flags & 1:
        _, pos = _leb(data, pos)
    return pos


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


def _drop_memory_imports(body: bytes) -> tuple[bytes, int]:
    """The import section without its memory imports, and how many there were."""
    count, pos = _leb(body, 0)
    kept: list[bytes] = []
    dropped = 0
    for _ in range(count):
        start = pos
        pos = _name(body, _name(body, pos))
        kind = body[pos]
        pos += 1
        if kind == 0:
            _, pos = _leb(body, pos)
        elif kind == 1:
            pos = _limits(body, pos + 1)
        elif kind == 2:
            pos = _limits(body, pos)
            dropped += 1
            continue
        elif kind == 3:
            pos += 2
        else:
            raise PrepareFailure("Deserialization")
        kept.append(body[start:pos])
    return leb128.unsigned(len(kept)) + b"".join(kept), dropped


def prepare(wasm: bytes, initial_pages: int, max_pages: int) -> bytes:
    """The module with nearcore's one memory (declared here, exported as MEMORY_EXPORT)."""
    parts = sections(wasm)
    memories = 0
    rebuilt: list[Section] = []
    for section in parts:
        if section.id == _IMPORT:
            body, dropped = _drop_memory_imports(section.body)
            memories += dropped
            rebuilt.append(Section(_IMPORT, body))
        elif section.id == _MEMORY:
            memories += _leb(section.body, 0)[0]
        else:
            rebuilt.append(section)
    if memories > 1:
        raise PrepareFailure("Memory")
    memory = Section(_MEMORY, b"\x01\x01" + leb128.unsigned(initial_pages) + leb128.unsigned(max_pages))
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
    blob = bytearray(wasm[:8])
    for section in out:
        blob.append(section.id)
        blob += leb128.unsigned(len(section.body))
        blob += section.body
    return bytes(blob)
