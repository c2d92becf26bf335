"""The sample chain's transactions, receipts, outcomes, chunks and validators: signatures and
hashes recomputed independently (cryptography's ed25519, hashlib), sums and links held to the
blocks and rows the chain serves, every view held to nearcore's published 1.2.13 schemas."""

from __future__ import annotations

import base64
import hashlib
import itertools
from collections import defaultdict
from pathlib import Path
from typing import Any

import based58
import orjson
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from nearrpc.nearcore.transaction import signed_transaction_bytes, transaction_bytes
from nearrpc.sample import SampleChain
from nearrpc.sample.execution import outcome_leaf
from nearrpc.sample.merkle import merklize, root_from_path
from tests.support.sample_facts import SampleFacts
from tests.support.upstream_schema import check_component


def raw(text: str) -> bytes:
    return based58.b58decode(text.partition(":")[2].encode() if ":" in text else text.encode())


def load(data: bytes) -> dict[str, Any]:
    value: dict[str, Any] = orjson.loads(data)
    return value


@pytest.fixture(scope="module")
def statuses(chain: SampleChain) -> list[dict[str, Any]]:
    return [load(tx.view_json) for tx in chain.transactions]


@pytest.fixture(scope="module")
def chunk_views(chain: SampleChain) -> list[dict[str, Any]]:
    return [load(c.view_json) for c in chain.chunks]


@pytest.fixture(scope="module")
def prev_hash_of(views: list[dict[str, Any]]) -> dict[str, str]:
    return {v["header"]["hash"]: v["header"]["prev_hash"] for v in views}


def tx_bytes(tx: dict[str, Any], block_hash: str) -> bytes:
    return transaction_bytes(
        signer_id=tx["signer_id"],
        public_key=tx["public_key"],
        nonce=tx["nonce"],
        receiver_id=tx["receiver_id"],
        block_hash=block_hash,
        actions=tx["actions"],
    )


def test_every_kind_of_transaction_is_there(facts: SampleFacts) -> None:
    kinds = {kind for tx in facts.transactions for kind in tx.actions}
    assert kinds == {"Transfer", "FunctionCall", "CreateAccount", "AddKey", "DeleteKey", "DeleteAccount", "Stake"}
    methods = {tx.method_name for tx in facts.transactions} - {None}
    assert methods == {"increment", "decrement", "get_num", "ft_transfer", "storage_unregister"}
    assert len(facts.transactions) > 200


def test_each_hash_is_sha256_of_the_borsh_transaction_on_the_parent_block(
    chain: SampleChain, statuses: list[dict[str, Any]], prev_hash_of: dict[str, str]
) -> None:
    for stored, status in zip(chain.transactions, statuses, strict=True):
        tx = status["transaction"]
        digest = hashlib.sha256(tx_bytes(tx, prev_hash_of[stored.block_hash])).digest()
        assert based58.b58encode(digest).decode() == tx["hash"] == stored.tx_hash


def test_each_signature_verifies_over_its_hash_with_the_signers_key(statuses: list[dict[str, Any]]) -> None:
    for status in statuses:
        tx = status["transaction"]
        key = Ed25519PublicKey.from_public_bytes(raw(tx["public_key"]))
        key.verify(raw(tx["signature"]), raw(tx["hash"]))
    # A signature over another transaction's hash does not verify: the check can fail.
    first, second = statuses[0]["transaction"], statuses[1]["transaction"]
    with pytest.raises(InvalidSignature):
        Ed25519PublicKey.from_public_bytes(raw(first["public_key"])).verify(
            raw(first["signature"]), raw(second["hash"])
        )


def test_implicit_accounts_sign_with_the_key_their_id_spells(facts: SampleFacts) -> None:
    signed = [tx for tx in facts.transactions if tx.signer_id in facts.implicit_accounts]
    assert signed
    for tx in signed:
        if "AddKey" not in tx.actions:
            assert raw(tx.public_key).hex() == tx.signer_id


def test_nonces_match_the_access_key_rows(chain: SampleChain, facts: SampleFacts) -> None:
    """A key's row at a height holds the nonce of the last transaction it signed there, and
    within a key the nonces rise by one per transaction."""
    last: dict[tuple[str, str, int], int] = {}
    by_key: dict[tuple[str, str], list[int]] = defaultdict(list)
    for tx in facts.transactions:
        last[(tx.signer_id, tx.public_key, tx.height)] = tx.nonce
        by_key[(tx.signer_id, tx.public_key)].append(tx.nonce)
    rows = {(r.account_id, r.public_key, r.height): r.view_json for r in chain.access_keys}
    for where, nonce in last.items():
        row = rows[where]
        if row is None:  # the transaction deleted its signer, and its keys with it
            assert facts.deleted_at(where[0]) == where[2], where
            continue
        assert load(row)["nonce"] == nonce, where
    for nonces in by_key.values():
        assert nonces == list(range(nonces[0], nonces[0] + len(nonces)))


