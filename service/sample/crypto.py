"""The sample chain's keys and signatures, and deterministic stand-ins for its hashes.

Keys are real ed25519 key pairs whose private key is SHA-256 of a label, and signatures are
real ed25519 signatures (deterministic by RFC 8032), so the chain is the same bytes on every
run and platform and every signature verifies with its signer's public key. Block and chunk
hashes stay stand-ins: SHA-256 of the header's canonical JSON, not of nearcore's borsh inner
parts. The shapes are the real ones: 32-byte hashes in base58, `ed25519:` keys of 32 bytes
and signatures of 64 bytes in base58.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import based58
import orjson
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from nearrpc.sample_keys import signing_key

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


def b58decode(text: str) -> bytes:
    return based58.b58decode(text.encode())


def hash_of(*parts: object) -> str:
    """A base58 32-byte hash derived from the parts."""
    return b58(digest(*parts))


def det_int(*parts: object) -> int:
    """A deterministic 64-bit number derived from the parts (the sample's dice)."""
    return int.from_bytes(digest("dice", *parts)[:8], "big")


def public_key_bytes(label: str) -> bytes:
    return signing_key(label).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def public_key(label: str) -> str:
    """The label's public key as nearcore prints it: `ed25519:` and base58 of its 32 bytes."""
    return "ed25519:" + b58(public_key_bytes(label))


def sign(label: str, message: bytes) -> str:
    """The label's key's ed25519 signature of the message bytes, as nearcore prints it."""
    return "ed25519:" + b58(signing_key(label).sign(message))


def signature(label: str, message_hash: str) -> str:
    """The label's key's signature of a base58 hash's 32 bytes (what nearcore signs for a
    block, a chunk or a transaction)."""
    return sign(label, based58.b58decode(message_hash.encode()))


def approval_data(parent_hash: str, parent_height: int, target_height: int) -> bytes:
    """What a validator signs to approve a block at `target_height` on the parent: borsh of
    nearcore's ApprovalInner (Endorsement(parent hash) right after the parent, else
    Skip(parent height)), then the target height as u64."""
    if target_height == parent_height + 1:
        inner = b"\x00" + based58.b58decode(parent_hash.encode())
    else:
        inner = b"\x01" + parent_height.to_bytes(8, "little")
    return inner + target_height.to_bytes(8, "little")


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
