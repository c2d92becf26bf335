"""A cursor over a wasm module's bytes, as the analyses that walk function bodies read them
(instrument.py, stack_height.py): bytes and LEB128 integers, bounded by the body's end, a read
past it failing as nearcore's prepare step fails a malformed module (Deserialization)."""

from __future__ import annotations

from nearrpc.contracts.prepare import PrepareFailure


class WasmReader:
    def __init__(self, data: bytes, pos: int, end: int) -> None:
        self.data, self.pos, self.end = data, pos, end

    def byte(self) -> int:
        if self.pos >= self.end:
            raise PrepareFailure("Deserialization")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def uleb(self) -> int:
        result = shift = 0
        while True:
            byte = self.byte()
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7
            if shift > 70:
                raise PrepareFailure("Deserialization")

    def sleb(self) -> int:
        result = shift = 0
        while True:
            byte = self.byte()
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return result - (1 << shift) if byte & 0x40 else result

    def skip(self, count: int) -> None:
        self.pos += count
        if self.pos > self.end:
            raise PrepareFailure("Deserialization")
