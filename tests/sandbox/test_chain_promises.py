"""A cross-contract call through the chain writer and the read methods on the sample chain: the
transaction is executed once its last receipt (a callback that waited for its data) ran, `tx`
lists the receipts' outcomes depth first from the transaction (chain.rs
`get_recursive_transaction_results`), and the final status follows promise_return's chain to the
callback's value (views.rs FinalExecutionStatus)."""

from __future__ import annotations

import base64
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nearrpc.generated.methods import METHODS
from nearrpc.sandbox.runtime.apply import SandboxRuntime
from nearrpc.sandbox.runtime.ids import IdMaker
from nearrpc.spec import validate_component
from tests.sandbox.chain_harness import ALICE, Sandbox
from tests.sandbox.test_apply_promises import CALLEE, caller_contract

NEAR = 10**24
CALLER_ID, CALLEE_ID = f"caller.{ALICE}", f"callee.{ALICE}"


@pytest.fixture
def sandbox(sample_store: Path, tmp_path: Path) -> Iterator[Sandbox]:
    path = tmp_path / "sandbox.sqlite"
    shutil.copyfile(sample_store, path)
    box = Sandbox(path, runtime=SandboxRuntime())
    yield box
    box.close()


def _send(sandbox: Sandbox, receiver_id: str, actions: list[Any], wait_until: str) -> str:
    tx_hash = sandbox.run(sandbox.chain.submit(sandbox.signed_by_alice(receiver_id, actions)))
    # automine runs the chain on until it is final, so the wait may answer more than asked
    assert sandbox.run(sandbox.chain.wait(tx_hash, wait_until, 10.0)) in (wait_until, "FINAL")
    return tx_hash


def _create(sandbox: Sandbox, account_id: str, code: bytes) -> None:
    actions = [
        "CreateAccount",
        {"Transfer": {"deposit": str(5 * NEAR)}},
        {"DeployContract": {"code": base64.b64encode(code).decode()}},
    ]
    tx_hash = _send(sandbox, account_id, actions, "EXECUTED_OPTIMISTIC")
    status = sandbox.result("tx", {"tx_hash": tx_hash, "sender_account_id": ALICE})["status"]
    assert status == {"SuccessValue": ""}, status


def test_a_callback_chain_through_the_read_methods(sandbox: Sandbox) -> None:
    _create(sandbox, CALLEE_ID, CALLEE)
    _create(sandbox, CALLER_ID, caller_contract(CALLEE_ID, CALLER_ID))
    call = {"FunctionCall": {"method_name": "forward_then", "args": "", "gas": 30 * 10**12, "deposit": "0"}}
    tx_hash = _send(sandbox, CALLER_ID, [call], "EXECUTED_OPTIMISTIC")
    tx = sandbox.result("EXPERIMENTAL_tx_status", {"tx_hash": tx_hash, "sender_account_id": ALICE})
    validate_component(METHODS["EXPERIMENTAL_tx_status"].response_schema, {"jsonrpc": "2.0", "id": 1, "result": tx})
    # the caller returned its callback, which returned the callee's value
    assert tx["status"] == {"SuccessValue": base64.b64encode(b"hi").decode()}
    outcomes = {outcome["id"]: outcome for outcome in tx["receipts_outcome"]}
    first = tx["receipts_outcome"][0]
    callee_id, callback_id, *refunds = first["outcome"]["receipt_ids"]
    assert first["outcome"]["status"] == {"SuccessReceiptId": callback_id}
    # depth first: each outcome, then those of the receipts it made, in their order
    expected = [first["id"], callee_id, *outcomes[callee_id]["outcome"]["receipt_ids"]]
    expected += [callback_id, *outcomes[callback_id]["outcome"]["receipt_ids"], *refunds]
    assert [outcome["id"] for outcome in tx["receipts_outcome"]] == expected
    assert [receipt["receipt_id"] for receipt in tx["receipts"]] == expected
    # the callback ran a block after the callee (its data travelled between them)
    heights = {
        receipt_id: sandbox.result("block", {"block_id": outcomes[receipt_id]["block_hash"]})["header"]["height"]
        for receipt_id in (callee_id, callback_id)
    }
    assert heights[callback_id] == heights[callee_id] + 1
    callback_view = sandbox.result("EXPERIMENTAL_receipt", {"receipt_id": callback_id})
    assert callback_view["predecessor_id"] == CALLER_ID
    (data_id,) = callback_view["receipt"]["Action"]["input_data_ids"]
    # the data receipt has no outcome, but EXPERIMENTAL_receipt answers it (its id: the callee's
    # new receipt after its gas refund)
    callee_view = sandbox.result("EXPERIMENTAL_receipt", {"receipt_id": callee_id})
    assert callee_view["receipt"]["Action"]["output_data_receivers"] == [{"data_id": data_id, "receiver_id": CALLER_ID}]
    header = sandbox.result("block", {"block_id": outcomes[callee_id]["block_hash"]})["header"]
    ids = IdMaker(header["hash"], header["height"], header["latest_protocol_version"])
    data_receipt_id = ids.receipt_of_receipt(callee_id, len(outcomes[callee_id]["outcome"]["receipt_ids"]))
    assert sandbox.result("EXPERIMENTAL_receipt", {"receipt_id": data_receipt_id}) == {
        "predecessor_id": CALLEE_ID,
        "receiver_id": CALLER_ID,
        "receipt_id": data_receipt_id,
        "receipt": {"Data": {"data_id": data_id, "data": base64.b64encode(b"hi").decode(), "is_promise_resume": False}},
        "priority": 0,
    }


