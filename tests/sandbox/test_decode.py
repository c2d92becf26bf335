"""A signed transaction's bytes read as nearcore reads them: every action the model has, round trips
through the encoder, nearcore's own hash vector, and each refusal with the decoder's words."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import based58
import pytest

from nearrpc.nearcore.transaction import signed_transaction_bytes, transaction_bytes
from nearrpc.sandbox.runtime import decode, encode, model
from tests.sandbox.support import BLOCK_HASH, ed25519_secret, secp256k1_secret, transaction

# core/primitives/src/transaction.rs `test_serialize_transaction`: every action of a V0
# transaction, hashed; the hash is what nearcore computes for these bytes.
NEARCORE_KEY = "ed25519:22skMptHjFWNyuEWY22ftn2AbLPSYpmYwGJRGwpNHbTV"
NEARCORE_HASH = "4GXvjMFN6wSxnU9jEVT8HbXP5Yk6yELX9faRSKp6n9fX"
ZERO_HASH = "11111111111111111111111111111111"

ALICE = ed25519_secret("alice")
ALICE_KEY = encode.public_key_of(ALICE)


def nearcore_vector() -> model.Transaction:
    permission = model.FunctionCallPermission(allowance=None, receiver_id="zzz", method_names=("www",))
    return model.Transaction(
        signer_id="test.near",
        public_key=NEARCORE_KEY,
        nonce=1,
        receiver_id="123",
        block_hash=ZERO_HASH,
        actions=(
            model.CreateAccount(),
            model.DeployContract(code=b"\x01\x02\x03"),
            model.FunctionCall(method_name="qqq", args=b"\x01\x02\x03", gas=1_000, deposit=1_000_000),
            model.Transfer(deposit=123),
            model.Stake(stake=1_000_000, public_key=NEARCORE_KEY),
            model.AddKey(public_key=NEARCORE_KEY, access_key=model.AccessKey(nonce=0, permission=permission)),
            model.DeleteKey(public_key=NEARCORE_KEY),
            model.DeleteAccount(beneficiary_id="123"),
        ),
    )


def signed(tx: model.Transaction, secret: str = ALICE) -> bytes:
    return encode.sign_transaction(tx, secret)


def detail(data: bytes) -> str:
    with pytest.raises(decode.TransactionDecodeError) as refused:
        decode.decode_signed_transaction(data)
    return refused.value.detail


def test_nearcore_vector_decodes_to_its_hash_and_every_action() -> None:
    tx = nearcore_vector()
    raw = encode.transaction_bytes(tx) + b"\x00" + bytes(64)  # Signature::empty(ED25519)
    decoded = decode.decode_signed_transaction(raw)
    assert decoded.hash == NEARCORE_HASH
    assert decoded.transaction == tx
    assert decoded.signature == "ed25519:" + "1" * 64
    assert decoded.size == len(raw)


def test_the_encoder_writes_what_the_view_encoder_writes() -> None:
    """encode.py (from the model) and nearcore/transaction.py (from views) agree byte for byte."""
    view_actions: list[str | dict[str, Any]] = [
        "CreateAccount",
        {"DeployContract": {"code": base64.b64encode(b"\x01\x02\x03").decode()}},
        {"FunctionCall": {"method_name": "qqq", "args": "AQID", "gas": 1000, "deposit": "1000000"}},
        {"Transfer": {"deposit": "123"}},
        {"Stake": {"stake": "1000000", "public_key": NEARCORE_KEY}},
        {
            "AddKey": {
                "public_key": NEARCORE_KEY,
                "access_key": {
                    "nonce": 0,
                    "permission": {"FunctionCall": {"allowance": None, "receiver_id": "zzz", "method_names": ["www"]}},
                },
            }
        },
        {"DeleteKey": {"public_key": NEARCORE_KEY}},
        {"DeleteAccount": {"beneficiary_id": "123"}},
    ]
    from_views = transaction_bytes(
        signer_id="test.near",
        public_key=NEARCORE_KEY,
        nonce=1,
        receiver_id="123",
        block_hash=ZERO_HASH,
        actions=view_actions,
    )
    assert encode.transaction_bytes(nearcore_vector()) == from_views


@pytest.mark.parametrize("secret", [ALICE, secp256k1_secret("alice")], ids=["ed25519", "secp256k1"])
def test_a_signed_transaction_round_trips(secret: str) -> None:
    key = encode.public_key_of(secret)
    allowance = model.FunctionCallPermission(allowance=10**24, receiver_id="token.localnet", method_names=())
    tx = transaction(
        key,
        model.FunctionCall(method_name="ft_transfer", args=b'{"a":1}', gas=30 * 10**12, deposit=1),
        model.AddKey(public_key=key, access_key=model.AccessKey(nonce=5, permission=allowance)),
        model.AddKey(public_key=key, access_key=model.AccessKey(nonce=0, permission=None)),
    )
    raw = signed(tx, secret)
    decoded = decode.decode_signed_transaction_base64(base64.b64encode(raw).decode())
    assert decoded.transaction == tx
    assert decoded.signature.startswith(key.partition(":")[0] + ":")
    assert decoded.size == len(raw)


def test_a_delegate_action_round_trips() -> None:
    inner = model.DelegateAction(
        sender_id="alice.localnet",
        receiver_id="token.localnet",
        actions=(model.FunctionCall(method_name="ft_transfer", args=b"{}", gas=10**13, deposit=1),),
        nonce=99,
        max_block_height=1000,
        public_key=ALICE_KEY,
    )
    relayer = ed25519_secret("relayer")
    tx = transaction(
        encode.public_key_of(relayer),
        encode.sign_delegate_action(inner, ALICE),
        signer_id="relayer.localnet",
        receiver_id="alice.localnet",
    )
    assert decode.decode_signed_transaction(signed(tx, relayer)).transaction == tx


def test_the_hash_is_of_the_transaction_bytes_as_the_sample_chain_signs_them() -> None:
    raw = transaction_bytes(
        signer_id="alice.localnet",
        public_key=ALICE_KEY,
        nonce=3,
        receiver_id="bob.localnet",
        block_hash=BLOCK_HASH,
        actions=[{"Transfer": {"deposit": "5"}}],
    )
    decoded = decode.decode_signed_transaction(signed_transaction_bytes(raw, "ed25519:" + "1" * 64))
    assert decoded.hash == based58.b58encode(hashlib.sha256(raw).digest()).decode()


def test_truncated_bytes_are_refused_at_every_length() -> None:
    raw = signed(nearcore_vector())
    for end in range(len(raw)):
        assert detail(raw[:end]) == "Unexpected length of input", end


def test_trailing_bytes_are_refused() -> None:
    assert detail(signed(nearcore_vector()) + b"\x00") == "Not all bytes read"


def test_a_huge_length_is_refused_before_anything_is_read() -> None:
    tx = transaction(ALICE_KEY, model.DeployContract(code=b"\x00asm"))
    raw = bytearray(signed(tx))
    at = raw.index(b"\x04\x00\x00\x00\x00asm")  # the code's u32 length
    raw[at : at + 4] = (2**32 - 1).to_bytes(4, "little")
    assert detail(bytes(raw)) == "Unexpected length of input"
    # a Vec<Action> claiming 4 billion actions: refused at once, not after reading them
    header = bytearray(encode.transaction_bytes(transaction(ALICE_KEY)))
    header[-4:] = (2**32 - 1).to_bytes(4, "little")
    assert detail(bytes(header)) == "Unexpected length of input"


def test_unknown_tags_are_refused_in_borsh_words() -> None:
    base = encode.transaction_bytes(transaction(ALICE_KEY))[:-4]
    assert detail(base + b"\x01\x00\x00\x00" + b"\x0f") == "Unexpected variant tag: 15"
    no_key = encode.transaction_bytes(transaction(ALICE_KEY))
    at = len(b"\x0e\x00\x00\x00alice.localnet")
    assert detail(no_key[:at] + b"\x03" + no_key[at + 1 :]) == "unknown key type '3'"
    permission = base + b"\x01\x00\x00\x00\x05" + no_key[at : at + 33] + bytes(8) + b"\x07"
    assert detail(permission) == "Unexpected variant tag: 7"
    allowance = base + b"\x01\x00\x00\x00\x05" + no_key[at : at + 33] + bytes(8) + b"\x00\x02"
    assert detail(allowance) == "Invalid Option representation: 2. The first byte must be 0 or 1"


def test_the_version_tags_are_read_as_nearcore_reads_them() -> None:
    raw = signed(transaction(ALICE_KEY))
    with pytest.raises(decode.UnsupportedTransaction, match="Transaction::V1"):
        decode.decode_signed_transaction(b"\x01" + raw)
    assert detail(b"\x02" + raw) == "invalid transaction version tag: 2"


def test_account_ids_are_validated_as_near_account_id_does() -> None:
    # the encoder writes any text; the decoder validates it
    bad = encode.transaction_bytes(transaction(ALICE_KEY, receiver_id="Bob")) + b"\x00" + bytes(64)
    assert detail(bad) == "invalid value: \"Bob\", the Account ID contains an invalid character 'B' at index 0"


def test_invalid_utf8_is_refused_with_rusts_words() -> None:
    raw = bytearray(signed(transaction(ALICE_KEY, model.FunctionCall("m", b"", 1, 0))))
    at = raw.index(b"\x01\x00\x00\x00m")
    raw[at + 4] = 0xFF
    assert detail(bytes(raw)) == "invalid utf-8 sequence of 1 bytes from index 0"


def test_a_nested_delegate_is_refused() -> None:
    # Delegate: sender, receiver, then its actions: one, whose tag is Delegate's
    nested = b"\x08" + b"\x0e\x00\x00\x00alice.localnet" + b"\x0c\x00\x00\x00bob.localnet" + b"\x01\x00\x00\x00\x08"
    tx = encode.transaction_bytes(transaction(ALICE_KEY))[:-4] + b"\x01\x00\x00\x00" + nested
    assert detail(tx) == "DelegateAction mustn't contain a nested one"


@pytest.mark.parametrize(("tag", "name"), [(9, "DeployGlobalContract"), (14, "DelegateV2")])
def test_actions_the_sandbox_lacks_are_refused_by_name(tag: int, name: str) -> None:
    base = encode.transaction_bytes(transaction(ALICE_KEY))[:-4]
    with pytest.raises(decode.UnsupportedTransaction, match=name) as refused:
        decode.decode_signed_transaction(base + b"\x01\x00\x00\x00" + bytes([tag]))
    assert refused.value.rpc_text.startswith("Failed to decode transaction: the sandbox does not execute")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("!!!!", "Invalid symbol 33, offset 0."),
        ("AAA", "Invalid padding"),
        ("A", "Invalid input length: 1"),
        ("AAB=", "Invalid last symbol 66, offset 2."),
        ("AA=A", "Invalid symbol 61, offset 2."),
    ],
)
def test_bad_base64_is_refused_with_the_base64_crates_words(text: str, words: str) -> None:
    with pytest.raises(decode.TransactionDecodeError) as refused:
        decode.decode_base64(text)
    assert refused.value.detail == words
    assert refused.value.rpc_text == "Failed to decode transaction: " + words


def test_the_base64_text_is_bounded_before_decoding() -> None:
    with pytest.raises(decode.TransactionDecodeError, match="Invalid input length"):
        decode.decode_base64("A" * (decode.MAX_BASE64_CHARS + 4))
