"""nearcore's borsh bytes of a transaction, from its JSON view, and the hash it is known by.

A transaction's hash is SHA-256 of the borsh bytes of its `Transaction`; its signer signs those
32 bytes. `Transaction::V0` is written without a tag (nearcore keeps the first version's bytes),
fields in order: signer_id, public_key, nonce (u64), receiver_id, block_hash (32 bytes), actions
(Vec<Action>). Borsh: integers little-endian, a string or Vec as a u32 length then its items,
an Option as 0 or 1 then the value, an enum as a u8 variant index then its fields. The views
(`SignedTransactionView.actions`, `AccessKeyView`) do not carry the block hash, so it is
passed beside them.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

import based58

# core/crypto KeyType: the u8 a PublicKey or Signature starts with, and its data's length.
_KEY_TYPES: Final = {"ed25519": (0, 32), "secp256k1": (1, 64)}
_SIGNATURE_LENGTHS: Final = {"ed25519": 64, "secp256k1": 65}
# core/primitives Action: the variant index of each action this module writes.
_ACTION_INDEX: Final = {
    "CreateAccount": 0,
    "DeployContract": 1,
    "FunctionCall": 2,
    "Transfer": 3,
    "Stake": 4,
    "AddKey": 5,
    "DeleteKey": 6,
    "DeleteAccount": 7,
}
# AccessKeyPermission variants.
_FUNCTION_CALL_PERMISSION: Final = 0
_FULL_ACCESS_PERMISSION: Final = 1


def _u32(value: int) -> bytes:
    return value.to_bytes(4, "little")


def _u64(value: int) -> bytes:
    return value.to_bytes(8, "little")


def _u128(value: int | str) -> bytes:
    return int(value).to_bytes(16, "little")


def _bytes(data: bytes) -> bytes:
    return _u32(len(data)) + data


def _string(text: str) -> bytes:
    return _bytes(text.encode())


def _hash(text: str) -> bytes:
    raw = based58.b58decode(text.encode())
    if len(raw) != 32:
        raise ValueError(f"a hash is 32 bytes, {text!r} decodes to {len(raw)}")
    return raw


def _typed(text: str, lengths: Mapping[str, int], what: str) -> tuple[str, bytes]:
    kind, _, data = text.partition(":")
    raw = based58.b58decode(data.encode())
    if kind not in lengths or len(raw) != lengths[kind]:
        raise ValueError(f"not a {what}: {text!r}")
    return kind, raw


def public_key_bytes(text: str) -> bytes:
    """A `<type>:<base58>` public key as borsh: its key type's u8, then its bytes."""
    kind, raw = _typed(text, {k: n for k, (_, n) in _KEY_TYPES.items()}, "public key")
    return bytes([_KEY_TYPES[kind][0]]) + raw


def signature_bytes(text: str) -> bytes:
    """A `<type>:<base58>` signature as borsh: its key type's u8, then its bytes."""
    kind, raw = _typed(text, _SIGNATURE_LENGTHS, "signature")
    return bytes([_KEY_TYPES[kind][0]]) + raw


def _permission(permission: str | Mapping[str, Any]) -> bytes:
    if permission == "FullAccess":
        return bytes([_FULL_ACCESS_PERMISSION])
    if not isinstance(permission, Mapping) or list(permission) != ["FunctionCall"]:
        raise ValueError(f"an access key permission this module does not write: {permission!r}")
    call = permission["FunctionCall"]
    allowance = call.get("allowance")
    return (
        bytes([_FUNCTION_CALL_PERMISSION])
        + (b"\x00" if allowance is None else b"\x01" + _u128(allowance))
        + _string(call["receiver_id"])
        + _u32(len(call["method_names"]))
        + b"".join(_string(name) for name in call["method_names"])
    )


def action_bytes(action: str | Mapping[str, Any]) -> bytes:
    """One ActionView as nearcore's borsh `Action`."""
    if action == "CreateAccount":
        return bytes([_ACTION_INDEX["CreateAccount"]])
    if not isinstance(action, Mapping) or len(action) != 1:
        raise ValueError(f"not an action view: {action!r}")
    ((name, body),) = action.items()
    if name not in _ACTION_INDEX:
        raise ValueError(f"an action this module does not write: {name}")
    tag = bytes([_ACTION_INDEX[name]])
    if name == "DeployContract":
        return tag + _bytes(base64.b64decode(body["code"]))
    if name == "FunctionCall":
        return (
            tag
            + _string(body["method_name"])
            + _bytes(base64.b64decode(body["args"]))
            + _u64(body["gas"])
            + _u128(body["deposit"])
        )
    if name == "Transfer":
        return tag + _u128(body["deposit"])
    if name == "Stake":
        return tag + _u128(body["stake"]) + public_key_bytes(body["public_key"])
    if name == "AddKey":
        access_key = body["access_key"]
        return (
            tag
            + public_key_bytes(body["public_key"])
            + _u64(access_key["nonce"])
            + _permission(access_key["permission"])
        )
    if name == "DeleteKey":
        return tag + public_key_bytes(body["public_key"])
    return tag + _string(body["beneficiary_id"])  # DeleteAccount


def transaction_bytes(
    *,
    signer_id: str,
    public_key: str,
    nonce: int,
    receiver_id: str,
    block_hash: str,
    actions: Sequence[str | Mapping[str, Any]],
) -> bytes:
    """The borsh bytes of a `Transaction::V0`."""
    return (
        _string(signer_id)
        + public_key_bytes(public_key)
        + _u64(nonce)
        + _string(receiver_id)
        + _hash(block_hash)
        + _u32(len(actions))
        + b"".join(action_bytes(action) for action in actions)
    )


def signed_transaction_bytes(transaction: bytes, signature: str) -> bytes:
    """The borsh bytes of a `SignedTransaction`: the transaction's, then the signature's."""
    return transaction + signature_bytes(signature)


def transaction_hash(transaction: bytes) -> bytes:
    """What a transaction is known and signed by: SHA-256 of its borsh bytes."""
    return hashlib.sha256(transaction).digest()


def signed_transaction_hash(signed: bytes) -> bytes | None:
    """The hash of a signed transaction's borsh bytes, read from its end: the Signature is its
    last field, a KeyType byte then 64 (ed25519) or 65 (secp256k1) bytes. None where neither
    fits. Bytes that fit both (a secp256k1 signature whose first byte is 0, read as ed25519's
    type) are taken as ed25519's, the key every sample and SDK signs with by default."""
    for key_type, (tag, _key_length) in _KEY_TYPES.items():
        cut = len(signed) - 1 - _SIGNATURE_LENGTHS[key_type]
        if cut > 0 and signed[cut] == tag:
            return transaction_hash(signed[:cut])
    return None
