"""`chunk`, `tx`, `EXPERIMENTAL_tx_status` and `EXPERIMENTAL_receipt` from a real server over a
SQLite store: the sample chain plus hand-built rows (tests/support/read_rows.py). Every request
form nearcore takes, every error with its HTTP status, and every answer held to this spec and
to upstream 1.2.13's schemas."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import base58
import httpx
import orjson
import pytest

from nearrpc.nearcore.transaction import signed_transaction_bytes, transaction_bytes, transaction_hash
from nearrpc.sample.build import sample_chain, write_chain
from nearrpc.spec import validate_component
from nearrpc.store import open_store
from tests.support.live_server import running_server
from tests.support.read_rows import SIGNER, ReadRows, fake_hash, serving_read_rows
from tests.support.rpc import Answer, call, checked
from tests.support.upstream_schema import check_upstream

pytestmark = pytest.mark.live

UNKNOWN = fake_hash("nothing stored under this")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, ReadRows]]:
    with serving_read_rows(tmp_path_factory.mktemp("reads")) as served:
        yield served


def _answered(reference: Path, http: httpx.Client, method: str, params: Any, path: str = "/") -> Answer:
    answer = checked(call(http, method, params, path=path), method)
    check_upstream(reference, method, answer.body)
    return answer


def _error(answer: Answer, cause: str, status: int) -> dict[str, Any]:
    assert answer.status == status, answer.raw
    error: dict[str, Any] = answer.error
    assert error["cause"]["name"] == cause, answer.raw
    return error


# ------------------------------------------------------------------ chunk


def test_a_chunk_answers_by_hash_and_by_block_and_shard_in_every_form(
    served: tuple[httpx.Client, ReadRows], reference: Path
) -> None:
    http, rows = served
    for transfer in rows.transfers:
        block = transfer.tx_block
        forms = [
            {"chunk_id": transfer.chunk_hash},
            [transfer.chunk_hash],
            {"block_id": block.height, "shard_id": transfer.shard_id},
            {"block_id": block.hash, "shard_id": transfer.shard_id},
            [[block.height, transfer.shard_id]],
            [[block.hash, transfer.shard_id]],
            {"block_id": float(block.height), "shard_id": float(transfer.shard_id)},  # integers, to JSON Schema
        ]
        answers = {_answered(reference, http, "chunk", form).raw for form in forms}
        assert len(answers) == 1  # the same bytes, whichever way it was asked
        result = orjson.loads(answers.pop())["result"]
        validate_component("RpcChunkResponse", result)
        assert result["header"]["chunk_hash"] == transfer.chunk_hash
        assert result["header"]["height_included"] == block.height
        assert [tx["hash"] for tx in result["transactions"]] == [transfer.tx_hash]
    assert _answered(reference, http, "chunk", {"chunk_id": rows.transfers[0].chunk_hash}, "/chunk").status == 200


def test_a_block_whose_shard_had_no_new_chunk_answers_the_previous_chunk(
    served: tuple[httpx.Client, ReadRows], reference: Path
) -> None:
    """Block 12 carries shard 2's header of block 11 (the shard missed its chunk at 12)."""
    http, rows = served
    first = rows.transfers[0]
    assert (first.tx_block.height, first.shard_id) == (11, 2)
    header_12 = next(h for h in orjson.loads(rows.block_at(12).view_json)["chunks"] if h["shard_id"] == 2)
    assert header_12["height_included"] == 11
    result = _answered(reference, http, "chunk", {"block_id": 12, "shard_id": 2}).result
    assert result["header"]["chunk_hash"] == first.chunk_hash and result["header"]["height_included"] == 11


