"""Whether a public key may stake (core/crypto/src/key_conversion.rs, `is_valid_staking_key`): an
ed25519 key whose 32 bytes decompress to a curve point (curve25519-dalek's `decompress`: the
high bit is the sign of x, y taken mod p) that has no torsion component (L times the point is
the identity), so it converts to the Ristretto point a validator's VRF key is. secp256k1 keys
never stake. Pure integer arithmetic on the twisted Edwards curve, a few hundred point operations.
"""

from __future__ import annotations

from typing import Final

from nearrpc.nearcore.base58 import Base58Error, decode_onto

_P: Final = 2**255 - 19
_D: Final = (-121665 * pow(121666, -1, _P)) % _P
_SQRT_M1: Final = pow(2, (_P - 1) // 4, _P)
_L: Final = 2**252 + 27742317777372353535851937790883648493  # the prime subgroup's order

_Point = tuple[int, int, int, int]  # extended coordinates (X, Y, Z, T), x = X/Z, y = Y/Z, xy = T/Z
_IDENTITY: Final[_Point] = (0, 1, 1, 0)


def _decompress(data: bytes) -> _Point | None:
    y = int.from_bytes(data, "little") & ((1 << 255) - 1)
    sign = data[31] >> 7
    y %= _P
    u = (y * y - 1) % _P
    v = (_D * y * y + 1) % _P
    # x = sqrt(u / v) = u v^3 (u v^7)^((p - 5) / 8), fixed by sqrt(-1) when it squares to -u/v
    x = u * pow(v, 3, _P) * pow(u * pow(v, 7, _P), (_P - 5) // 8, _P) % _P
    check = v * x * x % _P
    if check == (-u) % _P:
        x = x * _SQRT_M1 % _P
    elif check != u:
        return None
    if sign:
        x = (-x) % _P
    return (x, y, 1, x * y % _P)


def _add(a: _Point, b: _Point) -> _Point:
    # add-2008-hwcd-3 for a = -1
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa = (y1 - x1) * (y2 - x2) % _P
    bb = (y1 + x1) * (y2 + x2) % _P
    cc = 2 * _D * t1 * t2 % _P
    dd = 2 * z1 * z2 % _P
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _multiply(point: _Point, scalar: int) -> _Point:
    result = _IDENTITY
    for bit in bin(scalar)[2:]:
        result = _add(result, result)
        if bit == "1":
            result = _add(result, point)
    return result


def is_valid_staking_key(public_key: str) -> bool:
    kind, _, data = public_key.partition(":")
    if kind != "ed25519":
        return False
    try:
        raw = decode_onto(data, 32)
    except Base58Error:
        return False
    if len(raw) != 32:
        return False
    point = _decompress(raw)
    if point is None:
        return False
    x, y, z, _ = _multiply(point, _L)
    return x % _P == 0 and (y - z) % _P == 0
