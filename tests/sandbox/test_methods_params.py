"""The writing methods' params (params/sending.py): every form nearcore's parsers take, and each
refusal in nearcore's words (chain/jsonrpc api/transactions.rs and api/sandbox.rs, the
SignedTransaction serde of core/primitives transaction.rs, the base64 crate's texts)."""

from __future__ import annotations

import base64
import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nearrpc.generated import models
from nearrpc.generated.methods import METHODS
from nearrpc.methods.errors import Cause, RpcError
from nearrpc.methods.params import typed_params
from nearrpc.methods.params.sending import MAX_PATCH_RECORDS
from nearrpc.nearcore.base64_standard import Base64Error, decode_standard
from nearrpc.sandbox.chain import MAX_RECORDS

SPEC = Path(__file__).resolve().parents[2] / "spec" / "openapi.json"
SIGNED_PATTERN = json.loads(SPEC.read_text(encoding="utf-8"))["components"]["schemas"]["SignedTransaction"]["pattern"]
B64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
SIGNED = base64.b64encode(b"\x05\x00\x00\x00alice" + bytes(100)).decode()
SENDS = ("send_tx", "broadcast_tx_commit", "broadcast_tx_async")
STATUSES = ("NONE", "INCLUDED", "EXECUTED_OPTIMISTIC", "INCLUDED_FINAL", "EXECUTED", "FINAL")
ACCOUNT = {"amount": "10", "locked": "0", "code_hash": "11111111111111111111111111111111", "storage_usage": 182}


def _refusal(method: str, params: object) -> str:
    with pytest.raises(RpcError) as caught:
        typed_params(METHODS[method], params)
    assert caught.value.kind.cause is Cause.PARSE_ERROR
    assert caught.value.info == {"error_message": caught.value.data}
    return str(caught.value.data)


@pytest.mark.parametrize("method", SENDS)
def test_the_object_form_waits_for_executed_optimistic_unless_told(method: str) -> None:
    request = typed_params(METHODS[method], {"signed_tx_base64": SIGNED}).root
    assert isinstance(request, models.RpcSendTransactionRequest1)
    assert (request.signed_tx_base64.root, request.wait_until.root) == (SIGNED, "EXECUTED_OPTIMISTIC")
    for status in STATUSES:
        told = typed_params(METHODS[method], {"wait_until": status, "signed_tx_base64": SIGNED, "other": 1}).root
        assert told.wait_until.root == status


@pytest.mark.parametrize("method", SENDS)
def test_the_legacy_array_holds_the_transaction_alone(method: str) -> None:
    request = typed_params(METHODS[method], [SIGNED]).root
    assert isinstance(request, models.RpcSendTransactionRequest2)
    assert request.root[0].root == SIGNED


