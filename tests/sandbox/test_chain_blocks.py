"""The sandbox's chain writer over the sample store (with the stand-in runtime): blocks made for
a transaction and read back through the read path as any stored block is: `block`, `chunk`,
`tx`, `EXPERIMENTAL_receipt`, the changes methods and the account views."""

from __future__ import annotations

import asyncio
import itertools
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from nearrpc.sandbox.runtime.model import TransactionRefused
from tests.sandbox.chain_fakes import FEE_GAS
from tests.sandbox.chain_harness import ALICE, BOB, Sandbox

NEAR = 10**24


@pytest.fixture
def sandbox(sample_store: Path, tmp_path: Path) -> Iterator[Sandbox]:
    path = tmp_path / "sandbox.sqlite"
    shutil.copyfile(sample_store, path)
    box = Sandbox(path)
    yield box
    box.close()


def _amount(sandbox: Sandbox, account_id: str, finality: str = "final") -> int:
    return int(sandbox.result("EXPERIMENTAL_view_account", {"finality": finality, "account_id": account_id})["amount"])


def test_a_transfer_is_final_and_read_as_any_block(sandbox_on_each_backend: Sandbox) -> None:
    sandbox = sandbox_on_each_backend
    head = sandbox.result("block", {"finality": "optimistic"})["header"]
    bob_before = _amount(sandbox, BOB, "optimistic")
    tx_hash = sandbox.run(sandbox.chain.submit(sandbox.transfer(3 * NEAR)))
    assert sandbox.run(sandbox.chain.wait(tx_hash, "FINAL", 10.0)) == "FINAL"

    # the transfer's outcome, as `tx` serves it
    tx = sandbox.result(
        "EXPERIMENTAL_tx_status", {"tx_hash": tx_hash, "sender_account_id": ALICE, "wait_until": "FINAL"}
    )
    assert tx["final_execution_status"] == "FINAL"
    assert tx["status"] == {"SuccessValue": ""}
    [receipt_outcome] = tx["receipts_outcome"]
    assert tx["transaction_outcome"]["outcome"]["receipt_ids"] == [receipt_outcome["id"]]
    included = sandbox.result("block", {"block_id": tx["transaction_outcome"]["block_hash"]})["header"]
    executed = sandbox.result("block", {"block_id": receipt_outcome["block_hash"]})["header"]
    assert (included["height"], executed["height"]) == (head["height"] + 1, head["height"] + 2)
    assert tx["receipts"][0]["receipt_id"] == receipt_outcome["id"]
    assert sandbox.result("EXPERIMENTAL_receipt", {"receipt_id": receipt_outcome["id"]}) == tx["receipts"][0]

    # the chunk of the signer's shard includes it; the receiver's chunk in the next block carries the receipt
    chunks = [sandbox.result("chunk", {"chunk_id": c["chunk_hash"]}) for c in included_chunks(sandbox, included)]
    assert [t["hash"] for c in chunks for t in c["transactions"]] == [tx_hash]

    # the finality rule: automine made the blocks that make the receipt's block final
    final = sandbox.result("block", {"finality": "final"})["header"]
    assert final["height"] == executed["height"]
    optimistic = sandbox.result("block", {"finality": "optimistic"})["header"]
    assert optimistic["height"] == final["height"] + 2
    assert optimistic["last_final_block"] == final["hash"]

    # the new state, through the views and the changes methods
    assert _amount(sandbox, BOB) == bob_before + 3 * NEAR
    changes = sandbox.result(
        "EXPERIMENTAL_changes",
        {"block_id": executed["hash"], "changes_type": "account_changes", "account_ids": [BOB]},
    )
    assert [c["change"]["amount"] for c in changes["changes"]] == [str(bob_before + 3 * NEAR)]


def included_chunks(sandbox: Sandbox, header: dict[str, object]) -> list[dict[str, str]]:
    block = sandbox.result("block", {"block_id": header["hash"]})
    chunks: list[dict[str, str]] = block["chunks"]
    return chunks