def test_the_status_waits_for_the_callback_and_its_refund(sample_store: Path, tmp_path: Path) -> None:
    path = tmp_path / "hourly.sqlite"
    shutil.copyfile(sample_store, path)
    box = Sandbox(path, block_time=3600, runtime=SandboxRuntime())  # blocks only when asked for
    try:
        for account_id, code in ((CALLEE_ID, CALLEE), (CALLER_ID, caller_contract(CALLEE_ID, CALLER_ID))):
            actions: list[Any] = ["CreateAccount", {"Transfer": {"deposit": str(5 * NEAR)}}]
            actions.append({"DeployContract": {"code": base64.b64encode(code).decode()}})
            box.run(box.chain.submit(box.signed_by_alice(account_id, actions)))
            box.run(box.chain.fast_forward(3))
        call = {"FunctionCall": {"method_name": "call_then", "args": "", "gas": 30 * 10**12, "deposit": "0"}}
        tx_hash = box.run(box.chain.submit(box.signed_by_alice(CALLER_ID, [call])))
        seen = []
        for _ in range(8):
            box.run(box.chain.fast_forward(1))
            seen.append(box.run(box.chain.status(tx_hash)))
            if seen[-1].startswith("EXECUTED") or seen[-1] == "FINAL":
                break
        # included, the caller's receipt, the callee's (the callback waits), the callback, the
        # callback's gas refund: executed only with the last of them
        assert len(seen) == 5 and all(status.startswith("INCLUDED") for status in seen[:-1]), seen
        tx = box.result("tx", {"tx_hash": tx_hash, "sender_account_id": ALICE, "wait_until": "NONE"})
        heights = [
            box.result("block", {"block_id": outcome["block_hash"]})["header"]["height"]
            for outcome in tx["receipts_outcome"]
        ]
        included = box.result("block", {"block_id": tx["transaction_outcome"]["block_hash"]})["header"]["height"]
        assert max(heights) == included + 4
    finally:
        box.close()


def test_a_yield_waits_under_automine_until_a_later_transaction_resumes_it(sandbox: Sandbox) -> None:
    _create(sandbox, CALLEE_ID, CALLEE)
    _create(sandbox, CALLER_ID, caller_contract(CALLEE_ID, CALLER_ID))

    def call(method: str) -> str:
        action = {"FunctionCall": {"method_name": method, "args": "", "gas": 30 * 10**12, "deposit": "0"}}
        return str(sandbox.run(sandbox.chain.submit(sandbox.signed_by_alice(CALLER_ID, [action]))))

    yielded = call("yield")
    sandbox.run(sandbox.chain.settled())
    # automine makes no blocks for a transaction waiting on a yield alone: still included only
    assert sandbox.run(sandbox.chain.status(yielded)).startswith("INCLUDED")
    resumed = call("resume")
    assert sandbox.run(sandbox.chain.wait(resumed, "EXECUTED_OPTIMISTIC", 10.0)) in ("EXECUTED_OPTIMISTIC", "FINAL")
    assert sandbox.run(sandbox.chain.wait(yielded, "EXECUTED_OPTIMISTIC", 10.0)) in ("EXECUTED_OPTIMISTIC", "FINAL")
    tx = sandbox.result("EXPERIMENTAL_tx_status", {"tx_hash": yielded, "sender_account_id": ALICE})
    validate_component(METHODS["EXPERIMENTAL_tx_status"].response_schema, {"jsonrpc": "2.0", "id": 1, "result": tx})
    assert tx["status"] == {"SuccessValue": base64.b64encode(b"hi").decode()}
    yield_receipt = next(receipt for receipt in tx["receipts"] if receipt["receipt"]["Action"]["is_promise_yield"])
    assert yield_receipt["receiver_id"] == CALLER_ID
