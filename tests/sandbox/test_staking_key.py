"""Staking keys as near-crypto's key_conversion judges them: an ed25519 point without torsion."""

from __future__ import annotations

import based58

from nearrpc.sandbox.runtime import encode
from nearrpc.sandbox.runtime.staking_key import is_valid_staking_key
from tests.sandbox.support import ed25519_secret, secp256k1_secret

P = 2**255 - 19


def key(y: int, sign: int = 0) -> str:
    data = bytearray(y.to_bytes(32, "little"))
    data[31] |= sign << 7
    return "ed25519:" + based58.b58encode(bytes(data)).decode()


def test_real_keys_stake() -> None:
    for label in ("node0", "node1", "alice"):
        assert is_valid_staking_key(encode.public_key_of(ed25519_secret(label)))


def test_points_with_torsion_do_not() -> None:
    assert not is_valid_staking_key(key(P - 1))  # (0, -1): order 2
    order_8 = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")
    assert not is_valid_staking_key("ed25519:" + based58.b58encode(order_8).decode())


def test_bytes_that_are_no_point_do_not() -> None:
    assert not is_valid_staking_key(key(2))  # y = 2 has no x on the curve


def test_secp256k1_keys_never_stake() -> None:
    assert not is_valid_staking_key(encode.public_key_of(secp256k1_secret("node0")))
    assert not is_valid_staking_key("ed25519:0OIl")