def test_blocks_follow_their_parents(sandbox: Sandbox) -> None:
    head = sandbox.result("block", {"finality": "optimistic"})["header"]
    sandbox.run(sandbox.chain.fast_forward(3))
    blocks = [sandbox.result("block", {"block_id": head["height"] + i}) for i in range(4)]
    for parent, child in itertools.pairwise(blocks):
        before, after = parent["header"], child["header"]
        assert after["prev_hash"] == before["hash"]
        assert after["height"] == before["height"] + 1
        assert int(after["timestamp"]) > int(before["timestamp"])
        assert after["last_ds_final_block"] == before["hash"]
        assert after["last_final_block"] == before["last_ds_final_block"]
        assert after["block_ordinal"] == before["block_ordinal"] + 1
        assert [c["height_included"] for c in child["chunks"]] == [after["height"]] * len(child["chunks"])
        assert all(c["prev_block_hash"] == before["hash"] for c in child["chunks"])


def test_fees_move_the_gas_price_and_the_supply(sandbox: Sandbox) -> None:
    """The chunk after a busy block reports its gas and burnt balance; the supply drops by it."""
    tx_hash = sandbox.run(sandbox.chain.submit(sandbox.transfer(NEAR)))
    sandbox.run(sandbox.chain.wait(tx_hash, "FINAL", 10.0))
    tx = sandbox.result("tx", {"tx_hash": tx_hash, "sender_account_id": ALICE})
    included = sandbox.result("block", {"block_id": tx["transaction_outcome"]["block_hash"]})
    after = sandbox.result("block", {"block_id": included["header"]["height"] + 1})
    price = int(included["header"]["gas_price"])
    parent_price = int(sandbox.result("block", {"block_id": included["header"]["prev_hash"]})["header"]["gas_price"])
    burnt = sum(int(c["balance_burnt"]) for c in after["chunks"])
    assert burnt == FEE_GAS * parent_price
    assert sum(c["gas_used"] for c in after["chunks"]) == FEE_GAS
    assert int(after["header"]["total_supply"]) == int(included["header"]["total_supply"]) - burnt
    assert int(after["header"]["gas_price"]) <= price  # a nearly idle block lowers the price (down to the minimum)
    outcome_root = next(c["outcome_root"] for c in after["chunks"] if c["gas_used"])
    assert outcome_root != "11111111111111111111111111111111"


def test_a_transaction_sent_again_answers_its_hash(sandbox: Sandbox) -> None:
    signed = sandbox.transfer(NEAR)
    tx_hash = sandbox.run(sandbox.chain.submit(signed))
    sandbox.run(sandbox.chain.wait(tx_hash, "FINAL", 10.0))
    height = sandbox.result("block", {"finality": "optimistic"})["header"]["height"]
    assert sandbox.run(sandbox.chain.submit(signed)) == tx_hash
    sandbox.run(sandbox.chain.settled())
    assert sandbox.result("block", {"finality": "optimistic"})["header"]["height"] == height


def test_refusals_come_from_the_chain_and_the_runtime(sandbox: Sandbox) -> None:
    old = sandbox.result("block", {"block_id": 5})["header"]["hash"]  # 105 heights below the head: past 100
    with pytest.raises(TransactionRefused) as expired:
        sandbox.run(sandbox.chain.submit(sandbox.transfer(NEAR, block_hash=old)))
    assert expired.value.error == "Expired"
    unknown = "4" * 44
    with pytest.raises(TransactionRefused) as unknown_block:
        sandbox.run(sandbox.chain.submit(sandbox.transfer(NEAR, block_hash=unknown)))
    assert unknown_block.value.error == "Expired"
    recent = sandbox.result("block", {"block_id": 20})["header"]["hash"]  # within the period
    tx_hash = sandbox.run(sandbox.chain.submit(sandbox.transfer(NEAR, block_hash=recent)))
    assert sandbox.run(sandbox.chain.wait(tx_hash, "EXECUTED_OPTIMISTIC", 10.0)) in {
        "EXECUTED_OPTIMISTIC",
        "EXECUTED",
        "FINAL",
    }
    sandbox.nonce -= 1  # the same nonce again
    with pytest.raises(TransactionRefused) as nonce:
        sandbox.run(sandbox.chain.submit(sandbox.transfer(2 * NEAR)))
    assert "InvalidNonce" in nonce.value.error