def test_each_chunk_burns_what_its_outcomes_burn(
    chunk_views: list[dict[str, Any]], statuses: list[dict[str, Any]]
) -> None:
    by_hash = {s["transaction"]["hash"]: s for s in statuses}
    busy = 0
    for view in chunk_views:
        outcomes = [
            o
            for tx in view["transactions"]
            for o in [by_hash[tx["hash"]]["transaction_outcome"], *by_hash[tx["hash"]]["receipts_outcome"]]
        ]
        header = view["header"]
        assert header["gas_used"] == sum(o["outcome"]["gas_burnt"] for o in outcomes)
        assert int(header["balance_burnt"]) == sum(int(o["outcome"]["tokens_burnt"]) for o in outcomes)
        busy += bool(outcomes)
    assert busy > 100


def test_roots_and_proofs_are_nearcores_merkle_tree(
    chunk_views: list[dict[str, Any]], statuses: list[dict[str, Any]]
) -> None:
    by_hash = {s["transaction"]["hash"]: s for s in statuses}
    for view in chunk_views:
        header = view["header"]
        signed = [
            signed_transaction_bytes(tx_bytes(tx, header["prev_block_hash"]), tx["signature"])
            for tx in view["transactions"]
        ]
        assert merklize(signed)[0] == header["tx_root"]
        outcomes = [
            o
            for tx in view["transactions"]
            for o in [by_hash[tx["hash"]]["transaction_outcome"], *by_hash[tx["hash"]]["receipts_outcome"]]
        ]
        assert merklize([outcome_leaf(o) for o in outcomes])[0] == header["outcome_root"]
        for outcome in outcomes:
            assert root_from_path(outcome_leaf(outcome), outcome["proof"]) == header["outcome_root"]
    assert merklize([])[0] == "11111111111111111111111111111111"


def test_chunks_are_the_blocks_new_chunks(chain: SampleChain, views: list[dict[str, Any]], facts: SampleFacts) -> None:
    new = {
        (chunk["chunk_hash"], view["header"]["hash"])
        for view in views
        for chunk, fresh in zip(view["chunks"], view["header"]["chunk_mask"], strict=True)
        if fresh
    }
    assert {(c.chunk_hash, c.block_hash) for c in chain.chunks} == new
    headers = {view["header"]["hash"]: view for view in views}
    for stored in chain.chunks:
        view = load(stored.view_json)
        block = headers[stored.block_hash]
        assert view["header"] in block["chunks"]
        assert stored.height == block["header"]["height"] == view["header"]["height_included"]
        assert stored.shard_id == view["header"]["shard_id"]
    for tx in facts.transactions:
        chunk = next(c for c in facts.chunks if tx.tx_hash in c.tx_hashes)
        assert (chunk.block_hash, chunk.shard_id) == (tx.block_hash, tx.shard_id)


def test_outcome_links_resolve(chain: SampleChain, statuses: list[dict[str, Any]]) -> None:
    receipts = {r.receipt_id: r for r in chain.receipts}
    assert len(receipts) == len(chain.receipts)
    for status in statuses:
        tx_outcome = status["transaction_outcome"]
        (first,) = tx_outcome["outcome"]["receipt_ids"]
        assert tx_outcome["outcome"]["status"] == {"SuccessReceiptId": first}
        assert status["status"] == status["receipts_outcome"][0]["outcome"]["status"]
        listed = [o["id"] for o in status["receipts_outcome"]]
        children = [first] + [c for o in status["receipts_outcome"] for c in o["outcome"]["receipt_ids"]]
        assert listed == children == [r["receipt_id"] for r in status["receipts"]]
        for receipt_id in listed:
            stored = receipts[receipt_id]
            assert stored.outcome_json is not None
            outcome = load(stored.outcome_json)
            assert outcome in status["receipts_outcome"]
            assert outcome["block_hash"] == stored.block_hash == tx_outcome["block_hash"]
            assert load(stored.view_json) in status["receipts"]