@pytest.mark.parametrize("method", SENDS)
@pytest.mark.parametrize(
    ("params", "text"),
    [
        # api/transactions.rs decode_signed_transaction: the array form
        (["!!!!"], "Failed to decode transaction: Invalid byte 33, offset 0."),
        (["QUJD", "x"], "Unable to parse send request: too many params passed"),
        ([5], "Failed parsing args: invalid type: integer `5`, expected a string"),
        ([SIGNED, 5], "Failed parsing args: invalid type: integer `5`, expected a string"),
        # the struct: its SignedTransaction's serde, TxExecutionStatus's variants
        (
            {"signed_tx_base64": "!!!!"},
            "Failed parsing args: the value could not decoded from base64 due to: Invalid byte 33, offset 0.",
        ),
        ({"signed_tx_base64": 7}, "Failed parsing args: invalid type: integer `7`, expected a string"),
        (
            {"signed_tx_base64": SIGNED, "wait_until": "DONE"},
            "Failed parsing args: unknown variant `DONE`, expected one of `NONE`, `INCLUDED`, "
            "`EXECUTED_OPTIMISTIC`, `INCLUDED_FINAL`, `EXECUTED`, `FINAL`",
        ),
        (
            {"signed_tx_base64": SIGNED, "wait_until": 3},
            "Failed parsing args: invalid type: integer `3`, expected variant identifier",
        ),
        # members in the order they come: the first at fault is named
        (
            {"wait_until": "final", "signed_tx_base64": "!!!!"},
            "Failed parsing args: unknown variant `final`, expected one of `NONE`, `INCLUDED`, "
            "`EXECUTED_OPTIMISTIC`, `INCLUDED_FINAL`, `EXECUTED`, `FINAL`",
        ),
        ({"wait_until": "FINAL"}, "Failed parsing args: missing field `signed_tx_base64`"),
        (None, "Failed parsing args: invalid type: null, expected struct RpcSendTransactionRequest"),
        ("QUJD", 'Failed parsing args: invalid type: string "QUJD", expected struct RpcSendTransactionRequest'),
        ([], "Failed parsing args: invalid length 0, expected struct RpcSendTransactionRequest with 2 elements"),
        ([SIGNED, "FINAL", 1], "Failed parsing args: invalid length 3, expected fewer elements in array"),
    ],
)
def test_each_refusal_in_nearcores_words(method: str, params: object, text: str) -> None:
    assert _refusal(method, params) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("QQ", "Invalid padding"),  # canonical padding is required
        ("QQ=", "Invalid padding"),
        ("QUJDR", "Encoded text cannot have a 6-bit remainder."),
        ("QUJD\n", "Invalid byte 10, offset 4."),  # a 6-bit remainder, but the last byte named first
        ("QR==", "Invalid last symbol 82, offset 1."),  # bits no byte uses
        ("QUI=QUJD", "Invalid byte 61, offset 3."),  # a symbol after padding: the padding is at fault
        ("Q===", "Invalid byte 61, offset 1."),  # padding second in its quad
        ("QUJD!UJD", "Invalid byte 33, offset 4."),
        ("QUJDé==", "Invalid byte 195, offset 4."),  # offsets count UTF-8 bytes
    ],
)
def test_base64_is_refused_in_the_crates_words(text: str, message: str) -> None:
    with pytest.raises(Base64Error) as refused:
        decode_standard(text)
    assert str(refused.value) == message
    assert _refusal("send_tx", [text]) == f"Failed to decode transaction: {message}"


def test_base64_decodes_what_the_standard_encoding_writes() -> None:
    chooser = random.Random(45)
    for size in range(40):
        data = chooser.randbytes(size)
        assert decode_standard(base64.b64encode(data).decode()) == data


@settings(max_examples=300, deadline=None)
@given(st.from_regex(SIGNED_PATTERN, fullmatch=True))
def test_every_text_the_signed_transaction_pattern_admits_decodes(text: str) -> None:
    # what schemathesis draws for `SignedTransaction`: the reader must take it (wire-send-tx-params)
    decode_standard(text)
    typed_params(METHODS["send_tx"], [text])
    typed_params(METHODS["broadcast_tx_async"], {"signed_tx_base64": text})


def _final_quad_drawn(chooser: random.Random) -> str:
    """Whole quads, then a padded quad whose symbols are any of the alphabet: unused bits set or not."""
    body = "".join(chooser.choice(B64_ALPHABET) for _ in range(4 * chooser.randrange(4)))
    symbols = chooser.choice((2, 3))
    return body + "".join(chooser.choice(B64_ALPHABET) for _ in range(symbols)) + "=" * (4 - symbols)


