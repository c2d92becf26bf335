"""near-api-js, the published NEAR JavaScript client, reading the sample chain's transactions,
chunks, receipts and validators, and the changes a transfer made, through its own provider
(chain_reads.mjs) against the plugin's `nearrpc_server`, in one node process: each answer is what
the sample stores, and the library's own typed errors for a transaction, a chunk, a receipt and
an epoch the chain does not have."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nearrpc.conform.facts import UNKNOWN_HASH
from nearrpc.testing.server import NearrpcServer
from tests.client.chain import hash_at, stored_account
from tests.client.chain_records import (
    account_change,
    chain_records,
    first_transfer,
    receipt_ids,
    tx_result,
    tx_status,
    view,
)
from tests.client.node_scripts import run_script

pytestmark = pytest.mark.live
SCRIPT = Path(__file__).resolve().parent / "chain_reads.mjs"
R = chain_records()


def _call(name: str, call: str, arg: Any = None) -> dict[str, Any]:
    return {"name": name, "call": call} if arg is None else {"name": name, "call": call, "arg": arg}


@pytest.fixture(scope="module")
def answers(
    near_api_js: Path, nearrpc_server: NearrpcServer, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """Every call's answer, from one node process."""
    plan = []
    for tx in R.transactions:
        wallet = {"txHash": tx.tx_hash, "accountId": tx.signer_id}
        plan += [
            _call(f"tx:{tx.tx_hash}", "txStatus", wallet),
            _call(f"status:{tx.tx_hash}", "txStatusWithReceipts", wallet),
        ]
        plan += [_call(f"receipt:{receipt_id}", "receipt", receipt_id) for receipt_id in receipt_ids(tx)]
    plan += [_call(f"chunk:{chunk.chunk_hash}", "chunk", chunk.chunk_hash) for chunk in R.chunks_with_transactions()]
    plan.append(_call("validators:current", "validators"))
    for epoch_id, last_height in R.finished_epochs():
        plan += [
            _call(f"validators:epoch:{epoch_id}", "validators", {"epochId": epoch_id}),
            _call(f"validators:block:{last_height}", "validators", {"blockId": last_height}),
        ]
    transfer = first_transfer()
    plan += [
        _call("block_changes", "blockChanges", {"blockId": transfer.height}),
        _call(
            "signer_changes",
            "accountChanges",
            {"accountIds": [transfer.signer_id], "blockQuery": {"blockId": transfer.height}},
        ),
        _call(
            "receiver_changes",
            "accountChanges",
            {"accountIds": [transfer.receiver_id], "blockQuery": {"blockId": transfer.receipt_height}},
        ),
    ]
    first = R.transactions[0]
    plan += [
        # waitUntil NONE: nearcore answers UNKNOWN_TRANSACTION at once (else it polls, then times out)
        _call("unknown_tx", "txStatus", {"txHash": UNKNOWN_HASH, "accountId": first.signer_id, "waitUntil": "NONE"}),
        _call("unknown_receipt", "receipt", UNKNOWN_HASH),
        _call("unknown_chunk", "chunk", UNKNOWN_HASH),
        _call("unknown_epoch", "validators", {"epochId": UNKNOWN_HASH}),
    ]  # fmt: skip
    folder = tmp_path_factory.mktemp("near-api-js")
    (folder / "plan.json").write_text(json.dumps(plan))
    return run_script(SCRIPT, near_api_js, folder, nearrpc_server.url, "plan.json")


def test_transactions_answer_their_outcomes(answers: dict[str, Any]) -> None:
    assert R.transactions, "the sample stores no transaction"
    for tx in R.transactions:
        assert answers[f"tx:{tx.tx_hash}"] == {"returned": tx_result(tx)}
        assert answers[f"status:{tx.tx_hash}"] == {"returned": tx_status(tx)}
        for receipt_id in receipt_ids(tx):
            assert answers[f"receipt:{receipt_id}"] == {"returned": R.receipt(receipt_id)}


def test_chunks_answer_their_transactions(answers: dict[str, Any]) -> None:
    chunks = R.chunks_with_transactions()
    assert chunks, "no chunk of the sample holds a transaction"
    for chunk in chunks:
        answered = answers[f"chunk:{chunk.chunk_hash}"]["returned"]
        assert answered == view(chunk.view_json)
        assert (answered["header"]["chunk_hash"], answered["header"]["shard_id"]) == (chunk.chunk_hash, chunk.shard_id)


def test_validators_of_the_current_and_each_finished_epoch(answers: dict[str, Any]) -> None:
    assert answers["validators:current"] == {"returned": R.current_validators()}
    for epoch_id, last_height in R.finished_epochs():
        expected = {"returned": R.epoch_validators(epoch_id)}
        assert answers[f"validators:epoch:{epoch_id}"] == expected
        # by block: the last block of an epoch names that epoch's validators (nearcore's rule)
        assert answers[f"validators:block:{last_height}"] == expected


def test_the_changes_a_transfer_made(answers: dict[str, Any]) -> None:
    transfer = first_transfer()
    touched = answers["block_changes"]["returned"]
    assert touched["block_hash"] == hash_at(transfer.height)
    assert {"type": "account_touched", "account_id": transfer.signer_id} in touched["changes"]
    for name, account, height, cause in (
        ("signer_changes", transfer.signer_id, transfer.height,
         {"type": "transaction_processing", "tx_hash": transfer.tx_hash}),
        ("receiver_changes", transfer.receiver_id, transfer.receipt_height,
         {"type": "receipt_processing", "receipt_hash": transfer.receipt_id}),
    ):  # fmt: skip
        answer = answers[name]["returned"]
        assert answer["block_hash"] == hash_at(height)
        change = account_change(answer["changes"], account, cause)
        assert {k: v for k, v in change.items() if k != "account_id"} == stored_account(account, height)


def test_unknown_things_are_the_librarys_typed_errors(answers: dict[str, Any]) -> None:
    unknown_tx = answers["unknown_tx"]
    assert (unknown_tx["class"], unknown_tx["txHash"]) == ("UnknownTransactionError", UNKNOWN_HASH), unknown_tx
    unknown_receipt = answers["unknown_receipt"]
    assert (unknown_receipt["class"], unknown_receipt["receiptId"]) == ("UnknownReceiptError", UNKNOWN_HASH)
    unknown_chunk = answers["unknown_chunk"]
    assert (unknown_chunk["class"], unknown_chunk["chunkHash"]) == ("UnknownChunkError", UNKNOWN_HASH), unknown_chunk
    assert answers["unknown_epoch"]["class"] == "UnknownEpochError", answers["unknown_epoch"]
