"""The service's own node key: an ed25519 key pair whose secret seed is derived from the
genesis hash, so that every server over one chain reports the same `node_public_key`.

nearcore's `status` requires a node (network) key. This service joins no network and signs
nothing, so the key is only an identity; it is no validator's key and the README says so.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Final

import based58
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

_SEED_LABEL: Final = b"nearrpc node key\x00"


def ed25519_public_key(seed: bytes) -> bytes:
    """The 32-byte ed25519 public key of a 32-byte secret seed (RFC 8032, 5.1.5)."""
    return Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


@functools.cache
def node_public_key(genesis_hash: str) -> str:
    """The service's node key for the chain whose genesis block hash is `genesis_hash`."""
    seed = hashlib.sha256(_SEED_LABEL + based58.b58decode(genesis_hash.encode("ascii"))).digest()
    return "ed25519:" + based58.b58encode(ed25519_public_key(seed)).decode("ascii")