def test_the_pattern_admits_exactly_the_canonical_texts() -> None:
    # base64 crate STANDARD engine (nearcore's from_base64): a last symbol with unused bits set is refused
    chooser = random.Random(202)
    admitted = refused = 0
    for _ in range(2_000):
        text = _final_quad_drawn(chooser)
        canonical = base64.b64encode(base64.b64decode(text)).decode() == text
        assert (re.fullmatch(SIGNED_PATTERN, text) is not None) is canonical, text
        if canonical:
            admitted += 1
            decode_standard(text)
            continue
        refused += 1
        with pytest.raises(Base64Error, match="Invalid last symbol"):
            decode_standard(text)
        assert "Invalid last symbol" in _refusal("send_tx", [text])
        assert "Invalid last symbol" in _refusal("broadcast_tx_commit", {"signed_tx_base64": text})
        assert "Invalid last symbol" in _refusal("tx", [text])  # the status's signed form reads the same schema
    assert admitted > 200 and refused > 200


def test_patch_state_takes_accounts_keys_code_and_data() -> None:
    records = [
        {"Account": {"account_id": "alice.near", "account": ACCOUNT}},
        {"AccessKey": {"account_id": "alice.near", "public_key": "ed25519:" + "1" * 32,
                       "access_key": {"nonce": 0, "permission": "FullAccess"}}},
        {"Contract": {"account_id": "alice.near", "code": "AGFzbQEAAAA="}},
        {"Data": {"account_id": "alice.near", "data_key": "a2V5", "value": "dmFsdWU="}},
    ]  # fmt: skip
    request = typed_params(METHODS["sandbox_patch_state"], {"records": records})
    assert [record.model_dump(mode="json", exclude_unset=True) for record in request.records] == records


@pytest.mark.parametrize(
    ("params", "text"),
    [
        ({}, "missing field `records`"),
        ({"records": 5}, "invalid type: integer `5`, expected a sequence"),
        (
            {"records": [{"Receipt": {}}]},
            "unknown variant `Receipt`, expected one of `Account`, `Data`, `Contract`, `AccessKey`, "
            "`PostponedReceipt`, `ReceivedData`, `DelayedReceipt`",
        ),
        (
            {"records": [{"DelayedReceipt": {}}]},
            "a DelayedReceipt record is not taken by this sandbox (Account, AccessKey, Contract, Data)",
        ),
    ],
)
def test_patch_state_refusals(params: object, text: str) -> None:
    assert _refusal("sandbox_patch_state", params) == f"Failed parsing args: {text}"


def test_a_record_s_members_are_the_spec_s() -> None:
    bad_account = {"records": [{"Account": {"account_id": "Alice", "account": ACCOUNT}}]}
    assert "Failed parsing args" in _refusal("sandbox_patch_state", bad_account)
    missing_amount = {k: v for k, v in ACCOUNT.items() if k != "amount"}
    no_amount = {"records": [{"Account": {"account_id": "a.near", "account": missing_amount}}]}
    assert "amount" in _refusal("sandbox_patch_state", no_amount)


def test_fast_forward_takes_a_bounded_u64() -> None:
    assert typed_params(METHODS["sandbox_fast_forward"], {"delta_height": 10_000}).delta_height == 10_000
    assert _refusal("sandbox_fast_forward", {}) == "Failed parsing args: missing field `delta_height`"
    assert _refusal("sandbox_fast_forward", {"delta_height": -1}) == (
        "Failed parsing args: invalid value: integer `-1`, expected u64"
    )
    assert _refusal("sandbox_fast_forward", {"delta_height": "5"}) == (
        'Failed parsing args: invalid type: string "5", expected u64'
    )
    assert _refusal("sandbox_fast_forward", {"delta_height": 10_001}) == (
        "Failed parsing args: delta_height 10001 is more blocks than one request may produce here (10,000)"
    )


def test_revert_names_a_snapshot_and_snapshot_ignores_its_params() -> None:
    assert typed_params(METHODS["sandbox_revert"], {"snapshot_id": "s-1"}).snapshot_id == "s-1"
    assert _refusal("sandbox_revert", {}) == "Failed parsing args: missing field `snapshot_id`"
    assert _refusal("sandbox_revert", {"snapshot_id": 1}) == (
        "Failed parsing args: invalid type: integer `1`, expected a string"
    )
    ignored: list[object] = [None, [], {}, {"anything": 1}]
    for params in ignored:
        typed_params(METHODS["sandbox_snapshot"], params)


