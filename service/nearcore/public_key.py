"""Public keys as nearcore parses them (core/crypto `PublicKey::from_str`).

`<type>:<base58 data>`, or bare base58 data, which is an ed25519 key; the types are `ed25519`
(32 bytes) and `secp256k1` (64 bytes). Refusals read as nearcore's `ParseKeyError` Display texts.
A key is answered and stored in its canonical spelling, with its type prefix.
"""

from __future__ import annotations

from typing import Final

from nearrpc.nearcore.base58 import Base58Error, BufferTooSmall, decode_onto
from nearrpc.nearcore.echo import shown

KEY_LENGTHS: Final = {"ed25519": 32, "secp256k1": 64}


class PublicKeyError(ValueError):
    """A text that is no public key; the message is nearcore's."""


def _length_error(expected: int, given: int) -> PublicKeyError:
    return PublicKeyError(f"invalid key length: expected the input of {expected} bytes, but {given} was given")


def canonical_public_key(text: str) -> str:
    """`text` as a key with its type prefix, or PublicKeyError with nearcore's message.

    The data is decoded onto a buffer of the key's size, as nearcore does: a text too long
    for it is refused after a few dozen characters (nearcore then reports one byte too many)."""
    key_type, separator, data = text.partition(":")
    if not separator:
        key_type, data = "ed25519", text
    if key_type not in KEY_LENGTHS:
        raise PublicKeyError(f"unknown key type '{shown(key_type)}'")
    expected = KEY_LENGTHS[key_type]
    try:
        decoded = decode_onto(data, expected)
    except BufferTooSmall:
        raise _length_error(expected, expected + 1) from None
    except Base58Error as problem:
        raise PublicKeyError(f"invalid key data: {problem}") from None
    if len(decoded) != expected:
        raise _length_error(expected, len(decoded))
    return f"{key_type}:{data}"
