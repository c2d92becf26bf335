"""Signatures checked as nearcore checks them (core/crypto/src/signature.rs, `Signature::verify`).

A transaction's signature covers the 32 bytes of its hash (core/primitives/src/transaction.rs,
`verify_transaction_signature`); a delegate action's, the NEP-461 hash of its bytes
(action/delegate.rs, `SignedDelegateAction::verify`). A signature of another key type than the
key's never verifies.
- ed25519: ed25519-dalek's `verify` of the 64 bytes with the 32-byte key (a key that is no curve
  point, or an S not below the group order, fails); here OpenSSL's verification through
  `cryptography`, which refuses the same.
- secp256k1: the 65 bytes are r, s and a recovery id; an id above 3 or an r or s not below the
  group order fails; then libsecp256k1's `ecdsa_verify` of (r, s) over the hash itself with the
  64-byte key behind the 0x04 prefix, which refuses an s in the upper half of the order as
  nearcore's does (neither normalises it).
"""

from __future__ import annotations

import coincurve
from coincurve.ecdsa import cdata_to_der, deserialize_recoverable, recoverable_convert
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from nearrpc.nearcore.base58 import Base58Error, decode_onto
from nearrpc.sandbox.runtime import model
from nearrpc.sandbox.runtime.encode import delegate_action_hash

_SIZES = {"ed25519": (32, 64), "secp256k1": (64, 65)}


def _decoded(text: str, size: int) -> bytes | None:
    try:
        raw = decode_onto(text, size)
    except Base58Error:
        return None
    return raw if len(raw) == size else None


def verify(digest: bytes, signature: str, public_key: str) -> bool:
    """Whether `signature` (its text form) is `public_key`'s over the 32 bytes `digest`."""
    key_kind, _, key_text = public_key.partition(":")
    signature_kind, _, signature_text = signature.partition(":")
    if key_kind != signature_kind or key_kind not in _SIZES:
        return False
    key_size, signature_size = _SIZES[key_kind]
    key = _decoded(key_text, key_size)
    raw = _decoded(signature_text, signature_size)
    if key is None or raw is None:
        return False
    if key_kind == "ed25519":
        return _verify_ed25519(digest, raw, key)
    return _verify_secp256k1(digest, raw, key)


def _verify_ed25519(digest: bytes, raw: bytes, key: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(key).verify(raw, digest)
    except (InvalidSignature, ValueError):
        return False
    return True


def _verify_secp256k1(digest: bytes, raw: bytes, key: bytes) -> bool:
    try:
        standard = cdata_to_der(recoverable_convert(deserialize_recoverable(raw)))
        return coincurve.PublicKey(b"\x04" + key).verify(standard, digest, hasher=None)
    except ValueError:  # a recovery id above 3, r or s past the order, or a key off the curve
        return False


def verify_transaction(signed: model.SignedTransaction) -> bool:
    """Whether the transaction is signed by its own `public_key` (the signer's access key is
    checked apart: verifier.rs looks the key up after the signature)."""
    return verify(decode_onto(signed.hash, 32), signed.signature, signed.transaction.public_key)


def verify_delegate(delegate: model.Delegate) -> bool:
    """Whether a Delegate action's inner action is signed by its sender's `public_key`
    (actions.rs `apply_delegate_action` answers DelegateActionInvalidSignature otherwise)."""
    inner = delegate.delegate_action
    return verify(delegate_action_hash(inner), delegate.signature, inner.public_key)
