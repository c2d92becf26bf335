"""`model` transactions written as nearcore's borsh bytes, and signed: what a client does, for tests
and for the helpers that need a signed transaction (the inverse of `decode`).

Layouts (core/primitives/src/transaction.rs, action/mod.rs, action/delegate.rs): `Transaction::V0`
(untagged, what clients send); the signature over SHA-256 of the transaction's bytes. A NEP-366
delegate action is signed over SHA-256 of its borsh bytes behind the u32 prefix 2**30 + 366
(action/delegate.rs, `DelegateAction::get_nep461_hash`).

Secret keys are in NEAR's text form: "ed25519:" + base58 of 64 bytes (seed then public key) or
"secp256k1:" + base58 of the 32-byte scalar. A secp256k1 signature is libsecp256k1's recoverable
one over the 32-byte hash itself (no second hashing): r, s, recovery id (core/crypto signature.rs).
"""

from __future__ import annotations

import hashlib
from typing import Final

import based58
import coincurve
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from nearrpc.nearcore.transaction import public_key_bytes, signature_bytes
from nearrpc.sandbox.runtime import model

# NEP-461's prefix of signed messages that are not transactions: 2**30 + the NEP's number.
DELEGATE_PREFIX: Final = (2**30 + 366).to_bytes(4, "little")


def _u32(value: int) -> bytes:
    return value.to_bytes(4, "little")


def _u64(value: int) -> bytes:
    return value.to_bytes(8, "little")


def _u128(value: int) -> bytes:
    return value.to_bytes(16, "little")


def _blob(data: bytes) -> bytes:
    return _u32(len(data)) + data


def _string(text: str) -> bytes:
    return _blob(text.encode())


def _access_key(access_key: model.AccessKey) -> bytes:
    permission = access_key.permission
    if permission is None:
        return _u64(access_key.nonce) + b"\x01"
    allowance = b"\x00" if permission.allowance is None else b"\x01" + _u128(permission.allowance)
    names = _u32(len(permission.method_names)) + b"".join(_string(name) for name in permission.method_names)
    return _u64(access_key.nonce) + b"\x00" + allowance + _string(permission.receiver_id) + names


def action_bytes(action: model.Action) -> bytes:
    """One action as borsh `Action`."""
    match action:
        case model.CreateAccount():
            return b"\x00"
        case model.DeployContract(code=code):
            return b"\x01" + _blob(code)
        case model.FunctionCall(method_name=method_name, args=args, gas=gas, deposit=deposit):
            return b"\x02" + _string(method_name) + _blob(args) + _u64(gas) + _u128(deposit)
        case model.Transfer(deposit=deposit):
            return b"\x03" + _u128(deposit)
        case model.Stake(stake=stake, public_key=public_key):
            return b"\x04" + _u128(stake) + public_key_bytes(public_key)
        case model.AddKey(public_key=public_key, access_key=access_key):
            return b"\x05" + public_key_bytes(public_key) + _access_key(access_key)
        case model.DeleteKey(public_key=public_key):
            return b"\x06" + public_key_bytes(public_key)
        case model.DeleteAccount(beneficiary_id=beneficiary_id):
            return b"\x07" + _string(beneficiary_id)
        case model.Delegate(delegate_action=inner, signature=signature):
            return b"\x08" + delegate_action_bytes(inner) + signature_bytes(signature)
    raise TypeError(f"not an action: {action!r}")


def delegate_action_bytes(delegate: model.DelegateAction) -> bytes:
    """A `DelegateAction`'s borsh bytes (what its signature covers, behind the NEP-461 prefix)."""
    return (
        _string(delegate.sender_id)
        + _string(delegate.receiver_id)
        + _u32(len(delegate.actions))
        + b"".join(action_bytes(action) for action in delegate.actions)
        + _u64(delegate.nonce)
        + _u64(delegate.max_block_height)
        + public_key_bytes(delegate.public_key)
    )


def delegate_action_hash(delegate: model.DelegateAction) -> bytes:
    """What a delegate action's sender signs."""
    return hashlib.sha256(DELEGATE_PREFIX + delegate_action_bytes(delegate)).digest()


def transaction_bytes(transaction: model.Transaction) -> bytes:
    """A `Transaction::V0`'s borsh bytes (untagged; V1, the gas-key form, is not written here)."""
    if transaction.priority_fee is not None:
        raise ValueError("only Transaction::V0 is written")
    return (
        _string(transaction.signer_id)
        + public_key_bytes(transaction.public_key)
        + _u64(transaction.nonce)
        + _string(transaction.receiver_id)
        + based58.b58decode(transaction.block_hash.encode())
        + _u32(len(transaction.actions))
        + b"".join(action_bytes(action) for action in transaction.actions)
    )


def public_key_of(secret_key: str) -> str:
    """The public key of a secret key in NEAR's text form."""
    kind, raw = _secret(secret_key)
    if kind == "ed25519":
        public = (
            Ed25519PrivateKey.from_private_bytes(raw[:32]).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        )
    else:
        public = coincurve.PrivateKey(raw).public_key.format(compressed=False)[1:]
    return f"{kind}:{based58.b58encode(public).decode()}"


def sign_hash(digest: bytes, secret_key: str) -> str:
    """A signature, in its text form, over a 32-byte hash."""
    kind, raw = _secret(secret_key)
    if kind == "ed25519":
        signature = Ed25519PrivateKey.from_private_bytes(raw[:32]).sign(digest)
    else:
        signature = coincurve.PrivateKey(raw).sign_recoverable(digest, hasher=None)
    return f"{kind}:{based58.b58encode(signature).decode()}"


def sign_delegate_action(delegate: model.DelegateAction, secret_key: str) -> model.Delegate:
    """A `Delegate` action carrying `delegate` signed by `secret_key`."""
    return model.Delegate(delegate_action=delegate, signature=sign_hash(delegate_action_hash(delegate), secret_key))


def sign_transaction(transaction: model.Transaction, secret_key: str) -> bytes:
    """The borsh bytes of `transaction` signed with `secret_key`, as a client sends them."""
    raw = transaction_bytes(transaction)
    return raw + signature_bytes(sign_hash(hashlib.sha256(raw).digest(), secret_key))


def _secret(secret_key: str) -> tuple[str, bytes]:
    kind, _, data = secret_key.partition(":")
    raw = based58.b58decode(data.encode())
    if (kind, len(raw)) not in {("ed25519", 64), ("ed25519", 32), ("secp256k1", 32)}:
        raise ValueError("not a secret key in NEAR's text form")
    return kind, raw
