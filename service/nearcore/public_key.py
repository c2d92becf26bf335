"""Public keys as nearcore parses them (core/crypto `PublicKey::from_str`).

`<type>:<base58 data>`, or bare base58 data, which is an ed25519 key; the types are `ed25519`
(32 bytes) and `secp256k1` (64 bytes). Refusals read as nearcore's `ParseKeyError` Display texts.
A key is answered and stored in its canonical spelling, with its type prefix.
"""

from __future__ import annotations

from typing import Final

import based58

KEY_LENGTHS: Final = {"ed25519": 32, "secp256k1": 64}
BASE58_ALPHABET: Final = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"  # bs58's default, Bitcoin's


class PublicKeyError(ValueError):
    """A text that is no public key; the message is nearcore's."""


def bs58_problem(data: str) -> str | None:
    """The bs58 crate's error text for data that is not base58 (None: it is)."""
    for index, character in enumerate(data.encode("utf-8")):
        if chr(character) not in BASE58_ALPHABET:
            shown = data.encode("utf-8")[index:].decode("utf-8", "replace")[:1]
            return f"provided string contained invalid character {shown!r} at byte {index}"
    return None


def canonical_public_key(text: str) -> str:
    """`text` as a key with its type prefix, or PublicKeyError with nearcore's message."""
    key_type, separator, data = text.partition(":")
    if not separator:
        key_type, data = "ed25519", text
    if key_type not in KEY_LENGTHS:
        raise PublicKeyError(f"unknown key type '{key_type}'")
    problem = bs58_problem(data)
    if problem is not None:
        raise PublicKeyError(f"invalid key data: {problem}")
    decoded = based58.b58decode(data.encode("ascii"))  # ASCII: bs58_problem found none else
    if len(decoded) != KEY_LENGTHS[key_type]:
        expected, given = KEY_LENGTHS[key_type], len(decoded)
        raise PublicKeyError(f"invalid key length: expected the input of {expected} bytes, but {given} was given")
    return f"{key_type}:{data}"
