"""The sample contracts are well-formed WebAssembly binaries."""

from __future__ import annotations

import pytest

from nearrpc.sample import wasm


def read_uleb(data: bytes, offset: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, offset


def sections(code: bytes) -> list[int]:
    assert code[:8] == b"\x00asm\x01\x00\x00\x00"
    ids = []
    offset = 8
    while offset < len(code):
        section_id = code[offset]
        size, offset = read_uleb(code, offset + 1)
        offset += size
        ids.append(section_id)
    assert offset == len(code)
    return ids


@pytest.mark.parametrize("contract", [wasm.COUNTER, wasm.FT, wasm.GREETER], ids=lambda c: c.name)
def test_module_structure(contract: wasm.Contract) -> None:
    ids = [i for i in sections(contract.code) if i != 6]  # globals: the FT's parser state
    # Known sections in the required order (types, imports, functions, memory, exports,
    # code, data), followed by the custom producers section.
    assert ids == [1, 2, 3, 5, 7, 10, 11, 0]
    assert b"storage_read" in contract.code and b"memory" in contract.code
    assert 200 < len(contract.code) < 2500


def test_contracts_differ() -> None:
    assert len({wasm.COUNTER.code, wasm.FT.code, wasm.GREETER.code}) == 3
