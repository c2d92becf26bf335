"""Stake and NEP-366 delegate actions through the runtime, and the account rules around them."""

from __future__ import annotations

import base64
import json

from nearrpc.sandbox.runtime.decode import decode_signed_transaction
from nearrpc.sandbox.runtime.encode import public_key_of, sign_delegate_action, sign_transaction
from nearrpc.sandbox.runtime.model import (
    NO_CODE_HASH,
    AccessKey,
    Account,
    Action,
    BlockResult,
    DelegateAction,
    DeleteAccount,
    DeployContract,
    FunctionCall,
    SignedTransaction,
    Stake,
    Transaction,
    Transfer,
)
from tests.sandbox.runtime_support import GAS_PRICE, NEAR, RECEIPT_FEE, Chain, burnt, fee, outcomes, reference_contract
from tests.sandbox.support import ed25519_secret

ALICE, BOB = ed25519_secret("alice"), ed25519_secret("bob")


def _chain() -> Chain:
    chain = Chain()
    for account_id, secret in (("alice.test", ALICE), ("bob.test", BOB)):
        chain.state.accounts[account_id] = Account(10 * NEAR, 0, NO_CODE_HASH, 182)
        chain.state.keys[(account_id, public_key_of(secret))] = AccessKey(nonce=0, permission=None)
    chain.state.accounts["carol.test"] = Account(NEAR, 0, NO_CODE_HASH, 182)
    return chain


def _signed(
    chain: Chain, signer: str, secret: str, receiver: str, actions: tuple[Action, ...], nonce: int = 1
) -> SignedTransaction:
    tx = Transaction(signer, public_key_of(secret), nonce, receiver, chain.block_hash, actions)
    return decode_signed_transaction(sign_transaction(tx, secret))


def _failure(blocks: list[BlockResult], index: int = 1) -> object:
    return outcomes(blocks)[index]["outcome"]["status"]["Failure"]["ActionError"]["kind"]


def test_a_stake_locks_the_balance_and_unstaking_nothing_fails() -> None:
    chain = _chain()
    key = public_key_of(ALICE)
    blocks = chain.run([_signed(chain, "alice.test", ALICE, "alice.test", (Stake(4 * NEAR, key),))])
    alice = chain.state.accounts["alice.test"]
    assert alice.locked == 4 * NEAR
    gas = RECEIPT_FEE["send_sir"] + fee("stake_cost", "send_sir") + RECEIPT_FEE["execution"] + fee("stake_cost")
    assert gas == sum(o["outcome"]["gas_burnt"] for o in outcomes(blocks))
    assert alice.amount == 6 * NEAR - gas * GAS_PRICE
    blocks = chain.run([_signed(chain, "bob.test", BOB, "bob.test", (Stake(0, public_key_of(BOB)),))])
    assert _failure(blocks) == {"TriesToUnstake": {"account_id": "bob.test"}}
    blocks = chain.run([_signed(chain, "bob.test", BOB, "bob.test", (Stake(20 * NEAR, public_key_of(BOB)),), 2)])
    assert _failure(blocks) == {
        "TriesToStake": {
            "account_id": "bob.test",
            "stake": str(20 * NEAR),
            "locked": "0",
            "balance": chain.state.accounts["bob.test"].amount.__str__(),
        }
    }


def test_an_account_that_stakes_cannot_be_deleted() -> None:
    chain = _chain()
    chain.run([_signed(chain, "alice.test", ALICE, "alice.test", (Stake(NEAR, public_key_of(ALICE)),))])
    blocks = chain.run([_signed(chain, "alice.test", ALICE, "alice.test", (DeleteAccount("bob.test"),), 2)])
    assert _failure(blocks) == {"DeleteAccountStaking": {"account_id": "alice.test"}}
    assert "alice.test" in chain.state.accounts


def test_acting_on_another_account_needs_its_permission() -> None:
    chain = _chain()
    blocks = chain.run([_signed(chain, "alice.test", ALICE, "bob.test", (DeleteAccount("alice.test"),))])
    assert _failure(blocks) == {"ActorNoPermission": {"account_id": "bob.test", "actor_id": "alice.test"}}


