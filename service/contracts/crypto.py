"""The cryptography behind the math host functions, each on a well-kept library with a native core:
hashlib (OpenSSL) for SHA-3, `cryptography` (OpenSSL) for P-256 and ML-DSA-65, `coincurve`
(libsecp256k1) for secp256k1 public key recovery. Each returns what nearcore's host function
computes (near-vm-runner logic.rs; near-crypto for ecrecover's signature checks) and knows
nothing of gas, memory or registers."""

from __future__ import annotations

import hashlib

from coincurve import PublicKey as Secp256k1PublicKey
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, mldsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

SECP256K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
ML_DSA_65_SIGNATURE_BYTES = 3309
ML_DSA_65_PUBLIC_KEY_BYTES = 1952


def sha3(bits: int, value: bytes) -> bytes:
    return hashlib.new(f"sha3_{bits}", value).digest()


def secp256k1_signature_values_ok(signature: bytes, reject_upper: bool) -> bool:
    """near-crypto `Secp256K1Signature::check_signature_values`: r and s in [1, n), and with
    `reject_upper` s in the lower half (at most n / 2)."""
    r = int.from_bytes(signature[:32], "big")
    s = int.from_bytes(signature[32:64], "big")
    s_bound = SECP256K1_N // 2 + 1 if reject_upper else SECP256K1_N
    return 1 <= r < SECP256K1_N and 1 <= s < s_bound


def secp256k1_recover(hash32: bytes, signature: bytes, v: int) -> bytes | None:
    """The 64 bytes (x then y) of the public key that signed `hash32`, or None."""
    try:
        key = Secp256k1PublicKey.from_signature_and_message(signature + bytes([v]), hash32, hasher=None)
    except Exception:  # coincurve raises plain exceptions for an unrecoverable signature
        return None
    return bytes(key.format(compressed=False)[1:])


def p256_signature_ok(signature: bytes) -> bool:
    """Whether the 64 bytes r || s parse as a P-256 signature (p256 `Signature::from_slice`:
    both in [1, n))."""
    r = int.from_bytes(signature[:32], "big")
    s = int.from_bytes(signature[32:], "big")
    return 0 < r < P256_N and 0 < s < P256_N


def p256_verify(signature: bytes, message: bytes, public_key: bytes) -> bool:
    """ECDSA over P-256 with SHA-256 of the message (p256's `Verifier::verify`), a compressed
    SEC1 key; high-s signatures are valid."""
    try:
        key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), public_key)
    except ValueError:
        return False
    r = int.from_bytes(signature[:32], "big")
    s = int.from_bytes(signature[32:], "big")
    try:
        key.verify(encode_dss_signature(r, s), message, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True


def ml_dsa_65_verify(signature: bytes, message: bytes, public_key: bytes) -> bool:
    """FIPS 204 ML-DSA-65 verification with the empty context."""
    try:
        key = mldsa.MLDSA65PublicKey.from_public_bytes(public_key)
        key.verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True