def test_chunk_errors(served: tuple[httpx.Client, ReadRows], reference: Path) -> None:
    http = served[0]
    error = _error(_answered(reference, http, "chunk", {"chunk_id": UNKNOWN}), "UNKNOWN_CHUNK", 200)
    assert error["cause"]["info"] == {"chunk_hash": UNKNOWN}
    assert error["data"] == f"Chunk Missing (unavailable on the node): ChunkHash(`{UNKNOWN}`) \n Cause: Unknown"
    error = _error(_answered(reference, http, "chunk", {"block_id": 12, "shard_id": 9}), "INVALID_SHARD_ID", 200)
    assert (error["cause"]["info"], error["data"]) == ({"shard_id": 9}, "Shard id 9 does not exist")
    # a skipped height below the head: 422, as for every UNKNOWN_BLOCK by such a height
    error = _error(_answered(reference, http, "chunk", {"block_id": 7, "shard_id": 0}), "UNKNOWN_BLOCK", 422)
    assert error["data"] == "DB Not Found Error: BLOCK HEIGHT: 7 \n Cause: Unknown"
    _error(_answered(reference, http, "chunk", [[7, 0]]), "UNKNOWN_BLOCK", 200)  # positional: 200
    error = _error(_answered(reference, http, "chunk", {"block_id": UNKNOWN, "shard_id": 0}), "UNKNOWN_BLOCK", 200)
    assert error["data"] == f"DB Not Found Error: BLOCK: {UNKNOWN} \n Cause: Unknown"
    _error(_answered(reference, http, "chunk", {"block_id": 10**6, "shard_id": 0}), "UNKNOWN_BLOCK", 200)


def test_a_block_whose_chunk_is_not_stored_answers_the_chunk_its_header_names_as_unknown(
    tmp_path: Path, reference: Path
) -> None:
    # A store with the sample's blocks but none of its chunk records (a recording of blocks only):
    # the block is found, the chunk its header names for the shard is not.
    chain = dataclasses.replace(sample_chain(), chunks=())
    with open_store(tmp_path / "store.sqlite", "write") as writer:
        write_chain(writer, chain)
    block = next(b for b in chain.blocks if b.height == 13)
    header = next(h for h in orjson.loads(block.view_json)["chunks"] if h["shard_id"] == 1)
    with (
        running_server(tmp_path / "store.sqlite", tmp_path / "server.log") as live,
        httpx.Client(base_url=live.url) as http,
    ):
        for params in ([[13, 1]], {"block_id": 13, "shard_id": 1}, {"chunk_id": header["chunk_hash"]}):
            error = _error(_answered(reference, http, "chunk", params), "UNKNOWN_CHUNK", 200)
            assert error["cause"]["info"] == {"chunk_hash": header["chunk_hash"]}


@pytest.mark.parametrize(
    ("params", "containing"),
    [
        (None, "invalid type: null, expected struct RpcChunkRequest"),
        ({}, "untagged enum ChunkReference"),
        ({"block_id": 12}, "untagged enum ChunkReference"),  # no shard_id
        ({"block_id": 12, "shard_id": -1}, "untagged enum ChunkReference"),
        ({"block_id": 12, "shard_id": 2**64}, "untagged enum ChunkReference"),
        ({"block_id": 12, "shard_id": 1.5}, "untagged enum ChunkReference"),
        ({"chunk_id": "not-base58!"}, "untagged enum ChunkReference"),
        ([], "invalid type: sequence, expected struct RpcChunkRequest"),
        ([[12]], "invalid length 1, expected a tuple of size 2"),
        ([[12, "2"]], "expected u64"),
        ([[1.5, 2]], "untagged enum BlockId"),
        (["short"], "expected a base58 hash of 32 bytes"),
        ([12], "invalid type: integer `12`, expected a string"),
    ],
)
def test_chunk_refuses_what_nearcore_refuses(
    served: tuple[httpx.Client, ReadRows], params: Any, containing: str
) -> None:
    answer = checked(call(served[0], "chunk", params), "chunk")
    error = _error(answer, "PARSE_ERROR", 400)
    assert containing in error["data"], error["data"]


# ------------------------------------------------------------------ tx, EXPERIMENTAL_tx_status


def test_tx_answers_each_transaction_in_both_forms(served: tuple[httpx.Client, ReadRows], reference: Path) -> None:
    http, rows = served
    for transfer in rows.transfers:
        named = {"tx_hash": transfer.tx_hash, "sender_account_id": SIGNER, "wait_until": "NONE"}
        by_name = _answered(reference, http, "tx", named)
        positional = _answered(reference, http, "tx", [transfer.tx_hash, SIGNER])  # all reached its wait_until
        assert by_name.result == positional.result
        result = by_name.result
        outcome = {k: v for k, v in result.items() if k != "final_execution_status"}
        validate_component("FinalExecutionOutcomeView", outcome)
        assert "receipts" not in result
        assert result["final_execution_status"] == transfer.status
        assert result["transaction"]["hash"] == transfer.tx_hash
        assert [o["id"] for o in result["receipts_outcome"]] == [transfer.receipt_id, transfer.refund_id]


