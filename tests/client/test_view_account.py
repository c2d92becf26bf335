"""EXPERIMENTAL_view_account through the published client, for every block reference form."""

from __future__ import annotations

import pytest
from near_jsonrpc_client import NearClientSync, RpcError

from tests.client.chain import REF_IDS, REFS, Ref, error_cause, hash_at, stored_account, view_account_request
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.live


def busiest_account() -> str:
    """The genesis account whose state changed most often, so reference forms see different balances."""
    facts = sample_facts()
    genesis_accounts = set(facts.accounts_at_genesis) - {a for a, _ in facts.deleted_accounts}
    return max(sorted(genesis_accounts), key=lambda account: len(facts.change_heights(account)))


ACCOUNT = busiest_account()


@pytest.mark.parametrize("ref", REFS, ids=REF_IDS)
def test_view_account_by_reference(near: NearClientSync, ref: Ref) -> None:
    stored = stored_account(ACCOUNT, ref.height)
    assert stored is not None
    view = near.experimental_view_account(params=view_account_request(ref, ACCOUNT))
    assert view.block_height == ref.height
    assert view.block_hash.root == hash_at(ref.height)
    assert view.amount.root == stored["amount"]
    assert view.locked.root == stored["locked"]
    assert view.code_hash.root == stored["code_hash"]
    assert view.storage_usage == stored["storage_usage"]


def test_balances_follow_the_stored_states(near: NearClientSync) -> None:
    """At each height where the account changed, the client sees exactly the stored balance."""
    for height in sample_facts().change_heights(ACCOUNT):
        stored = stored_account(ACCOUNT, height)
        assert stored is not None
        view = near.experimental_view_account(
            params=view_account_request(Ref("at", "block_id", height, height), ACCOUNT)
        )
        assert (view.block_height, view.amount.root, view.storage_usage) == (
            height,
            stored["amount"],
            stored["storage_usage"],
        )


def test_contract_and_global_contract_accounts(near: NearClientSync) -> None:
    facts = sample_facts()
    final = Ref("final", "finality", "final", facts.final_height)
    contract = near.experimental_view_account(params=view_account_request(final, facts.contract_account))
    assert contract.code_hash.root == facts.contract_code_hash
    for account in facts.global_contract_accounts:
        stored = stored_account(account, facts.final_height)
        assert stored is not None
        view = near.experimental_view_account(params=view_account_request(final, account))
        hash_ = view.global_contract_hash.root if view.global_contract_hash is not None else None
        owner = view.global_contract_account_id.root if view.global_contract_account_id is not None else None
        assert (hash_, owner) == (stored.get("global_contract_hash"), stored.get("global_contract_account_id"))


def _unknown_account(near: NearClientSync, ref: Ref, account: str) -> None:
    with pytest.raises(RpcError) as raised:
        near.experimental_view_account(params=view_account_request(ref, account))
    cause = error_cause(raised.value.error)
    assert cause.name == "UNKNOWN_ACCOUNT"
    assert cause.info.requested_account_id.root == account
    assert cause.info.block_height == ref.height
    assert cause.info.block_hash.root == hash_at(ref.height)


def test_missing_account_is_unknown_account(near: NearClientSync) -> None:
    facts = sample_facts()
    missing = "nobody-here." + facts.treasury_account
    assert missing not in facts.all_accounts
    _unknown_account(near, Ref("optimistic", "finality", "optimistic", facts.head_height), missing)


def test_deleted_account_is_unknown_after_deletion(near: NearClientSync) -> None:
    facts = sample_facts()
    account, deleted_at = facts.deleted_accounts[0]
    after = min(h for h in facts.block_heights if h >= deleted_at)
    _unknown_account(near, Ref("after", "block_id", after, after), account)


def test_created_account_is_unknown_before_creation(near: NearClientSync) -> None:
    facts = sample_facts()
    account, created_at = facts.created_accounts[0]
    before = max(h for h in facts.block_heights if h < created_at)
    _unknown_account(near, Ref("before", "block_id", before, before), account)
    stored = stored_account(account, created_at)
    assert stored is not None
    view = near.experimental_view_account(
        params=view_account_request(Ref("at", "block_id", created_at, created_at), account)
    )
    assert view.amount.root == stored["amount"]


def test_skipped_height_is_unknown_block(near: NearClientSync) -> None:
    facts = sample_facts()
    height = facts.skipped_heights[0]
    with pytest.raises(RpcError) as raised:
        near.experimental_view_account(params=view_account_request(Ref("skipped", "block_id", height, height), ACCOUNT))
    cause = error_cause(raised.value.error)
    assert cause.name == "UNKNOWN_BLOCK"