def test_refunds_return_the_unused_prepaid_gas(statuses: list[dict[str, Any]]) -> None:
    refunds = 0
    for status in statuses:
        for action in status["transaction"]["actions"]:
            if not isinstance(action, dict) or "FunctionCall" not in action:
                continue
            executed = status["receipts_outcome"][0]["outcome"]
            price = int(status["receipts"][0]["receipt"]["Action"]["gas_price"])
            fee = status["transaction_outcome"]["outcome"]["gas_burnt"]  # execution fees equal send fees
            used = executed["gas_burnt"] - fee
            refund = status["receipts"][1]
            assert refund["predecessor_id"] == "system" and refund["receiver_id"] == status["transaction"]["signer_id"]
            deposit = refund["receipt"]["Action"]["actions"][0]["Transfer"]["deposit"]
            assert int(deposit) == (action["FunctionCall"]["gas"] - used) * price
            refunds += 1
    assert refunds > 50


def test_a_deleted_accounts_balance_goes_to_its_beneficiary(chain: SampleChain, statuses: list[dict[str, Any]]) -> None:
    deletions = [
        s for s in statuses if any(isinstance(a, dict) and "DeleteAccount" in a for a in s["transaction"]["actions"])
    ]
    assert deletions
    for status in deletions:
        tx = status["transaction"]
        beneficiary = tx["actions"][0]["DeleteAccount"]["beneficiary_id"]
        payout = status["receipts"][1]
        assert payout["receiver_id"] == beneficiary and payout["receipt"]["Action"]["signer_id"] == "system"
        height = next(t.height for t in chain.transactions if t.tx_hash == tx["hash"])
        before = [r for r in chain.account_states if r.account_id == tx["signer_id"] and r.height < height][-1]
        assert before.view_json is not None
        view = load(before.view_json)
        burnt = sum(
            int(o["outcome"]["tokens_burnt"]) for o in [status["transaction_outcome"], *status["receipts_outcome"]]
        )
        left = int(view["amount"]) + int(view["locked"]) - burnt
        assert int(payout["receipt"]["Action"]["actions"][0]["Transfer"]["deposit"]) == left


def test_function_calls_return_what_the_contract_state_says(facts: SampleFacts, statuses: list[dict[str, Any]]) -> None:
    by_hash = {s["transaction"]["hash"]: s for s in statuses}
    reads = [tx for tx in facts.transactions if tx.method_name == "get_num"]
    assert reads
    for tx in reads:
        state = facts.contract_value(facts.contract_account, b"STATE", tx.height - 1) or bytes(8)
        value = base64.b64decode(by_hash[tx.tx_hash]["status"]["SuccessValue"])
        assert int(value) == int.from_bytes(state, "little", signed=True)


def test_final_execution_status_follows_finality(facts: SampleFacts) -> None:
    for tx in facts.transactions:
        expected = "FINAL" if tx.height <= facts.final_height else "EXECUTED_OPTIMISTIC"
        assert tx.final_execution_status == expected
    assert {tx.final_execution_status for tx in facts.transactions} == {"FINAL", "EXECUTED_OPTIMISTIC"}


def test_validators_count_the_epochs_blocks_and_stakes(chain: SampleChain, facts: SampleFacts) -> None:
    assert [v.epoch_id for v in chain.validators] == [e.epoch_id for e in facts.epochs]
    for record, epoch in zip(chain.validators, facts.epochs, strict=True):
        view = load(record.view_json)
        assert record.height == epoch.last_height
        assert view["epoch_start_height"] == epoch.first_height
        produced = sum(v["num_produced_blocks"] for v in view["current_validators"])
        assert produced == epoch.block_count - (epoch.first_height == facts.genesis_height)
        expected = sum(v["num_expected_blocks"] for v in view["current_validators"])
        assert expected - produced == len(
            [h for h in facts.skipped_heights if epoch.first_height <= h <= epoch.last_height]
        )
        missing = [m for m in facts.missing_chunks if epoch.first_height <= m[0] <= epoch.last_height]
        chunks = sum(v["num_expected_chunks"] - v["num_produced_chunks"] for v in view["current_validators"])
        assert chunks == len(missing)
        # The epoch's stakes: its validators' locked balances when it opened.
        for validator in view["current_validators"]:
            row = [
                r
                for r in chain.account_states
                if r.account_id == validator["account_id"] and r.height <= epoch.first_height
            ][-1]
            assert row.view_json is not None
            assert load(row.view_json)["locked"] == validator["stake"]
    proposals = [p for v in chain.validators for p in load(v.view_json)["current_proposals"]]
    assert [p["account_id"] for p in proposals] == [tx.signer_id for tx in facts.transactions if "Stake" in tx.actions]