def test_tx_status_adds_the_receipts(served: tuple[httpx.Client, ReadRows], reference: Path) -> None:
    http, rows = served
    for transfer in rows.transfers:
        params = {"tx_hash": transfer.tx_hash, "sender_account_id": SIGNER, "wait_until": "NONE"}
        with_receipts = _answered(reference, http, "EXPERIMENTAL_tx_status", params).result
        outcome = {k: v for k, v in with_receipts.items() if k != "final_execution_status"}
        validate_component("FinalExecutionOutcomeWithReceiptView", outcome)
        assert [r["receipt_id"] for r in with_receipts["receipts"]] == [transfer.receipt_id, transfer.refund_id]
        without = _answered(reference, http, "tx", params).result
        assert {k: v for k, v in with_receipts.items() if k != "receipts"} == without
        # each receipt answers EXPERIMENTAL_receipt with the view the status carries
        for receipt in with_receipts["receipts"]:
            answer = _answered(reference, http, "EXPERIMENTAL_receipt", {"receipt_id": receipt["receipt_id"]})
            assert answer.result == receipt
            validate_component("RpcReceiptResponse", answer.result)


# the statuses each wait_until accepts (jsonrpc's tx_execution_status_meets_expectations)
WAIT_UNTIL = {
    "NONE": {"FINAL", "EXECUTED", "EXECUTED_OPTIMISTIC"},
    "INCLUDED": {"FINAL", "EXECUTED", "EXECUTED_OPTIMISTIC"},
    "EXECUTED_OPTIMISTIC": {"FINAL", "EXECUTED", "EXECUTED_OPTIMISTIC"},
    "INCLUDED_FINAL": {"FINAL", "EXECUTED"},
    "EXECUTED": {"FINAL", "EXECUTED"},
    "FINAL": {"FINAL"},
}


@pytest.mark.parametrize("wait_until", list(WAIT_UNTIL))
@pytest.mark.parametrize("method", ["tx", "EXPERIMENTAL_tx_status"])
def test_wait_until_against_the_status_reached(
    served: tuple[httpx.Client, ReadRows], reference: Path, method: str, wait_until: str
) -> None:
    http, rows = served
    for transfer in rows.transfers:
        params = {"tx_hash": transfer.tx_hash, "sender_account_id": SIGNER, "wait_until": wait_until}
        answer = _answered(reference, http, method, params)
        if transfer.status in WAIT_UNTIL[wait_until]:
            assert answer.status == 200 and answer.result["final_execution_status"] == transfer.status
        else:
            error = _error(answer, "TIMEOUT_ERROR", 408)
            assert "info" not in error["cause"] and error["data"] == "Timeout"


def test_the_legacy_pair_waits_for_executed_optimistic(served: tuple[httpx.Client, ReadRows], reference: Path) -> None:
    http, rows = served
    for transfer in rows.transfers:  # all three have reached it
        assert _answered(reference, http, "tx", [transfer.tx_hash, SIGNER]).status == 200


def test_a_wrong_sender_still_finds_the_transaction_by_its_hash(
    served: tuple[httpx.Client, ReadRows], reference: Path
) -> None:
    """The sender picks the shard a node asks; a node that tracks every shard finds it anyway."""
    http, rows = served
    transfer = rows.transfers[0]
    right = _answered(reference, http, "tx", [transfer.tx_hash, SIGNER])
    wrong = _answered(reference, http, "tx", [transfer.tx_hash, "somebody-else.localnet"])
    assert wrong.raw == right.raw


