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
import re
from typing import Final

_ALPHABET: Final = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_PAD: Final = ord("=")
_NOT_BASE64: Final = re.compile(rb"[^A-Za-z0-9+/]")


class Base64Error(ValueError):
    """A text the STANDARD engine refuses; str() is the crate's message."""


def decode_standard(text: str) -> bytes:
    """The bytes of `text`, or Base64Error in the base64 crate's words (offsets count bytes of
    the UTF-8 text, as Rust's str does). Every step runs in C (a signed transaction is megabytes
    of text), the faults found as the crate's left-to-right decoding meets them."""
    data = text.encode()
    size = len(data)
    if size % 4 == 1:  # decode_helper: 1 or 5 bytes past a chunk of 8 can hold no whole byte
        last = data[-1]
        if last != _PAD and last not in _ALPHABET:
            raise Base64Error(f"Invalid byte {last}, offset {size - 1}.")
        raise Base64Error("Encoded text cannot have a 6-bit remainder.")
    first_pad = data.find(b"=")
    stranger = _NOT_BASE64.search(data, 0, size if first_pad < 0 else first_pad)
    if stranger is not None:
        offset = stranger.start()
        raise Base64Error(f"Invalid byte {data[offset]}, offset {offset}.")
    pads = 0
    if first_pad >= 0:
        pads = size - first_pad
        # padding only completes a quad of two or three symbols, at most two of it, and ends the text
        if first_pad % 4 < 2 or pads > 4 - first_pad % 4 or data[first_pad:] != b"=" * pads:
            raise Base64Error(f"Invalid byte {_PAD}, offset {first_pad}.")
    if size % 4:  # unpadded: RequireCanonical wants the quad completed
        raise Base64Error("Invalid padding")
    decoded = base64.b64decode(data)
    if pads and base64.b64encode(decoded) != data:  # the last symbol carries bits no byte uses
        raise Base64Error(f"Invalid last symbol {data[size - pads - 1]}, offset {size - pads - 1}.")
    return decoded
