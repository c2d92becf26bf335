"""What the sandbox runtime's tests share: the sample chain's protocol config (as its
EXPERIMENTAL_protocol_config answers at the head, recorded in tests/fixtures), keys whose secret
is derived from a label, and signed transactions built from them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import based58
import coincurve
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from nearrpc.sandbox.runtime import model

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "EXPERIMENTAL_protocol_config" / "finality_final.json"
BLOCK_HASH = based58.b58encode(hashlib.sha256(b"a block").digest()).decode()


def protocol_config() -> dict[str, Any]:
    recorded = json.loads(FIXTURE.read_text())
    result: dict[str, Any] = json.loads(recorded["response"]["body"])["result"]
    return result


def runtime_config() -> dict[str, Any]:
    config: dict[str, Any] = protocol_config()["runtime_config"]
    return config


def ed25519_secret(label: str) -> str:
    """NEAR's text form of an ed25519 secret key: seed then public key."""
    seed = hashlib.sha256(label.encode()).digest()
    public = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
    return "ed25519:" + based58.b58encode(seed + public).decode()


def secp256k1_secret(label: str) -> str:
    scalar = coincurve.PrivateKey(hashlib.sha256(label.encode()).digest()).secret
    return "secp256k1:" + based58.b58encode(scalar).decode()


def transaction(
    public_key: str,
    *actions: model.Action,
    signer_id: str = "alice.localnet",
    receiver_id: str = "bob.localnet",
    nonce: int = 7,
) -> model.Transaction:
    return model.Transaction(
        signer_id=signer_id,
        public_key=public_key,
        nonce=nonce,
        receiver_id=receiver_id,
        block_hash=BLOCK_HASH,
        actions=actions,
    )