def test_every_view_validates_against_upstream(
    reference: Path, chain: SampleChain, statuses: list[dict[str, Any]], chunk_views: list[dict[str, Any]]
) -> None:
    for status in statuses:
        check_component(reference, "RpcTransactionResponse", status)
        check_component(reference, "FinalExecutionOutcomeWithReceiptView", status)
        without_receipts = {k: v for k, v in status.items() if k != "receipts"}
        check_component(reference, "FinalExecutionOutcomeView", without_receipts)
    for view in chunk_views:
        check_component(reference, "RpcChunkResponse", view)
    for receipt in chain.receipts:
        check_component(reference, "RpcReceiptResponse", load(receipt.view_json))
        assert receipt.outcome_json is not None
        check_component(reference, "ExecutionOutcomeWithIdView", load(receipt.outcome_json))
    for record in chain.validators:
        check_component(reference, "RpcValidatorResponse", load(record.view_json))


def test_blocks_chunks_and_approvals_are_signed_by_their_validators(
    chain: SampleChain, views: list[dict[str, Any]]
) -> None:
    """Block and chunk signatures are over their hashes, approvals over nearcore's approval
    bytes (Endorsement of the parent right after it, else Skip of its height, then the target
    height), each with the validator's key from the genesis config."""
    validators = load(chain.genesis_config_json)["validators"]
    keys = {v["account_id"]: Ed25519PublicKey.from_public_bytes(raw(v["public_key"])) for v in validators}
    order = [v["account_id"] for v in validators]
    producers = {load(c.view_json)["header"]["chunk_hash"]: load(c.view_json)["author"] for c in chain.chunks}
    approvals = 0
    for parent, view in itertools.pairwise(views):
        header = view["header"]
        keys[view["author"]].verify(raw(header["signature"]), raw(header["hash"]))
        for chunk, fresh in zip(view["chunks"], header["chunk_mask"], strict=True):
            if fresh:
                keys[producers[chunk["chunk_hash"]]].verify(raw(chunk["signature"]), raw(chunk["chunk_hash"]))
        prev = parent["header"]
        if header["height"] == prev["height"] + 1:
            inner = b"\x00" + raw(prev["hash"])
        else:
            inner = b"\x01" + prev["height"].to_bytes(8, "little")
        message = inner + header["height"].to_bytes(8, "little")
        for validator, approval in zip(order, header["approvals"], strict=True):
            if approval is not None:
                keys[validator].verify(raw(approval), message)
                approvals += 1
    assert approvals > 300


def _amounts(chain: SampleChain) -> dict[str, dict[int, tuple[int, int] | None]]:
    """Each account's (amount, locked) by the heights at which its row was written."""
    rows: dict[str, dict[int, tuple[int, int] | None]] = defaultdict(dict)
    for row in chain.account_states:
        view = None if row.view_json is None else load(row.view_json)
        rows[row.account_id][row.height] = None if view is None else (int(view["amount"]), int(view["locked"]))
    return rows


