"""The writing methods answered through the app, over the sample chain's store and a fake
sandbox chain: each answer and error in nearcore's shape (chain/jsonrpc lib.rs send_tx,
send_tx_commit, send_tx_async; jsonrpc-primitives types/transactions.rs, sandbox.rs), valid
against the spec's response of its method, with its HTTP status; and the read-only server's
answers without a chain."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import based58
import pytest

from nearrpc.nearcore.transaction import signed_transaction_bytes, transaction_bytes
from nearrpc.sandbox.chain import InvalidStateRecord
from nearrpc.sandbox.runtime.model import TransactionRefused, TransactionUndecodable
from nearrpc.store import StoreError
from tests.sandbox.methods_fake_chain import Call, FakeChain, caller
from tests.support.sample_facts import sample_facts

FACTS = sample_facts()
TRANSFER = FACTS.transaction(action="Transfer")
UNKNOWN_HASH = "4reLvkAWfqk5fsqio1KLudk46cqRz9erQdaHkWZKMJDZ"
RAW = transaction_bytes(
    signer_id="alice.near", public_key="ed25519:" + "1" * 32, nonce=7, receiver_id="bob.near",
    block_hash=UNKNOWN_HASH, actions=[{"Transfer": {"deposit": "1"}}],
)  # fmt: skip
SIGNED = signed_transaction_bytes(RAW, "ed25519:" + based58.b58encode(bytes(range(64))).decode())
SIGNED_B64 = base64.b64encode(SIGNED).decode()
RAW_HASH = based58.b58encode(hashlib.sha256(RAW).digest()).decode()
NONCE_REFUSAL = {"InvalidNonce": {"tx_nonce": 5, "ak_nonce": 7}}


def _tx_answer(call: Call, tx_hash: str) -> dict[str, Any]:
    status, body = call("tx", {"tx_hash": tx_hash, "sender_account_id": TRANSFER.signer_id})
    assert status == 200, body
    result: dict[str, Any] = body["result"]
    return result


def test_send_tx_waits_and_answers_as_tx_does(sample_store: Path) -> None:
    chain = FakeChain(TRANSFER.tx_hash)
    call = caller(sample_store, chain)
    status, body = call("send_tx", {"signed_tx_base64": SIGNED_B64})
    assert status == 200
    assert body["result"] == _tx_answer(call, TRANSFER.tx_hash)  # the same composition, no receipts
    assert body["result"]["final_execution_status"] == TRANSFER.final_execution_status
    assert "receipts" not in body["result"]
    assert chain.calls == [("submit", SIGNED), ("wait", (TRANSFER.tx_hash, "EXECUTED_OPTIMISTIC", 10.0))]


@pytest.mark.parametrize("wait_until", ["INCLUDED", "EXECUTED_OPTIMISTIC", "INCLUDED_FINAL", "EXECUTED", "FINAL"])
def test_send_tx_waits_for_the_status_asked(sample_store: Path, wait_until: str) -> None:
    chain = FakeChain(TRANSFER.tx_hash)
    status, body = caller(sample_store, chain)("send_tx", {"signed_tx_base64": SIGNED_B64, "wait_until": wait_until})
    assert status == 200 and body["result"]["transaction"]["hash"] == TRANSFER.tx_hash
    assert chain.calls[1] == ("wait", (TRANSFER.tx_hash, wait_until, 10.0))


def test_send_tx_none_answers_at_once_without_an_outcome(sample_store: Path) -> None:
    chain = FakeChain(TRANSFER.tx_hash)
    status, body = caller(sample_store, chain)("send_tx", {"signed_tx_base64": SIGNED_B64, "wait_until": "NONE"})
    assert (status, body["result"]) == (200, {"final_execution_status": "NONE"})
    assert [name for name, _ in chain.calls] == ["submit"]


def test_the_legacy_forms_wait_for_executed_optimistic(sample_store: Path) -> None:
    chain = FakeChain(TRANSFER.tx_hash)
    call = caller(sample_store, chain)
    expected = _tx_answer(call, TRANSFER.tx_hash)
    forms: list[tuple[str, object]] = [
        ("broadcast_tx_commit", [SIGNED_B64]),
        ("send_tx", [SIGNED_B64]),
        ("broadcast_tx_commit", {"signed_tx_base64": SIGNED_B64, "wait_until": "NONE"}),  # its own wait
    ]
    for method, params in forms:
        chain.calls.clear()
        status, body = call(method, params)
        assert (status, body["result"]) == (200, expected), (method, params)
        assert chain.calls[1] == ("wait", (TRANSFER.tx_hash, "EXECUTED_OPTIMISTIC", 10.0))


def test_broadcast_tx_async_answers_the_hash_and_never_a_refusal(sample_store: Path) -> None:
    chain = FakeChain(TRANSFER.tx_hash)
    call = caller(sample_store, chain)
    assert call("broadcast_tx_async", [SIGNED_B64]) == (200, {"jsonrpc": "2.0", "id": 1, "result": TRANSFER.tx_hash})
    chain.refusal = TransactionRefused(NONCE_REFUSAL)
    # lib.rs send_tx_async: the hash of the transaction sent (SHA-256 of its borsh Transaction)
    assert call("broadcast_tx_async", {"signed_tx_base64": SIGNED_B64})[1]["result"] == RAW_HASH
    assert [name for name, _ in chain.calls] == ["submit", "submit"]


@pytest.mark.parametrize("method", ["send_tx", "broadcast_tx_commit"])
def test_a_refused_transaction_is_invalid_transaction_with_its_tx_execution_error(
    sample_store: Path, method: str
) -> None:
    chain = FakeChain(TRANSFER.tx_hash, refusal=TransactionRefused(NONCE_REFUSAL))
    status, body = caller(sample_store, chain)(method, [SIGNED_B64])
    assert status == 200
    assert body["error"] == {
        "name": "HANDLER_ERROR",
        "cause": {"name": "INVALID_TRANSACTION", "info": {}},
        "code": -32000,
        "message": "Server error",
        "data": {"TxExecutionError": {"InvalidTxError": NONCE_REFUSAL}},
    }
    assert [name for name, _ in chain.calls] == ["submit"]


def test_a_refusal_sent_with_none_is_not_reported(sample_store: Path) -> None:
    chain = FakeChain(TRANSFER.tx_hash, refusal=TransactionRefused({"Expired": None}))
    status, body = caller(sample_store, chain)("send_tx", {"signed_tx_base64": SIGNED_B64, "wait_until": "NONE"})
    assert (status, body["result"]) == (200, {"final_execution_status": "NONE"})


@pytest.mark.parametrize(
    ("params", "text"),
    [
        ([SIGNED_B64], "Failed to decode transaction: Unexpected length of input"),
        ({"signed_tx_base64": SIGNED_B64},
         "Failed parsing args: the value could not decoded from borsh due to: Unexpected length of input"),
    ],
)  # fmt: skip
def test_bytes_the_runtime_cannot_decode_are_a_parse_error(sample_store: Path, params: object, text: str) -> None:
    chain = FakeChain(TRANSFER.tx_hash, refusal=TransactionUndecodable("Unexpected length of input"))
    for method in ("send_tx", "broadcast_tx_commit", "broadcast_tx_async"):
        status, body = caller(sample_store, chain)(method, params)
        assert status == 400
        assert body["error"]["cause"] == {"name": "PARSE_ERROR", "info": {"error_message": text}}
        assert body["error"]["data"] == text


@pytest.mark.parametrize("reached", ["NONE", "INCLUDED"])
def test_a_wait_that_runs_out_is_timeout_error(sample_store: Path, reached: str) -> None:
    # the transaction never reached the store's blocks: nearcore's answer once its poll ends
    chain = FakeChain(UNKNOWN_HASH, reached=reached)
    status, body = caller(sample_store, chain)("send_tx", {"signed_tx_base64": SIGNED_B64, "wait_until": "FINAL"})
    assert status == 408
    assert body["error"] == {
        "name": "HANDLER_ERROR", "cause": {"name": "TIMEOUT_ERROR"}, "code": -32000, "message": "Server error",
        "data": "Timeout",
    }  # fmt: skip


def test_a_read_only_server_refuses_sends_with_a_hint(sample_store: Path) -> None:
    call = caller(sample_store, None)
    for method in ("send_tx", "broadcast_tx_commit", "broadcast_tx_async"):
        status, body = call(method, [SIGNED_B64])
        assert status == 200
        assert body["error"] == {
            "name": "HANDLER_ERROR",
            "cause": {"name": "DOES_NOT_TRACK_SHARD"},
            "code": -32000,
            "message": "Server error",
            "data": "Node doesn't track this shard. Cannot determine whether the transaction is valid (this server "
            "is read-only: start it with `nearrpc serve --sandbox` to send transactions)",
        }
    # params are read first, as nearcore parses before it sends
    status, body = call("send_tx", ["!!!!"])
    assert (status, body["error"]["data"]) == (400, "Failed to decode transaction: Invalid byte 33, offset 0.")


@pytest.mark.parametrize(
    ("method", "params"),
    [("sandbox_patch_state", {"records": []}), ("sandbox_fast_forward", {"delta_height": 1}),
     ("sandbox_snapshot", None), ("sandbox_revert", {"snapshot_id": "s"})],
)  # fmt: skip
def test_without_a_sandbox_its_methods_are_not_found(sample_store: Path, method: str, params: object) -> None:
    status, body = caller(sample_store, None)(method, params)
    assert status == 400
    assert body["error"] == {
        "name": "REQUEST_VALIDATION_ERROR", "cause": {"name": "METHOD_NOT_FOUND", "info": {"method_name": method}},
        "code": -32601, "message": "Method not found", "data": method,
    }  # fmt: skip


def test_patch_state_and_fast_forward_hand_over_and_answer_empty(sample_store: Path) -> None:
    chain = FakeChain(TRANSFER.tx_hash)
    call = caller(sample_store, chain)
    account = {"amount": "10", "locked": "0", "code_hash": "11111111111111111111111111111111", "storage_usage": 1}
    records = [{"Account": {"account_id": "carol.near", "account": account}},
               {"Data": {"account_id": "carol.near", "data_key": "a2V5", "value": ""}}]  # fmt: skip
    assert call("sandbox_patch_state", {"records": records})[1]["result"] == {}
    assert call("sandbox_fast_forward", {"delta_height": 25})[1]["result"] == {}
    assert chain.calls == [("patch_state", records), ("fast_forward", 25)]


def test_snapshot_and_revert(sample_store: Path) -> None:
    chain = FakeChain(TRANSFER.tx_hash)
    call = caller(sample_store, chain)
    first = call("sandbox_snapshot", [])[1]["result"]
    second = call("sandbox_snapshot", [])[1]["result"]  # the same request acts again (never kept)
    assert (first, second) == ({"snapshot_id": "snapshot-0"}, {"snapshot_id": "snapshot-1"})
    assert call("sandbox_revert", {"snapshot_id": "snapshot-0"}) == (200, {"jsonrpc": "2.0", "id": 1, "result": {}})
    status, body = call("sandbox_revert", {"snapshot_id": "snapshot-1"})  # dropped by the revert to its elder
    assert status == 200
    assert body["error"] == {
        "name": "HANDLER_ERROR", "cause": {"name": "UNKNOWN_SNAPSHOT", "info": {"snapshot_id": "snapshot-1"}},
        "code": -32000, "message": "Server error", "data": "Snapshot snapshot-1 doesn't exist",
    }  # fmt: skip


def test_a_send_is_never_answered_from_the_kept_answers(sample_store: Path) -> None:
    chain = FakeChain(TRANSFER.tx_hash)
    call = caller(sample_store, chain)
    for _ in range(2):
        call("send_tx", {"signed_tx_base64": SIGNED_B64})
    assert [name for name, _ in chain.calls] == ["submit", "wait", "submit", "wait"]


class _FailingChain(FakeChain):
    async def fast_forward(self, delta_height: int) -> None:
        raise StoreError("database is locked")


def test_a_chain_whose_store_fails_is_internal_error(sample_store: Path) -> None:
    status, body = caller(sample_store, _FailingChain(TRANSFER.tx_hash))("sandbox_fast_forward", {"delta_height": 1})
    assert status == 500
    assert body["error"]["cause"] == {"name": "INTERNAL_ERROR", "info": {"error_message": "database is locked"}}


class _RefusingPatchChain(FakeChain):
    async def patch_state(self, records: Sequence[Mapping[str, Any]]) -> None:
        raise InvalidStateRecord("record 0: `amount` must be a u128")


def test_a_record_the_chain_cannot_apply_is_a_parse_error_not_internal(sample_store: Path) -> None:
    # an amount above u128 passes the spec's string pattern; nearcore's serde refuses it while parsing
    account = {
        "amount": str(2**128),
        "locked": "0",
        "code_hash": "11111111111111111111111111111111",
        "storage_usage": 1,
    }
    records = [{"Account": {"account_id": "carol.near", "account": account}}]
    status, body = caller(sample_store, _RefusingPatchChain(TRANSFER.tx_hash))(
        "sandbox_patch_state", {"records": records}
    )
    assert status == 400
    assert body["error"]["cause"] == {
        "name": "PARSE_ERROR", "info": {"error_message": "Failed parsing args: record 0: `amount` must be a u128"},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("wait_until", "reached", "answer"),
    [("INCLUDED", "INCLUDED", "INCLUDED"), ("INCLUDED", "INCLUDED_FINAL", "INCLUDED_FINAL"),
     ("INCLUDED_FINAL", "INCLUDED_FINAL", "INCLUDED_FINAL"), ("INCLUDED_FINAL", "INCLUDED", None),
     ("EXECUTED_OPTIMISTIC", "INCLUDED", None)],
)  # fmt: skip
def test_a_send_included_but_not_executed_answers_its_status_alone(
    sample_store: Path, wait_until: str, reached: str, answer: str | None
) -> None:
    # with --block-time, INCLUDED comes a block before the receipts execute (and the store holds the
    # transaction): the status alone, as nearcore answers a transaction without its outcome yet
    chain = FakeChain(UNKNOWN_HASH, reached=reached)
    status, body = caller(sample_store, chain)("send_tx", {"signed_tx_base64": SIGNED_B64, "wait_until": wait_until})
    if answer is None:
        assert (status, body["error"]["cause"]) == (408, {"name": "TIMEOUT_ERROR"})
    else:
        assert (status, body["result"]) == (200, {"final_execution_status": answer})


@pytest.mark.parametrize("method", ["tx", "EXPERIMENTAL_tx_status"])
@pytest.mark.parametrize(
    ("wait_until", "reached", "answer"),
    [("INCLUDED", "INCLUDED", "INCLUDED"), ("INCLUDED", "INCLUDED_FINAL", "INCLUDED_FINAL"),
     ("INCLUDED_FINAL", "INCLUDED", None), ("INCLUDED", "NONE", None), ("EXECUTED_OPTIMISTIC", "INCLUDED", None)],
)  # fmt: skip
def test_a_read_of_a_transaction_in_flight_answers_its_status_alone(
    sample_store: Path, method: str, wait_until: str, reached: str, answer: str | None
) -> None:
    # with --block-time, a transaction is included a block before its receipts execute and the store
    # holds it: tx answers its status alone for INCLUDED, as send_tx does (nearcore's get_tx_status)
    chain = FakeChain(UNKNOWN_HASH, reached=reached)
    params = {"tx_hash": UNKNOWN_HASH, "sender_account_id": "alice.near", "wait_until": wait_until}
    status, body = caller(sample_store, chain)(method, params)
    if answer is None:
        assert (status, body["error"]["cause"]) == (408, {"name": "TIMEOUT_ERROR"})
    else:
        assert (status, body["result"]) == (200, {"final_execution_status": answer})
        assert chain.calls == [("wait", (UNKNOWN_HASH, wait_until, 0.0))]  # the status now, no wait


def test_a_read_only_server_asks_no_chain_for_a_transaction(sample_store: Path) -> None:
    params = {"tx_hash": UNKNOWN_HASH, "sender_account_id": "alice.near", "wait_until": "INCLUDED"}
    status, body = caller(sample_store, None)("tx", params)
    assert (status, body["error"]["cause"]) == (408, {"name": "TIMEOUT_ERROR"})