def test_an_unknown_transaction(served: tuple[httpx.Client, ReadRows], reference: Path) -> None:
    http, _ = served
    for method in ("tx", "EXPERIMENTAL_tx_status"):
        params = {"tx_hash": UNKNOWN, "sender_account_id": SIGNER, "wait_until": "NONE"}
        error = _error(_answered(reference, http, method, params), "UNKNOWN_TRANSACTION", 200)
        assert error["cause"]["info"] == {"requested_transaction_hash": UNKNOWN}
        assert error["data"] == f"Transaction {UNKNOWN} doesn't exist"
        # any other wait_until: nearcore polls for it until its timeout
        _error(_answered(reference, http, method, [UNKNOWN, SIGNER]), "TIMEOUT_ERROR", 408)
        named = {"tx_hash": UNKNOWN, "sender_account_id": SIGNER}
        _error(_answered(reference, http, method, named), "TIMEOUT_ERROR", 408)


@pytest.mark.parametrize(
    ("params", "containing"),
    [
        (None, "invalid type: null, expected struct RpcTransactionStatusRequest"),
        ({}, "untagged enum TransactionInfo"),
        ({"tx_hash": UNKNOWN}, "untagged enum TransactionInfo"),
        ({"tx_hash": UNKNOWN, "sender_account_id": "Not Valid"}, "invalid value"),
        ({"tx_hash": "short", "sender_account_id": SIGNER}, "expected a base58 hash of 32 bytes"),
        ({"tx_hash": UNKNOWN, "sender_account_id": SIGNER, "wait_until": "SOON"}, "unknown variant `SOON`"),
        ([UNKNOWN, 5], "invalid type: integer `5`, expected a string"),
        ([UNKNOWN, SIGNER, "FINAL"], "invalid type: sequence, expected struct RpcTransactionStatusRequest"),
        # signed transactions that are none: positionally the decoder's words (api/transactions.rs
        # decode_signed_transaction), in the object the untagged enum's, as no variant matched
        (["AAAA"], "Failed to decode transaction: Unexpected length of input"),
        (["!!"], "Failed to decode transaction: Invalid symbol 33, offset 0."),
        ([5], "invalid type: integer `5`, expected a string"),
        ({"signed_tx_base64": "AAAA"}, "data did not match any variant of untagged enum TransactionInfo"),
        ({"signed_tx_base64": 5}, "data did not match any variant of untagged enum TransactionInfo"),
        ({"signed_tx_base64": "AAAA", "tx_hash": UNKNOWN}, "data did not match any variant of untagged enum"),
        # a Transaction::V1 nearcore reads, which the sandbox's decoder does not (DEVIATIONS)
        (["AQU="], "Failed to decode transaction: the sandbox does not accept Transaction::V1"),
        ({"signed_tx_base64": "AQU="}, "Failed to decode transaction: the sandbox does not accept Transaction::V1"),
    ],
)
def test_tx_refuses_what_it_cannot_read(served: tuple[httpx.Client, ReadRows], params: Any, containing: str) -> None:
    for method in ("tx", "EXPERIMENTAL_tx_status"):
        error = _error(checked(call(served[0], method, params), method), "PARSE_ERROR", 400)
        assert containing in error["data"], error["data"]


# ------------------------------------------------------------------ tx by its signed transaction


def _signed_forms(http: httpx.Client) -> list[tuple[str, str, str]]:
    """(hash, signer, base64 of the signed transaction) of the sample chain's transactions, each
    re-encoded from its view: the view lacks the block hash signed on, its block's parent."""
    forms = []
    for tx in sample_chain().transactions:
        view = orjson.loads(tx.view_json)["transaction"]
        if any(isinstance(action, dict) and "Delegate" in action for action in view["actions"]):
            continue  # nearrpc.nearcore.transaction writes no delegate action
        parent = call(http, "block", {"block_id": tx.block_hash}).result["header"]["prev_hash"]
        fields = {key: view[key] for key in ("signer_id", "public_key", "nonce", "receiver_id", "actions")}
        raw = transaction_bytes(block_hash=parent, **fields)
        assert base58.b58encode(transaction_hash(raw)).decode() == view["hash"]  # the same transaction
        signed = base64.b64encode(signed_transaction_bytes(raw, view["signature"])).decode()
        forms.append((view["hash"], view["signer_id"], signed))
    return forms


