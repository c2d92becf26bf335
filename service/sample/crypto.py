"""Deterministic stand-ins for the chain's hashes, keys and signatures.

Nothing here is cryptographically meaningful: keys and signatures are derived from
SHA-256/SHA-512 of labels, so the sample chain is the same bytes on every run and
platform. The shapes are the real ones: 32-byte hashes in base58, `ed25519:` keys of
32 bytes and signatures of 64 bytes in base58.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import based58
import orjson

# What nearcore shows for an unsigned object (the genesis block and its chunks): 64 zero bytes.
EMPTY_SIGNATURE = "ed25519:" + "1" * 64

# Header members left out of the bytes a block hash is computed from: the hash itself and the
# producer's signature over it.
_BLOCK_HASH_EXCLUDED = frozenset({"hash", "signature"})
# Chunk members left out of a chunk hash: as in nearcore, the inclusion height and the
# signature are not part of what the chunk producer hashes.
_CHUNK_HASH_EXCLUDED = frozenset({"chunk_hash", "signature", "height_included"})


def _digest_input(parts: tuple[object, ...]) -> bytes:
    # Length-prefixed parts, so ("ab", "c") and ("a", "bc") never collide.
    out = bytearray()
    for part in parts:
        raw = part if isinstance(part, bytes) else str(part).encode()
        out += len(raw).to_bytes(4, "big") + raw
    return bytes(out)


def digest(*parts: object) -> bytes:
    """SHA-256 over the parts."""
    return hashlib.sha256(_digest_input(parts)).digest()


def b58(data: bytes) -> str:
    return based58.b58encode(data).decode("ascii")


def hash_of(*parts: object) -> str:
    """A base58 32-byte hash derived from the parts."""
    return b58(digest(*parts))


def det_int(*parts: object) -> int:
    """A deterministic 64-bit number derived from the parts (the sample's dice)."""
    return int.from_bytes(digest("dice", *parts)[:8], "big")


def public_key(seed: str) -> str:
    return "ed25519:" + b58(digest("public-key", seed))


def signature(signer: str, message: str) -> str:
    data = hashlib.sha512(_digest_input(("signature", signer, message))).digest()
    return "ed25519:" + b58(data)


def canonical_bytes(value: Any) -> bytes:
    """The bytes hashes are computed from: compact JSON with sorted keys."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def block_hash(header: Mapping[str, Any]) -> str:
    """The sample chain's block hash: base58(sha256) of the header's canonical bytes, without
    the `hash` and `signature` members."""
    content = {k: v for k, v in header.items() if k not in _BLOCK_HASH_EXCLUDED}
    return b58(hashlib.sha256(canonical_bytes(content)).digest())


def chunk_hash(chunk: Mapping[str, Any]) -> str:
    """The sample chain's chunk hash: base58(sha256) of the chunk header's canonical bytes,
    without `chunk_hash`, `signature` and `height_included`."""
    content = {k: v for k, v in chunk.items() if k not in _CHUNK_HASH_EXCLUDED}
    return b58(hashlib.sha256(canonical_bytes(content)).digest())


def code_hash(code: bytes) -> str:
    """A contract's code hash, as nearcore computes it: base58(sha256(code))."""
    return b58(hashlib.sha256(code).digest())
