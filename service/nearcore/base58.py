"""Base58 decoding whose cost is bounded by what it decodes, not by what a request sends.

Decoding base58 costs the square of the text's length, and a request body may hold 10 MiB:
a 200,000-character `block_id` once took 21 s of the event loop. nearcore decodes hashes and
keys as the bs58 crate does onto a buffer of their size (`decode(..).onto(&mut [u8; N])`),
which stops at the first character that is not base58 or at the first one that would overflow
the buffer. `decode_onto` does the same, so it reads at most about 1.4 characters per byte of
the buffer past the leading `1`s (zero bytes), whatever the text's length, and fails with the
error bs58 gives for that input. `decode_capped` gives the same answers for data of no fixed
size (the legacy `query` path's `data`, onto up to 10 KiB) at the cost of a fold ten digits at a
time over no more characters than could fit.
"""

from __future__ import annotations

import re
from typing import Final

import based58

ALPHABET: Final = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"  # bs58's default, Bitcoin's
_DIGITS: Final = {character: digit for digit, character in enumerate(ALPHABET)}
_NOT_BASE58: Final = re.compile(f"[^{ALPHABET}]")
# The longest text of a 32-byte hash: 44 digits (58**44 > 2**256 > 58**43); any longer text
# decodes to more than 32 bytes or is no base58.
HASH_CHARS: Final = 44
_CHUNK: Final = 10  # 58**10 < 2**64: ten characters are folded into the big integer at once


class Base58Error(ValueError):
    """Text that does not decode; the message is the bs58 crate's Display text."""


class BufferTooSmall(Base58Error):
    """The text decodes to more bytes than the buffer holds."""

    def __init__(self) -> None:
        super().__init__("buffer provided to decode base58 encoded string into was too small")


def _character_error(text: str, index: int, ascii_before: int = 0) -> Base58Error:
    """bs58's error for the character at `index` of `text`, which names its byte offset in
    UTF-8; the first `ascii_before` characters are known to be ASCII (one byte each)."""
    offset = ascii_before + len(text[ascii_before:index].encode("utf-8", "replace"))
    return Base58Error(f"provided string contained invalid character {text[index]!r} at byte {offset}")


def decode_onto(text: str, size: int) -> bytes:
    """`text` decoded as bs58 decodes it onto a `size`-byte buffer: at most `size` bytes, or
    Base58Error (BufferTooSmall when it would not fit) for the first fault bs58 meets."""
    if len(text) <= 2 * size + 8:
        # A text this short costs the native decoder next to nothing, and almost every request's
        # hash or key decodes: the loop below is only needed for bs58's exact error.
        try:
            decoded = based58.b58decode(text.encode("ascii"))
        except (ValueError, UnicodeEncodeError):
            decoded = None
        if decoded is not None and len(decoded) <= size:
            return decoded
    return _decode_onto_exactly(text, size)


def _decode_onto_exactly(text: str, size: int) -> bytes:
    """decode_onto digit by digit, as bs58 does: it finds the first fault bs58 reports."""
    rest = text.lstrip("1")  # leading 1s are zero bytes, added after the digits
    zeros = len(text) - len(rest)
    limit = 1 << (8 * size)
    value = 0
    # the first digit of `rest` is at least 1, so it overflows within ~1.37 * size + 1 digits
    for index, character in enumerate(rest):
        digit = _DIGITS.get(character)
        if digit is None:
            raise _character_error(text, zeros + index, zeros)
        value = value * 58 + digit
        if value >= limit:
            raise BufferTooSmall()
    significant = (value.bit_length() + 7) // 8
    if zeros + significant > size:
        raise BufferTooSmall()
    return bytes(zeros) + value.to_bytes(significant, "big")


def decode_capped(text: str, size: int) -> bytes:
    """`text` decoded onto a `size`-byte buffer with bs58's answer (`decode_onto`'s), at the cost of
    `decode_bounded`. Past the leading 1s (zero bytes bs58 adds at the end) each base58 character
    adds log256(58) > 0.73 bytes, so `reach` valid ones never fit `size` bytes: a fault lies within
    them and nothing past them is read. Overflow only grows along the text, so the valid prefix
    before the first non-base58 character tells which fault bs58 meets first."""
    rest = text.lstrip("1")
    zeros = len(text) - len(rest)
    reach = size * 1366 // 1000 + 3
    head = rest[:reach]
    found = _NOT_BASE58.search(head)
    digits = len(_fold(head if found is None else head[: found.start()]))
    if digits > size or (found is None and len(rest) > reach):
        raise BufferTooSmall()
    if found is not None:
        raise _character_error(text, zeros + found.start(), zeros)
    if zeros + digits > size:
        raise BufferTooSmall()
    return bytes(zeros) + _fold(head)


def _fold(text: str) -> bytes:
    """Base58 `text` (every character valid) as bytes, ten digits folded at a time."""
    rest = text.lstrip("1")
    value = 0
    for start in range(0, len(rest), _CHUNK):
        chunk = rest[start:start + _CHUNK]
        part = 0
        for character in chunk:
            part = part * 58 + _DIGITS[character]
        value = value * 58 ** len(chunk) + part
    return bytes(len(text) - len(rest)) + value.to_bytes((value.bit_length() + 7) // 8, "big")