def test_balances_move_as_the_transactions_say(
    chain: SampleChain, facts: SampleFacts, statuses: list[dict[str, Any]]
) -> None:
    """Per height and account: amount moves by what its transactions burnt and the deposits
    they sent or received (a refund nets out against the prepaid gas; a deleted account's
    balance arrives by its system receipt), locked by its stakes. Only epoch rewards, minted at
    an epoch's first block to the validators' locked balance and the treasury, come on top."""
    rows = _amounts(chain)
    delta: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])  # (account, height) -> [amount, locked]
    heights = {t.tx_hash: t.height for t in facts.transactions}
    for status in statuses:
        tx = status["transaction"]
        height = heights[tx["hash"]]
        signer = delta[(tx["signer_id"], height)]
        outcomes = [status["transaction_outcome"], *status["receipts_outcome"]]
        signer[0] -= sum(int(o["outcome"]["tokens_burnt"]) for o in outcomes)
        for action in tx["actions"]:
            name = action if isinstance(action, str) else next(iter(action))
            deposit = int(action[name].get("deposit", 0)) if isinstance(action, dict) else 0
            signer[0] -= deposit
            delta[(tx["receiver_id"], height)][0] += deposit
            if name == "Stake":
                before = [v for h, v in sorted(rows[tx["signer_id"]].items()) if h < height][-1]
                assert before is not None
                increase = int(action["Stake"]["stake"]) - before[1]
                signer[0] -= increase
                signer[1] += increase
        for receipt in status["receipts"][1:]:
            if receipt["receipt"]["Action"]["signer_id"] == "system":
                payout = receipt["receipt"]["Action"]["actions"][0]["Transfer"]["deposit"]
                delta[(receipt["receiver_id"], height)][0] += int(payout)
    rewarded = {e.first_height for e in facts.epochs[1:]}
    checked = 0
    for (account_id, height), (amount, locked) in delta.items():
        if height in rewarded and (account_id in facts.validators or account_id == facts.treasury_account):
            continue
        if height not in rows[account_id]:
            assert (amount, locked) == (0, 0), (account_id, height)  # nothing moved, no row written
            continue
        after = rows[account_id][height]
        if after is None:  # deleted at this height: its balance went to the beneficiary
            assert facts.deleted_at(account_id) == height
            continue
        earlier = [v for h, v in sorted(rows[account_id].items()) if h < height]
        before = earlier[-1] if earlier and earlier[-1] is not None else (0, 0)
        assert (after[0] - before[0], after[1] - before[1]) == (amount, locked), (account_id, height)
        checked += 1
    assert checked > 250
    # And no row changes without a transaction (or a reward) at its height.
    for account_id, by_height in rows.items():
        for height in by_height:
            rewards = height in rewarded and (account_id in facts.validators or account_id == facts.treasury_account)
            assert height == facts.genesis_height or rewards or (account_id, height) in delta, (account_id, height)


def test_keys_added_and_deleted_by_transactions_are_the_key_rows(chain: SampleChain, facts: SampleFacts) -> None:
    rows = {(r.account_id, r.public_key, r.height): r.view_json for r in chain.access_keys}
    nonces = {(t.signer_id, t.public_key, t.height): t.nonce for t in facts.transactions}
    added = deleted = 0
    for stored in chain.transactions:
        tx = load(stored.view_json)["transaction"]
        for action in tx["actions"]:
            if isinstance(action, dict) and "AddKey" in action:
                key = action["AddKey"]["public_key"]
                row = rows[(tx["receiver_id"], key, stored.height)]
                assert row is not None
                view = load(row)
                # nearcore starts an added key at (height - 1) * 10^6, plus what it signed since.
                start = (stored.height - 1) * 10**6
                assert view["nonce"] == nonces.get((tx["receiver_id"], key, stored.height), start)
                assert view["permission"] == action["AddKey"]["access_key"]["permission"]
                added += 1
            if isinstance(action, dict) and "DeleteKey" in action:
                assert rows[(tx["receiver_id"], action["DeleteKey"]["public_key"], stored.height)] is None
                deleted += 1
    assert added >= 5 and deleted >= 1


def test_contract_calls_are_the_contract_state_rows(facts: SampleFacts) -> None:
    counter = 0
    for tx in facts.transactions:
        if tx.method_name in {"increment", "decrement"}:
            before = facts.contract_value(facts.contract_account, b"STATE", tx.height - 1) or bytes(8)
            after = facts.contract_value(facts.contract_account, b"STATE", tx.height)
            assert after is not None
            step = 1 if tx.method_name == "increment" else -1
            assert int.from_bytes(after, "little", signed=True) == int.from_bytes(before, "little", signed=True) + step
            counter += 1
    assert counter > 10
    for stored in [t for t in facts.transactions if t.method_name == "ft_transfer"]:
        key = b"b" + stored.signer_id.encode()
        sent_from = facts.contract_value(facts.token_account, key, stored.height - 1) or bytes(16)
        left = facts.contract_value(facts.token_account, key, stored.height) or bytes(16)
        assert int.from_bytes(sent_from, "little") > int.from_bytes(left, "little")


def test_system_receipts_burn_nothing_and_the_busiest_chunk_is_the_burst(
    chain: SampleChain, facts: SampleFacts
) -> None:
    outcomes = {r.receipt_id: r.outcome_json for r in chain.receipts}
    assert len(facts.refund_receipt_ids) > 50
    for receipt_id in facts.refund_receipt_ids:
        stored = outcomes[receipt_id]
        assert stored is not None
        outcome = load(stored)["outcome"]
        assert (outcome["gas_burnt"], outcome["tokens_burnt"]) == (0, "0")
    busiest = facts.busiest_chunk()
    methods = {t.method_name for t in facts.transactions if t.tx_hash in busiest.tx_hashes}
    assert "get_num" in methods  # the gas burst's heavy calls
