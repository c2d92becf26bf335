"""The borsh bytes of a transaction against published vectors: near-api-js's serializer tests
(test/serialize.test.js), whose bytes nearcore accepts. The vectors are facts (inputs and the
bytes, hash and signature they give); the code under test is nearrpc's own."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import based58
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from nearrpc.nearcore.transaction import (
    action_bytes,
    signed_transaction_bytes,
    transaction_bytes,
    transaction_hash,
)

BLOCK_HASH = "244ZQ9cgj3CQ6bWBdytfrJMuMQ1jdXLFGnr4HhvtCTnM"

# near-api-js "serialize and sign multi-action tx": every action variant, one transaction.
MULTI_SECRET = "2wyRcSwSuHtRVmkMCGjPwnzZmQLeXLzLLyED1NDMt4BjnKgQL6tF85yBx6Jr26D2dUNeC716RBoTxntVHsegogYw"
MULTI_HASH = "Fo3MJ9XzKjnKuDuQKhDAC6fra5H2UWawRejFSEpPNk3Y"
MULTI_HEX = (
    "09000000746573742e6e656172000f56a5f028dfc089ec7c39c1183b321b4d8f89ba5bec9e1762803cc2491f6ef8"
    "0100000000000000030000003132330fa473fd26901df296be6adc4cc4df34d040efa2435224b6986910e630c2fe"
    "f608000000000103000000010203020300000071717103000000010203e80300000000000040420f000000000000"
    "00000000000000037b0000000000000000000000000000000440420f00000000000000000000000000000f56a5f0"
    "28dfc089ec7c39c1183b321b4d8f89ba5bec9e1762803cc2491f6ef805000f56a5f028dfc089ec7c39c1183b321b"
    "4d8f89ba5bec9e1762803cc2491f6ef800000000000000000000030000007a7a7a010000000300000077777706000f"
    "56a5f028dfc089ec7c39c1183b321b4d8f89ba5bec9e1762803cc2491f6ef80703000000313233"
)

# near-api-js "serialize and sign transfer tx": the signed bytes and the signature.
TRANSFER_SECRET = "3hoMW1HvnRLSFCLZnvPzWeoGwtdHzke34B2cTHM8rhcbG3TbuLKtShTv3DvyejnXKXKBiV7YPkLeqUHN1ghnqpFv"
TRANSFER_PUBLIC_KEY = "ed25519:Anu7LYDfpLtkP7E16LT9imXF694BdQaa9ufVkQiwTQxC"
TRANSFER_SIGNATURE_B64 = "lpqDMyGG7pdV5IOTJVJYBuGJo9LSu0tHYOlEQ+l+HE8i3u7wBZqOlxMQDtpuGRRNp+ig735TmyBwi6HY0CG9AQ=="
TRANSFER_SIGNED_HEX = (
    "09000000746573742e6e65617200917b3d268d4b58f7fec1b150bd68d69be3ee5d4cc39855e341538465bb77860d"
    "01000000000000000d00000077686174657665722e6e6561720fa473fd26901df296be6adc4cc4df34d040efa243"
    "5224b6986910e630c2fef601000000030100000000000000000000000000000000969a83332186ee9755e4839325"
    "525806e189a3d2d2bb4b4760e94443e97e1c4f22deeef0059a8e9713100eda6e19144da7e8a0ef7e539b20708ba1"
    "d8d021bd01"
)


def key_pair(secret: str) -> tuple[Ed25519PrivateKey, str]:
    """near-api-js's 64-byte secret is the 32-byte seed followed by the public key."""
    raw = based58.b58decode(secret.encode())
    private = Ed25519PrivateKey.from_private_bytes(raw[:32])
    public = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    assert public == raw[32:]
    return private, "ed25519:" + based58.b58encode(public).decode()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_every_action_variant_matches_the_published_bytes_and_hash() -> None:
    _, public_key = key_pair(MULTI_SECRET)
    permission = {"FunctionCall": {"allowance": None, "receiver_id": "zzz", "method_names": ["www"]}}
    actions: list[Any] = [
        "CreateAccount",
        {"DeployContract": {"code": b64(bytes([1, 2, 3]))}},
        {"FunctionCall": {"method_name": "qqq", "args": b64(bytes([1, 2, 3])), "gas": 1000, "deposit": "1000000"}},
        {"Transfer": {"deposit": "123"}},
        {"Stake": {"stake": "1000000", "public_key": public_key}},
        {"AddKey": {"public_key": public_key, "access_key": {"nonce": 0, "permission": permission}}},
        {"DeleteKey": {"public_key": public_key}},
        {"DeleteAccount": {"beneficiary_id": "123"}},
    ]
    raw = transaction_bytes(
        signer_id="test.near", public_key=public_key, nonce=1, receiver_id="123", block_hash=BLOCK_HASH, actions=actions
    )
    assert raw.hex() == MULTI_HEX
    assert based58.b58encode(transaction_hash(raw)).decode() == MULTI_HASH


def test_a_signed_transfer_matches_the_published_signature_and_bytes() -> None:
    private, public_key = key_pair(TRANSFER_SECRET)
    assert public_key == TRANSFER_PUBLIC_KEY
    raw = transaction_bytes(
        signer_id="test.near",
        public_key=public_key,
        nonce=1,
        receiver_id="whatever.near",
        block_hash=BLOCK_HASH,
        actions=[{"Transfer": {"deposit": "1"}}],
    )
    signature = private.sign(hashlib.sha256(raw).digest())
    assert base64.b64encode(signature).decode() == TRANSFER_SIGNATURE_B64
    signed = signed_transaction_bytes(raw, "ed25519:" + based58.b58encode(signature).decode())
    assert signed.hex() == TRANSFER_SIGNED_HEX


def test_a_full_access_key_and_an_allowance_are_written_as_their_variants() -> None:
    _, public_key = key_pair(TRANSFER_SECRET)
    key = bytes([0]) + based58.b58decode(public_key.removeprefix("ed25519:").encode())
    full = action_bytes({"AddKey": {"public_key": public_key, "access_key": {"nonce": 7, "permission": "FullAccess"}}})
    assert full == bytes([5]) + key + (7).to_bytes(8, "little") + bytes([1])
    limited = action_bytes(
        {
            "AddKey": {
                "public_key": public_key,
                "access_key": {
                    "nonce": 0,
                    "permission": {"FunctionCall": {"allowance": "5", "receiver_id": "c", "method_names": []}},
                },
            }
        }
    )
    assert limited.endswith(bytes([0, 1]) + (5).to_bytes(16, "little") + b"\x01\x00\x00\x00c" + bytes(4))


@pytest.mark.parametrize(
    "action",
    [{"Delegate": {}}, {"Transfer": {"deposit": "1"}, "Stake": {}}, "Nothing"],
)
def test_an_action_it_does_not_write_is_refused(action: object) -> None:
    with pytest.raises(ValueError, match="action"):
        action_bytes(action)  # type: ignore[arg-type]
