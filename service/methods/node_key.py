"""The service's own node key: an ed25519 key pair whose secret seed is derived from the
genesis hash, so that every server over one chain reports the same `node_public_key`.

nearcore's `status` requires a node (network) key. This service joins no network and signs
nothing, so the key is only an identity; it is no validator's key and the README says so. The
public key is computed here with the curve arithmetic of RFC 8032 (no crypto library needed for
one scalar multiplication at start).
"""

from __future__ import annotations

import functools
import hashlib
from typing import Final

import base58

_P: Final = 2**255 - 19
_L_BITS: Final = 254
_D: Final = -121665 * pow(121666, _P - 2, _P) % _P
_BASE: Final = (
    15112221349535400772501151409588531511454012693041857206046113283949847762202,
    46316835694926478169428394003475163141307993866256225615783033603165251855960,
)
_SEED_LABEL: Final = b"nearrpc node key\x00"

_Point = tuple[int, int, int, int]  # extended coordinates (X, Y, Z, T)


def _add(a: _Point, b: _Point) -> _Point:
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    k = (y1 - x1) * (y2 - x2) % _P
    m = (y1 + x1) * (y2 + x2) % _P
    c = 2 * t1 * t2 * _D % _P
    e = 2 * z1 * z2 % _P
    f, g, h, i = m - k, e - c, e + c, m + k
    return (f * g % _P, h * i % _P, g * h % _P, f * i % _P)


def _multiply(scalar: int) -> _Point:
    x, y = _BASE
    addend: _Point = (x, y, 1, x * y % _P)
    result: _Point = (0, 1, 1, 0)
    while scalar:
        if scalar & 1:
            result = _add(result, addend)
        addend = _add(addend, addend)
        scalar >>= 1
    return result


def ed25519_public_key(seed: bytes) -> bytes:
    """The 32-byte ed25519 public key of a 32-byte secret seed (RFC 8032, 5.1.5)."""
    digest = hashlib.sha512(seed).digest()
    scalar = int.from_bytes(digest[:32], "little")
    scalar &= (1 << _L_BITS) - 8
    scalar |= 1 << _L_BITS
    x, y, z, _ = _multiply(scalar)
    inverse = pow(z, _P - 2, _P)
    x, y = x * inverse % _P, y * inverse % _P
    return (y | ((x & 1) << 255)).to_bytes(32, "little")


@functools.cache
def node_public_key(genesis_hash: str) -> str:
    """The service's node key for the chain whose genesis block hash is `genesis_hash`."""
    seed = hashlib.sha256(_SEED_LABEL + base58.b58decode(genesis_hash)).digest()
    return "ed25519:" + base58.b58encode(ed25519_public_key(seed)).decode("ascii")