def test_wait_reports_what_was_reached_on_a_timeout(sandbox: Sandbox) -> None:
    assert sandbox.run(sandbox.chain.wait("4" * 44, "INCLUDED", 0.05)) == "NONE"
    with pytest.raises(ValueError, match="TxExecutionStatus"):
        sandbox.run(sandbox.chain.wait("4" * 44, "DONE", 0.05))


def test_a_runtime_that_fails_drops_the_transaction_not_the_chain(sandbox: Sandbox) -> None:
    sandbox.runtime.broken_deposit = 13
    start = sandbox.result("block", {"finality": "optimistic"})["header"]["height"]
    signed = [sandbox.transfer(13), sandbox.transfer(NEAR)]

    async def both() -> list[str]:
        return list(await asyncio.gather(*(sandbox.chain.submit(s) for s in signed)))

    broken, fine = sandbox.run(both())  # queued together: one batch
    assert sandbox.run(sandbox.chain.wait(broken, "FINAL", 5.0)) == "NONE"  # at once: it was dropped
    assert sandbox.run(sandbox.chain.wait(fine, "FINAL", 5.0)) == "FINAL"
    tx = sandbox.result("tx", {"tx_hash": fine, "sender_account_id": ALICE})
    block = sandbox.result("block", {"block_id": tx["transaction_outcome"]["block_hash"]})
    chunks = [sandbox.result("chunk", {"chunk_id": c["chunk_hash"]}) for c in block["chunks"]]
    assert [t["hash"] for c in chunks for t in c["transactions"]] == [fine]
    assert block["header"]["height"] == start + 1  # the block both were queued for


def test_the_supply_drops_by_what_the_runtime_says_left_it(sandbox: Sandbox) -> None:
    """An outcome's tokens_burnt may count more than leaves the supply (a contract's reward): the
    chunks' balance_burnt add up to the block's total as the runtime gives it."""
    sandbox.runtime.unburnt = 1000
    tx_hash = sandbox.run(sandbox.chain.submit(sandbox.transfer(NEAR)))
    sandbox.run(sandbox.chain.wait(tx_hash, "FINAL", 10.0))
    tx = sandbox.result("tx", {"tx_hash": tx_hash, "sender_account_id": ALICE})
    executed = sandbox.result("block", {"block_id": tx["receipts_outcome"][0]["block_hash"]})
    after = sandbox.result("block", {"block_id": executed["header"]["height"] + 1})
    receipt_burnt = int(tx["receipts_outcome"][0]["outcome"]["tokens_burnt"])
    assert sum(int(c["balance_burnt"]) for c in after["chunks"]) == receipt_burnt - 1000
    assert int(after["header"]["total_supply"]) == int(executed["header"]["total_supply"]) - receipt_burnt + 1000


def test_what_the_store_refuses_is_dropped_not_the_chain(sandbox: Sandbox) -> None:
    sandbox.runtime.unstorable_deposit = 17
    start = sandbox.result("block", {"finality": "optimistic"})["header"]["height"]
    refused = sandbox.run(sandbox.chain.submit(sandbox.transfer(17)))
    assert sandbox.run(sandbox.chain.wait(refused, "FINAL", 5.0)) == "NONE"
    assert sandbox.result("block", {"block_id": start + 1})["header"]["height"] == start + 1  # made without it
    fine = sandbox.run(sandbox.chain.submit(sandbox.transfer(NEAR)))
    assert sandbox.run(sandbox.chain.wait(fine, "FINAL", 5.0)) == "FINAL"


def test_under_automine_any_wait_returns_a_final_transaction(sandbox: Sandbox) -> None:
    tx_hash = sandbox.run(sandbox.chain.submit(sandbox.transfer(NEAR)))
    assert sandbox.run(sandbox.chain.wait(tx_hash, "INCLUDED", 10.0)) == "FINAL"
    tx = sandbox.result("tx", {"tx_hash": tx_hash, "sender_account_id": ALICE, "wait_until": "FINAL"})
    final = sandbox.result("block", {"finality": "final"})["header"]
    assert final["hash"] == tx["receipts_outcome"][0]["block_hash"]