def test_a_relayed_transfer_is_paid_by_the_relayer() -> None:
    chain = _chain()
    inner = DelegateAction(
        sender_id="alice.test",
        receiver_id="carol.test",
        actions=(Transfer(2 * NEAR),),
        nonce=1,
        max_block_height=chain.height + 100,
        public_key=public_key_of(ALICE),
    )
    delegate = sign_delegate_action(inner, ALICE)
    alice_before = chain.state.accounts["alice.test"].amount
    bob_before = chain.state.accounts["bob.test"].amount
    blocks = chain.run([_signed(chain, "bob.test", BOB, "alice.test", (delegate,))])
    found = outcomes(blocks)
    assert [o["outcome"]["executor_id"] for o in found] == ["bob.test", "alice.test", "carol.test"]
    assert all("SuccessValue" in o["outcome"]["status"] or "SuccessReceiptId" in o["outcome"]["status"] for o in found)
    inner_send = fee("transfer_cost", "send_not_sir")
    assert found[0]["outcome"]["gas_burnt"] == (
        RECEIPT_FEE["send_not_sir"] + fee("delegate_cost", "send_not_sir") + inner_send
    )
    assert found[1]["outcome"]["gas_burnt"] == RECEIPT_FEE["execution"] + fee("delegate_cost") + inner_send
    assert found[2]["outcome"]["gas_burnt"] == RECEIPT_FEE["execution"] + fee("transfer_cost")
    assert chain.state.accounts["carol.test"].amount == 3 * NEAR
    assert chain.state.accounts["alice.test"].amount == alice_before  # the sender pays nothing
    assert bob_before - chain.state.accounts["bob.test"].amount == 2 * NEAR + burnt(blocks)
    assert chain.state.keys[("alice.test", public_key_of(ALICE))].nonce == 1
    # the same delegate action again: its nonce is used
    blocks = chain.run([_signed(chain, "bob.test", BOB, "alice.test", (delegate,), 2)])
    assert _failure(blocks) == {"DelegateActionInvalidNonce": {"delegate_nonce": 1, "ak_nonce": 1}}


def test_a_delegate_action_signed_by_another_key_or_expired() -> None:
    chain = _chain()
    inner = DelegateAction("alice.test", "carol.test", (Transfer(1),), 1, chain.height + 100, public_key_of(ALICE))
    forged = sign_delegate_action(inner, BOB)
    blocks = chain.run([_signed(chain, "bob.test", BOB, "alice.test", (forged,))])
    assert _failure(blocks) == "DelegateActionInvalidSignature"
    expired = sign_delegate_action(
        DelegateAction("alice.test", "carol.test", (Transfer(1),), 1, chain.height - 1, public_key_of(ALICE)), ALICE
    )
    blocks = chain.run([_signed(chain, "bob.test", BOB, "alice.test", (expired,), 2)])
    assert _failure(blocks) == "DelegateActionExpired"


def test_a_contract_refunds_a_deposit_past_its_bound_by_a_promise() -> None:
    code = reference_contract("new_fungible_token.wasm")
    chain = _chain()
    init = FunctionCall(
        "new_default_meta", json.dumps({"owner_id": "alice.test", "total_supply": "100"}).encode(), 10**14, 0
    )
    chain.state.keys[("carol.test", public_key_of(BOB))] = AccessKey(nonce=0, permission=None)
    chain.state.accounts["carol.test"] = Account(50 * NEAR, 0, NO_CODE_HASH, 182)
    chain.run([_signed(chain, "carol.test", BOB, "carol.test", (DeployContract(code), init))])
    # more than the storage bound: near-sdk refunds the excess by a promise (a transfer)
    deposit = FunctionCall("storage_deposit", json.dumps({"account_id": "bob.test"}).encode(), 30 * 10**12, NEAR)
    bob_before = chain.state.accounts["bob.test"].amount
    blocks = chain.run([_signed(chain, "bob.test", BOB, "carol.test", (deposit,))])
    found = outcomes(blocks)
    # the storage bound (125 bytes at 10^19 yoctoNEAR a byte) is kept; the rest comes back by a
    # transfer receipt from the token to bob (near-sdk's storage_deposit: Promise::transfer)
    bound = 125 * 10**19
    assert json.loads(base64.b64decode(found[1]["outcome"]["status"]["SuccessValue"])) == {
        "total": str(bound),
        "available": "0",
    }
    refund = next(r for b in blocks for r in b.receipts if r.view["predecessor_id"] == "carol.test")
    assert refund.view["receipt"]["Action"]["actions"] == [{"Transfer": {"deposit": str(NEAR - bound)}}]
    assert bob_before - chain.state.accounts["bob.test"].amount == bound + burnt(blocks)