def _left_to_right(text: str) -> str | None:
    """The crate's reading written as its decoder meets the bytes, one at a time: the refusal's
    words, or None for a text it takes."""
    data = text.encode()
    alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    if len(data) % 4 == 1:
        return (
            f"Invalid byte {data[-1]}, offset {len(data) - 1}."
            if data[-1] not in alphabet + b"="
            else ("Encoded text cannot have a 6-bit remainder.")
        )
    first_pad = -1
    for offset, byte in enumerate(data):
        if byte == 61:
            if offset % 4 < 2:
                return f"Invalid byte 61, offset {first_pad if first_pad >= 0 else offset}."
            first_pad = offset if first_pad < 0 else first_pad
        elif first_pad >= 0:
            return f"Invalid byte 61, offset {first_pad}."
        elif byte not in alphabet:
            return f"Invalid byte {byte}, offset {offset}."
    if len(data) % 4:
        return "Invalid padding"
    pads = 0 if first_pad < 0 else len(data) - first_pad
    if pads and base64.b64encode(base64.b64decode(data)) != data:
        return f"Invalid last symbol {data[-pads - 1]}, offset {len(data) - pads - 1}."
    return None


def test_the_decoder_reads_as_the_crate_does_byte_by_byte() -> None:
    chooser = random.Random(4545)
    for _ in range(20_000):
        text = "".join(chooser.choice("QUJDRw==!/+") for _ in range(chooser.randrange(13)))
        try:
            decode_standard(text)
            found = None
        except Base64Error as refused:
            found = str(refused)
        assert found == _left_to_right(text), text


def test_patch_state_bounds_its_records_before_reading_them() -> None:
    # counted before any record is read against the spec: a bad record past the bound is not reached
    records: list[object] = [{"Data": {"account_id": "a.near", "data_key": "", "value": ""}}] * MAX_PATCH_RECORDS
    assert typed_params(METHODS["sandbox_patch_state"], {"records": records[:3]})
    refused = _refusal("sandbox_patch_state", {"records": [*records, "not a record"]})
    assert refused == "Failed parsing args: 100001 records in one patch; at most 100,000"
    assert MAX_PATCH_RECORDS == MAX_RECORDS  # the params' bound is the chain's


@pytest.mark.parametrize(
    ("record", "text"),
    [
        ({"Data": {"account_id": "a.near", "data_key": "!!", "value": ""}}, "`0.StateRecord4.Data.data_key`"),
        ({"Contract": {"account_id": "a.near", "code": "@@@"}}, "`0.StateRecord3.Contract.code`"),
        (
            {"AccessKey": {"account_id": "a.near", "public_key": 5, "access_key": {}}},
            "`0.StateRecord2.AccessKey.public_key`",
        ),
    ],
)
def test_a_bad_record_is_refused_for_its_own_member_not_another_variant_s(record: object, text: str) -> None:
    # every variant of the union is tried: the refusal names the member at fault in the variant sent,
    # not "missing field `0.StateRecord1.Account`" (the first variant's)
    refused = _refusal("sandbox_patch_state", {"records": [record]})
    assert text in refused and "StateRecord1.Account" not in refused


def test_a_pattern_of_60_000_characters_is_not_repeated_to_the_client() -> None:
    record = {"AccessKey": {"account_id": "a.near", "public_key": "ed25519:xx", "access_key": {}}}
    refused = _refusal("sandbox_patch_state", {"records": [record]})
    assert (
        refused == 'Failed parsing args: invalid value: string "ed25519:xx" for `0.StateRecord2.AccessKey.public_key`'
    )


@pytest.mark.parametrize("record", [{}, {"Account": {}, "Data": {}}])
def test_a_record_is_a_map_with_one_key(record: object) -> None:
    refused = _refusal("sandbox_patch_state", {"records": [record]})
    assert refused == "Failed parsing args: invalid value: map, expected map with a single key"
