"""The sample chain's key pairs, by label: one rule for the generator, which gives each account its
keys, and for the test plugin, which hands a test the secret key to sign with (`nearrpc.testing`
may not import the sample, so the rule lives here, a leaf both can read).

A label's ed25519 key pair has the label's SHA-256 as its 32-byte seed; a named account's
full-access key is the pair of `full_access_label`, a validator's that of `validator_key_label`.
Keys are written as nearcore writes them: `ed25519:` and base58 of the public key's 32 bytes, and
of the seed and public key's 64 bytes for a secret key (near-api-js and py-near read both).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache

import based58
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


def full_access_label(account_id: str) -> str:
    """The label of a named (not implicit, not validator) account's full-access key pair."""
    return f"full-access:{account_id}"


def validator_key_label(validator: str) -> str:
    """The label of a validator's key pair (its validator key and its full-access key)."""
    return f"validator:{validator}"


@cache
def signing_key(label: str) -> Ed25519PrivateKey:
    """The ed25519 key pair of a label: its 32-byte private key is SHA-256 of the label."""
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(label.encode()).digest())


@dataclass(frozen=True, slots=True)
class KeyPair:
    public_key: str  # ed25519:<base58 of 32 bytes>
    secret_key: str  # ed25519:<base58 of seed and public key, 64 bytes>


def key_pair(label: str) -> KeyPair:
    key = signing_key(label)
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    seed = hashlib.sha256(label.encode()).digest()
    return KeyPair(
        public_key="ed25519:" + based58.b58encode(public).decode("ascii"),
        secret_key="ed25519:" + based58.b58encode(seed + public).decode("ascii"),
    )
