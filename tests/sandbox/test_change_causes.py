"""The changes methods over blocks the sandbox made: every change of a key in a block, each with
its own cause, in the order the runtime committed them, as nearcore lists them (core/store
`TrieUpdate::commit` keeps one (cause, value) per commit of a key; chain/chain store
`get_state_changes` lists them all, `get_state_changes_in_block` one kind per key).

A transaction to its own signer is converted (the signer's balance and key nonce, under
`transaction_processing`) and its receipt runs (`receipt_processing`) in the same block; its gas
refund runs in the next."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import based58
import httpx
import pytest

from nearrpc.generated.methods import METHODS
from nearrpc.http.app import build_app
from nearrpc.sample import crypto
from nearrpc.sandbox.chain.changes import NO_RECORD
from nearrpc.sandbox.runtime.apply import SandboxRuntime
from nearrpc.sandbox.runtime.model import DeployContract, FunctionCall, Transfer
from nearrpc.spec import validate_component
from nearrpc.store import open_store, recorded_changes
from nearrpc.store.copy import copy_store
from tests.sandbox.chain_harness import ALICE, BOB, Sandbox
from tests.sandbox.runtime_support import NEAR, Chain, Signer
from tests.support.postgres import PostgresServer

COUNTER_WASM = Path(__file__).resolve().parents[2] / "service" / "sample" / "contracts" / "counter.wasm"
NEW_KEY = crypto.public_key("change-causes:new-key")
TGAS = 10**12


@pytest.fixture
def sandbox(sample_store: Path, tmp_path: Path) -> Iterator[Sandbox]:
    path = tmp_path / "sandbox.sqlite"
    shutil.copyfile(sample_store, path)
    box = Sandbox(path, runtime=SandboxRuntime())
    yield box
    box.close()


def _send(sandbox: Sandbox, receiver_id: str, actions: list[dict[str, Any]]) -> dict[str, Any]:
    """ALICE signs `actions` with her sample key; the final outcome `tx` answers."""
    tx_hash = sandbox.run(sandbox.chain.submit(sandbox.signed_by_alice(receiver_id, actions)))
    assert sandbox.run(sandbox.chain.wait(tx_hash, "FINAL", 10.0)) == "FINAL"
    outcome: dict[str, Any] = sandbox.result("tx", {"tx_hash": tx_hash, "sender_account_id": ALICE})
    return outcome


def _changes(sandbox: Sandbox, block_hash: str, changes_type: str, **asked: Any) -> list[dict[str, Any]]:
    params = {"changes_type": changes_type, "block_id": block_hash, **asked}
    answer = sandbox.ask("EXPERIMENTAL_changes", params)
    validate_component(METHODS["EXPERIMENTAL_changes"].response_schema, answer)  # the interface's shape
    changes: list[dict[str, Any]] = answer["result"]["changes"]
    assert sandbox.result("changes", params)["changes"] == changes  # the same method under its new name
    return changes


def _cause(change: dict[str, Any]) -> tuple[str, str]:
    cause = change["cause"]
    return cause["type"], cause.get("tx_hash") or cause.get("receipt_hash") or ""


def test_a_self_deploy_lists_the_charge_then_the_receipt(sandbox: Sandbox) -> None:
    code = COUNTER_WASM.read_bytes()
    before = sandbox.result("query", {"request_type": "view_account", "finality": "final", "account_id": ALICE})
    tx = _send(sandbox, ALICE, [{"DeployContract": {"code": base64.b64encode(code).decode()}}])
    conversion, receipt = tx["transaction_outcome"], tx["receipts_outcome"][0]
    block = conversion["block_hash"]
    assert receipt["block_hash"] == block  # a local receipt runs in its transaction's block

    changes = _changes(sandbox, block, "account_changes", account_ids=[ALICE])
    assert [_cause(c) for c in changes] == [
        ("transaction_processing", tx["transaction"]["hash"]),
        ("receipt_processing", receipt["id"]),
    ]
    charged, deployed = (c["change"] for c in changes)
    assert int(charged["amount"]) < int(before["amount"])  # the charge: the balance, not yet the code
    assert (charged["code_hash"], charged["storage_usage"]) == (before["code_hash"], before["storage_usage"])
    assert deployed["code_hash"] == based58.b58encode(hashlib.sha256(code).digest()).decode()
    assert deployed["storage_usage"] == before["storage_usage"] + len(code)
    assert {c["type"] for c in changes} == {"account_update"}

    (code_change,) = _changes(sandbox, block, "contract_code_changes", account_ids=[ALICE])
    assert _cause(code_change) == ("receipt_processing", receipt["id"])
    assert base64.b64decode(code_change["change"]["code_base64"]) == code

    public_key = crypto.public_key(f"full-access:{ALICE}")
    (nonce,) = _changes(
        sandbox, block, "single_access_key_changes", keys=[{"account_id": ALICE, "public_key": public_key}]
    )
    assert _cause(nonce) == ("transaction_processing", tx["transaction"]["hash"])
    assert nonce["change"]["access_key"]["nonce"] == tx["transaction"]["nonce"]

    # the kinds list each key once, however often it changed
    kinds = sandbox.result("EXPERIMENTAL_changes_in_block", {"block_id": block})["changes"]
    assert kinds == [
        {"type": "account_touched", "account_id": ALICE},
        {"type": "contract_code_touched", "account_id": ALICE},
        {"type": "access_key_touched", "account_id": ALICE},
    ]
    assert sandbox.result("block_effects", {"block_id": block})["changes"] == kinds


def test_a_self_add_key_and_its_refund(sandbox: Sandbox) -> None:
    permission: dict[str, Any] = {"FunctionCall": {"allowance": None, "receiver_id": BOB, "method_names": []}}
    tx = _send(
        sandbox, ALICE, [{"AddKey": {"public_key": NEW_KEY, "access_key": {"nonce": 0, "permission": permission}}}]
    )
    conversion = tx["transaction_outcome"]
    receipt, *refunds = tx["receipts_outcome"]
    block = conversion["block_hash"]

    keys = _changes(sandbox, block, "all_access_key_changes", account_ids=[ALICE])
    by_key = {c["change"]["public_key"]: _cause(c) for c in keys}
    assert by_key == {
        crypto.public_key(f"full-access:{ALICE}"): ("transaction_processing", tx["transaction"]["hash"]),
        NEW_KEY: ("receipt_processing", receipt["id"]),
    }
    accounts = _changes(sandbox, block, "account_changes", account_ids=[ALICE, ALICE])
    once = [("transaction_processing", tx["transaction"]["hash"]), ("receipt_processing", receipt["id"])]
    assert [_cause(c) for c in accounts] == once + once  # an account asked twice is answered twice

    # the gas refund (the sample's block price is below the purchase price) runs in a later block
    assert refunds
    for refund in refunds:
        assert refund["block_hash"] != block
        (refunded,) = _changes(sandbox, refund["block_hash"], "account_changes", account_ids=[ALICE])
        assert _cause(refunded) == ("receipt_processing", refund["id"])


def test_a_transfer_to_another_account_keeps_one_change_each(sandbox: Sandbox) -> None:
    tx = _send(sandbox, BOB, [{"Transfer": {"deposit": "1"}}])
    conversion, receipt = tx["transaction_outcome"], tx["receipts_outcome"][0]
    assert conversion["block_hash"] != receipt["block_hash"]
    (charged,) = _changes(sandbox, conversion["block_hash"], "account_changes", account_ids=[ALICE, BOB])
    assert _cause(charged) == ("transaction_processing", tx["transaction"]["hash"])
    (received,) = _changes(sandbox, receipt["block_hash"], "account_changes", account_ids=[ALICE, BOB])
    assert _cause(received) == ("receipt_processing", receipt["id"]) and received["change"]["account_id"] == BOB


def test_a_patch_in_a_busy_block_comes_last_as_migration(sandbox: Sandbox) -> None:
    """runtime lib.rs `apply_state_patch` commits a patch under `migration` after the receipts."""
    key = base64.b64encode(b"patched").decode()
    records = [{"Data": {"account_id": ALICE, "data_key": key, "value": base64.b64encode(b"1").decode()}}]
    sandbox.run(sandbox.chain.patch_state(records))
    head = sandbox.result("block", {"finality": "optimistic"})["header"]["height"]
    patched = next(
        block["header"]["hash"]
        for height in range(head, 0, -1)
        for block in (sandbox.result("block", {"block_id": height}),)
        if sandbox.result("EXPERIMENTAL_changes_in_block", {"block_id": height})["changes"]
    )
    (change,) = _changes(sandbox, patched, "data_changes", account_ids=[ALICE], key_prefix_base64="")
    assert change["cause"] == {"type": "migration"}
    assert change["change"] == {"account_id": ALICE, "key_base64": key, "value_base64": base64.b64encode(b"1").decode()}


def test_a_reverted_block_record_is_not_read_for_the_next(sandbox: Sandbox) -> None:
    snapshot = sandbox.run(sandbox.chain.snapshot())
    tx = _send(sandbox, ALICE, [{"Transfer": {"deposit": "1"}}])
    height = sandbox.result("block", {"block_id": tx["transaction_outcome"]["block_hash"]})["header"]["height"]
    sandbox.run(sandbox.chain.revert(snapshot))
    head = sandbox.result("block", {"finality": "optimistic"})["header"]["height"]
    sandbox.run(sandbox.chain.fast_forward(height - head))
    assert sandbox.reader().kept_answer(recorded_changes(height)) == NO_RECORD  # the old record is gone
    assert sandbox.result("EXPERIMENTAL_changes_in_block", {"block_id": height})["changes"] == []
    assert _changes(sandbox, sandbox.result("block", {"block_id": height})["header"]["hash"], "account_changes",
                    account_ids=[ALICE]) == []  # fmt: skip


def test_a_self_call_commits_the_charge_the_receipt_and_the_contract_reward() -> None:
    """At protocol 84 a contract earns burnt_gas_reward of its gas: after the receipt's own commit
    the account is written once more, under action_receipt_gas_reward (runtime lib.rs
    `apply_action_receipt`)."""
    chain = Chain()
    counter = Signer("counter.test")
    chain.add_account(counter, 10 * NEAR)
    chain.run([counter.sign("counter.test", [DeployContract(COUNTER_WASM.read_bytes())], chain.block_hash)])
    signed = counter.sign("counter.test", [FunctionCall("increment", b"", 10 * TGAS, 0)], chain.block_hash)
    block = chain.block([signed])
    (receipt,) = block.receipts
    commits = [(dict(c.cause), sorted(c.accounts), sorted(c.access_keys), sorted(c.data)) for c in block.commits]
    key = [("counter.test", counter.public_key)]
    assert [commit[:3] for commit in commits] == [
        ({"type": "transaction_processing", "tx_hash": signed.hash}, ["counter.test"], key),
        ({"type": "receipt_processing", "receipt_hash": receipt.receipt_id}, ["counter.test"], []),
        ({"type": "action_receipt_gas_reward", "receipt_hash": receipt.receipt_id}, ["counter.test"], []),
    ]
    assert commits[1][3] and not commits[0][3] and not commits[2][3]  # the call's storage write, in its receipt
    charged, ran, rewarded = (c.accounts["counter.test"] for c in block.commits)
    assert charged is not None and ran is not None and rewarded is not None
    assert rewarded.amount > ran.amount  # the reward comes after the receipt's own write
    assert block.changes.accounts["counter.test"] == rewarded  # the rows keep the last value


def test_a_failed_receipt_commits_nothing_of_its_own() -> None:
    chain = Chain()
    caller = Signer("caller.test")
    chain.add_account(caller, 10 * NEAR)
    signed = caller.sign("caller.test", [FunctionCall("missing", b"", 10 * TGAS, 0)], chain.block_hash)
    block = chain.block([signed])
    assert [dict(c.cause)["type"] for c in block.commits] == ["transaction_processing"]


def test_a_refund_and_an_action_receipt_to_one_account_in_one_block() -> None:
    """Alice's call to bob (who has no contract) refunds her unused gas in the block where bob's
    transfer to alice arrives: alice's account changes twice there, each receipt under its own
    cause, in the order applied."""
    chain = Chain()
    alice, bob = Signer("alice.test"), Signer("bob.test")
    chain.add_account(alice, 10 * NEAR)
    chain.add_account(bob, 10 * NEAR)
    chain.block([alice.sign("bob.test", [FunctionCall("missing", b"", 10 * TGAS, 0)], chain.block_hash)])
    chain.block([bob.sign("alice.test", [Transfer(NEAR)], chain.block_hash)])
    block = chain.block()
    executed = [(r.view["receiver_id"], r.view["predecessor_id"], r.receipt_id) for r in block.receipts]
    to_alice = [(predecessor, receipt_id) for receiver, predecessor, receipt_id in executed if receiver == "alice.test"]
    assert [predecessor for predecessor, _ in to_alice] == ["bob.test", "system"]  # the transfer, then the refund
    causes = [dict(c.cause) for c in block.commits if "alice.test" in c.accounts]
    assert causes == [{"type": "receipt_processing", "receipt_hash": receipt_id} for _, receipt_id in to_alice]


def test_a_copy_on_postgresql_answers_the_same(sandbox: Sandbox, postgres: PostgresServer) -> None:
    """The record is a kept answer: `store copy` carries it, and the PostgreSQL backend serves it."""
    tx = _send(sandbox, ALICE, [{"DeployContract": {"code": base64.b64encode(COUNTER_WASM.read_bytes()).decode()}}])
    block = tx["transaction_outcome"]["block_hash"]
    asked = [
        ("EXPERIMENTAL_changes", {"changes_type": "account_changes", "account_ids": [ALICE], "block_id": block}),
        ("EXPERIMENTAL_changes", {"changes_type": "contract_code_changes", "account_ids": [ALICE], "block_id": block}),
        ("EXPERIMENTAL_changes_in_block", {"block_id": block}),
    ]
    here = [sandbox.ask(method, params) for method, params in asked]
    assert len(here[0]["result"]["changes"]) == 2
    url = postgres.create_database()
    copy_store(sandbox.store, url)

    async def there() -> list[dict[str, Any]]:
        app = build_app(open_store(url, "serve"))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://nearrpc") as client:
                bodies = [{"jsonrpc": "2.0", "id": 1, "method": method, "params": params} for method, params in asked]
                return [(await client.post("/", json=body)).json() for body in bodies]

    assert asyncio.run(there()) == here
