"""nearcore's base64 (core/primitives-core serialize.rs `from_base64`: the base64 crate's STANDARD
engine, 0.21): the alphabet with `+` and `/`, padding required and canonical, no trailing bits.
What it refuses is said in that crate's words (its DecodeError's Display), which nearcore puts in
its answers (e.g. "Failed to decode transaction: Invalid byte 33, offset 0.").

Where a text has several faults the crate names the first its decoder meets: a length that leaves
a 6-bit remainder before anything else (unless the last byte is itself invalid), then the bytes
left to right (a `=` followed by anything else is an invalid `=` at the first of its run, and a
`=` may only stand third or fourth in a quad), then the padding, then the last symbol's unused bits.
"""

from __future__ import annotations

import base64
import binascii
from typing import Final

_ALPHABET: Final = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_PAD: Final = ord("=")


class Base64Error(ValueError):
    """A text the STANDARD engine refuses; str() is the crate's message."""


def decode_standard(text: str) -> bytes:
    """The bytes of `text`, or Base64Error in the base64 crate's words (offsets count bytes of
    the UTF-8 text, as Rust's str does)."""
    data = text.encode()
    size = len(data)
    if size % 4 == 1:  # decode_helper: 1 or 5 bytes past a chunk of 8 can hold no whole byte
        last = data[-1]
        if last != _PAD and last not in _ALPHABET:
            raise Base64Error(f"Invalid byte {last}, offset {size - 1}.")
        raise Base64Error("Encoded text cannot have a 6-bit remainder.")
    first_pad = -1
    for offset, byte in enumerate(data):
        if byte == _PAD:
            if offset % 4 < 2:  # padding can only complete a quad of two or three symbols
                raise Base64Error(f"Invalid byte {_PAD}, offset {first_pad if first_pad >= 0 else offset}.")
            if first_pad < 0:
                first_pad = offset
            continue
        if first_pad >= 0:  # a symbol after padding
            raise Base64Error(f"Invalid byte {_PAD}, offset {first_pad}.")
        if byte not in _ALPHABET:
            raise Base64Error(f"Invalid byte {byte}, offset {offset}.")
    if size % 4:  # unpadded: RequireCanonical wants the quad completed
        raise Base64Error("Invalid padding")
    pads = 0 if first_pad < 0 else size - first_pad
    try:
        decoded = base64.b64decode(data, validate=True)
    except binascii.Error as exc:  # not reached: every fault above is named first
        raise Base64Error("Invalid padding") from exc
    if pads and base64.b64encode(decoded) != data:  # the last symbol carries bits no byte uses
        raise Base64Error(f"Invalid last symbol {data[size - pads - 1]}, offset {size - pads - 1}.")
    return decoded
