"""A transfer on the sample chain's head (protocol 87) through the chain writer and the sandbox's own
runtime: the outcomes' gas and tokens follow nearcore's fee formula at the block's gas price, the
price surplus of the receipt's gas comes back by a refund, balances move by the amount plus the
fees burnt, and the total supply drops by the tokens burnt alone across the blocks it spans."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nearrpc.generated.methods import METHODS
from nearrpc.sandbox.runtime.apply import SandboxRuntime
from nearrpc.spec import validate_component
from tests.conftest import reference_dir
from tests.sandbox.chain_harness import ALICE, BOB, Sandbox
from tests.support.upstream_schema import UPSTREAM_1_2_13, check_upstream

NEAR = 10**24


@pytest.fixture
def sandbox(sample_store: Path, tmp_path: Path) -> Iterator[Sandbox]:
    path = tmp_path / "sandbox.sqlite"
    shutil.copyfile(sample_store, path)
    box = Sandbox(path, runtime=SandboxRuntime())
    yield box
    box.close()


def _amount(sandbox: Sandbox, account_id: str, block_id: int) -> int:
    account = sandbox.result("query", {"request_type": "view_account", "block_id": block_id, "account_id": account_id})
    return int(account["amount"])


def _header(sandbox: Sandbox, block_id: str | int) -> dict[str, Any]:
    header: dict[str, Any] = sandbox.result("block", {"block_id": block_id})["header"]
    return header


def _price(sandbox: Sandbox, block_hash: str) -> int:
    # a chunk is applied at the gas price of its block's parent (the price the runtime is given)
    return int(_header(sandbox, _header(sandbox, block_hash)["prev_hash"])["gas_price"])


def test_a_transfer_on_the_sample_head_burns_at_the_block_price(sandbox: Sandbox) -> None:
    config = sandbox.result("EXPERIMENTAL_protocol_config", {"finality": "final"})
    assert config["protocol_version"] == 87
    runtime = config["runtime_config"]
    costs = runtime["transaction_costs"]
    purchase_price = int(runtime["min_gas_purchase_price"])
    receipt_fee, transfer_fee = (
        costs["action_receipt_creation_config"],
        costs["action_creation_config"]["transfer_cost"],
    )
    send = receipt_fee["send_not_sir"] + transfer_fee["send_not_sir"]
    execution = receipt_fee["execution"] + transfer_fee["execution"]

    start = _header(sandbox, sandbox.result("block", {"finality": "optimistic"})["header"]["hash"])
    alice_before, bob_before = _amount(sandbox, ALICE, start["height"]), _amount(sandbox, BOB, start["height"])
    transfer = sandbox.signed_by_alice(BOB, [{"Transfer": {"deposit": str(2 * NEAR)}}])
    tx_hash = sandbox.run(sandbox.chain.submit(transfer))
    assert sandbox.run(sandbox.chain.wait(tx_hash, "FINAL", 10.0)) == "FINAL"
    tx = sandbox.result("tx", {"tx_hash": tx_hash, "sender_account_id": ALICE})
    # V4 metadata (a contract per action) is what the spec's ExecutionMetadataView allows
    validate_component(METHODS["tx"].response_schema, {"jsonrpc": "2.0", "id": 1, "result": tx})
    if (reference_dir() / UPSTREAM_1_2_13).is_file():
        check_upstream(reference_dir(), "tx", {"jsonrpc": "2.0", "id": "1", "result": tx})

    conversion = tx["transaction_outcome"]
    receipt, refund = tx["receipts_outcome"]
    assert receipt["outcome"]["metadata"] == {"version": 4, "gas_profile": [], "contracts": [None]}
    conversion_price = _price(sandbox, conversion["block_hash"])
    receipt_price = _price(sandbox, receipt["block_hash"])
    assert receipt_price < purchase_price  # the sample's gas price is a tenth of the purchase price
    assert conversion["outcome"]["gas_burnt"] == send
    assert int(conversion["outcome"]["tokens_burnt"]) == send * conversion_price
    assert receipt["outcome"]["gas_burnt"] == execution
    assert int(receipt["outcome"]["tokens_burnt"]) == execution * receipt_price
    assert receipt["outcome"]["receipt_ids"] == [refund["id"]]
    assert refund["outcome"]["executor_id"] == ALICE and refund["outcome"]["tokens_burnt"] == "0"
    refund_receipt = sandbox.result("EXPERIMENTAL_receipt", {"receipt_id": refund["id"]})
    refunded = int(refund_receipt["receipt"]["Action"]["actions"][0]["Transfer"]["deposit"])
    assert refunded == (purchase_price - receipt_price) * execution

    # one block past the refund's, so its chunk's balance_burnt reaches a block's total supply
    last = _header(sandbox, refund["block_hash"])["height"]
    sandbox.run(sandbox.chain.fast_forward(1))
    fees = send * conversion_price + execution * receipt_price
    assert _amount(sandbox, ALICE, last) == alice_before - 2 * NEAR - fees
    assert _amount(sandbox, BOB, last) == bob_before + 2 * NEAR
    included = _header(sandbox, conversion["block_hash"])
    burnt = sum(int(o["outcome"]["tokens_burnt"]) for o in (conversion, receipt, refund))
    assert burnt == fees
    assert int(_header(sandbox, last + 1)["total_supply"]) == int(included["total_supply"]) - burnt
