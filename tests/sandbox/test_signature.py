"""Signatures checked as near-crypto checks them: ed25519 and secp256k1 over a transaction's hash,
a delegate action's NEP-461 hash, and the malformed ones nearcore refuses."""

from __future__ import annotations

import hashlib

import based58
import pytest

from nearrpc.sandbox.runtime import decode, encode, model, signature
from tests.sandbox.support import ed25519_secret, secp256k1_secret, transaction

# secp256k1's group order: an s above half of it is refused by libsecp256k1's verify
ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
DIGEST = hashlib.sha256(b"a transaction").digest()
SECRETS = [ed25519_secret("alice"), secp256k1_secret("alice")]


def raw(text: str) -> bytes:
    return based58.b58decode(text.partition(":")[2].encode())


def text(kind: str, data: bytes) -> str:
    return f"{kind}:{based58.b58encode(data).decode()}"


@pytest.mark.parametrize("secret", SECRETS, ids=["ed25519", "secp256k1"])
def test_a_signature_verifies_with_its_key_only(secret: str) -> None:
    key = encode.public_key_of(secret)
    signed = encode.sign_hash(DIGEST, secret)
    assert signature.verify(DIGEST, signed, key)
    assert not signature.verify(hashlib.sha256(b"another").digest(), signed, key)
    other = encode.public_key_of(ed25519_secret("bob") if secret.startswith("ed25519") else secp256k1_secret("bob"))
    assert not signature.verify(DIGEST, signed, other)


def test_a_signature_of_another_key_type_never_verifies() -> None:
    ed_key = encode.public_key_of(SECRETS[0])
    secp_signature = encode.sign_hash(DIGEST, SECRETS[1])
    assert not signature.verify(DIGEST, secp_signature, ed_key)


def test_malformed_signatures_are_refused_not_raised() -> None:
    key = encode.public_key_of(SECRETS[0])
    assert not signature.verify(DIGEST, "ed25519:" + "1" * 64, key)
    assert not signature.verify(DIGEST, "ed25519:0OIl", key)  # no base58
    assert not signature.verify(DIGEST, encode.sign_hash(DIGEST, SECRETS[0]), "ed25519:" + "1" * 32)


def test_secp256k1_high_s_and_bad_recovery_ids_are_refused() -> None:
    key = encode.public_key_of(SECRETS[1])
    signed = raw(encode.sign_hash(DIGEST, SECRETS[1]))
    r, s, v = signed[:32], int.from_bytes(signed[32:64], "big"), signed[64]
    high = r + (ORDER - s).to_bytes(32, "big") + bytes([v ^ 1])  # the same point, the other s
    assert not signature.verify(DIGEST, text("secp256k1", high), key)
    assert not signature.verify(DIGEST, text("secp256k1", signed[:64] + b"\x04"), key)
    assert not signature.verify(DIGEST, text("secp256k1", ORDER.to_bytes(32, "big") + signed[32:]), key)
    # the recovery id is checked for range, not for which key it recovers (nearcore verifies, not recovers)
    assert signature.verify(DIGEST, text("secp256k1", signed[:64] + bytes([v ^ 1])), key)


@pytest.mark.parametrize("secret", SECRETS, ids=["ed25519", "secp256k1"])
def test_a_transaction_is_signed_over_its_hash(secret: str) -> None:
    key = encode.public_key_of(secret)
    signed = decode.decode_signed_transaction(encode.sign_transaction(transaction(key, model.Transfer(1)), secret))
    assert signature.verify_transaction(signed)
    forged = model.SignedTransaction(
        signed.transaction, signed.signature, based58.b58encode(DIGEST).decode(), signed.size
    )
    assert not signature.verify_transaction(forged)


def test_a_delegate_action_is_signed_over_its_nep461_hash() -> None:
    key = encode.public_key_of(SECRETS[0])
    inner = model.DelegateAction("alice.localnet", "bob.localnet", (model.Transfer(1),), 5, 100, key)
    delegate = encode.sign_delegate_action(inner, SECRETS[0])
    assert signature.verify_delegate(delegate)
    # the prefix matters: a signature over the plain hash of the same bytes does not verify
    plain = encode.sign_hash(hashlib.sha256(encode.delegate_action_bytes(inner)).digest(), SECRETS[0])
    assert not signature.verify_delegate(model.Delegate(inner, plain))
