"""LEB128, the variable-length integers of the WebAssembly binary format (sizes, counts,
indices and constants): what the executor's preparation writes into a module and the sample
chain's assembler builds one from."""

from __future__ import annotations


def unsigned(value: int) -> bytes:
    """The unsigned LEB128 bytes of `value` (>= 0): seven bits a byte, low first."""
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def signed(value: int) -> bytes:
    """The signed LEB128 bytes of `value`: as unsigned, ending where the sign bit (0x40) of
    the last byte says the rest."""
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        done = (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40)
        out.append(byte if done else byte | 0x80)
        if done:
            return bytes(out)