@pytest.mark.parametrize("method", ["tx", "EXPERIMENTAL_tx_status"])
def test_a_transaction_asked_by_its_signed_form_answers_as_by_its_hash(
    served: tuple[httpx.Client, ReadRows], reference: Path, method: str
) -> None:
    """nearcore asks its chain for a signed transaction's hash and signer
    (`TransactionInfo::to_tx_hash_and_account`): the same answer, byte for byte."""
    http, _ = served
    forms = _signed_forms(http)
    assert len(forms) >= 10
    for tx_hash, signer, signed in forms:
        by_hash = _answered(reference, http, method, {"tx_hash": tx_hash, "sender_account_id": signer})
        assert by_hash.status == 200 and by_hash.result["transaction"]["hash"] == tx_hash
        for form in ({"signed_tx_base64": signed}, [signed]):
            assert _answered(reference, http, method, form).raw == by_hash.raw
        final = {"tx_hash": tx_hash, "sender_account_id": signer, "wait_until": "FINAL"}
        signed_final = {"signed_tx_base64": signed, "wait_until": "FINAL"}
        assert _answered(reference, http, method, signed_final).raw == _answered(reference, http, method, final).raw


def test_the_signed_form_comes_first_then_the_hash_form(served: tuple[httpx.Client, ReadRows], reference: Path) -> None:
    """The untagged enum tries the signed transaction first; one that is none leaves the pair."""
    http, _ = served
    tx_hash, signer, signed = _signed_forms(http)[0]
    by_hash = _answered(reference, http, "tx", {"tx_hash": tx_hash, "sender_account_id": signer})
    both = {"signed_tx_base64": signed, "tx_hash": UNKNOWN, "sender_account_id": signer}
    assert _answered(reference, http, "tx", both).raw == by_hash.raw
    not_a_transaction = {"signed_tx_base64": "AAAA", "tx_hash": tx_hash, "sender_account_id": signer}
    assert _answered(reference, http, "tx", not_a_transaction).raw == by_hash.raw


def test_a_signed_transaction_never_stored_is_unknown_by_its_hash(
    served: tuple[httpx.Client, ReadRows], reference: Path
) -> None:
    http, _ = served
    raw = transaction_bytes(
        signer_id=SIGNER, public_key="ed25519:" + "1" * 32, nonce=1, receiver_id=SIGNER, block_hash=UNKNOWN,
        actions=[{"Transfer": {"deposit": "1"}}],
    )  # fmt: skip
    signed = base64.b64encode(signed_transaction_bytes(raw, "ed25519:" + "1" * 64)).decode()
    tx_hash = base58.b58encode(transaction_hash(raw)).decode()
    for method in ("tx", "EXPERIMENTAL_tx_status"):
        answer = _answered(reference, http, method, {"signed_tx_base64": signed, "wait_until": "NONE"})
        error = _error(answer, "UNKNOWN_TRANSACTION", 200)
        assert error["cause"]["info"] == {"requested_transaction_hash": tx_hash}
        _error(_answered(reference, http, method, [signed]), "TIMEOUT_ERROR", 408)  # EXECUTED_OPTIMISTIC


# ------------------------------------------------------------------ EXPERIMENTAL_receipt


def test_receipts_answer_and_unknown_receipts_are_refused(
    served: tuple[httpx.Client, ReadRows], reference: Path
) -> None:
    http, rows = served
    transfer = rows.transfers[1]
    result = _answered(reference, http, "EXPERIMENTAL_receipt", {"receipt_id": transfer.refund_id}).result
    assert (result["receipt_id"], result["predecessor_id"]) == (transfer.refund_id, "system")
    error = _error(_answered(reference, http, "EXPERIMENTAL_receipt", {"receipt_id": UNKNOWN}), "UNKNOWN_RECEIPT", 200)
    assert error["cause"]["info"] == {"receipt_id": UNKNOWN}
    assert error["data"] == {"name": "UNKNOWN_RECEIPT", "info": {"receipt_id": UNKNOWN}}  # nearcore's: the cause
    for params, containing in [
        ({}, "missing field `receipt_id`"),
        ([transfer.refund_id], "expected struct RpcReceiptRequest"),
        ({"receipt_id": 5}, "invalid type: integer `5`, expected a string"),
    ]:
        error = _error(checked(call(http, "EXPERIMENTAL_receipt", params), "EXPERIMENTAL_receipt"), "PARSE_ERROR", 400)
        assert containing in error["data"], error["data"]
