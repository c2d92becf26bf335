"""The protocol features up to 87 that change what a receipt does besides its prices: an instant
DeleteAccount receipt (83), the delegated call's deposit check first (85), and ExecutionMetadata
V4's per-action contracts (85)."""

from __future__ import annotations

import pytest

from nearrpc.sandbox.runtime.decode import decode_signed_transaction
from nearrpc.sandbox.runtime.encode import public_key_of, sign_delegate_action, sign_transaction
from nearrpc.sandbox.runtime.model import (
    NO_CODE_HASH,
    AccessKey,
    Account,
    Action,
    DelegateAction,
    DeleteAccount,
    DeployContract,
    FunctionCall,
    FunctionCallPermission,
    SignedTransaction,
    Transaction,
    Transfer,
)
from tests.sandbox.runtime_support import NEAR, Chain, outcomes
from tests.sandbox.support import ed25519_secret
from tests.sandbox.test_apply_contracts import SAMPLE_CONTRACTS

ALICE, BOB, ALICE_CALLS = ed25519_secret("alice"), ed25519_secret("bob"), ed25519_secret("alice-calls")


def _chain(protocol_version: int) -> Chain:
    chain = Chain(protocol_version)
    for account_id, secret in (("alice.test", ALICE), ("bob.test", BOB)):
        chain.state.accounts[account_id] = Account(10 * NEAR, 0, NO_CODE_HASH, 182)
        chain.state.keys[(account_id, public_key_of(secret))] = AccessKey(nonce=0, permission=None)
    chain.state.accounts["carol.test"] = Account(NEAR, 0, NO_CODE_HASH, 182)
    return chain


def _signed(chain: Chain, signer: str, secret: str, receiver: str, actions: tuple[Action, ...]) -> SignedTransaction:
    tx = Transaction(signer, public_key_of(secret), 1, receiver, chain.block_hash, actions)
    return decode_signed_transaction(sign_transaction(tx, secret))


@pytest.mark.parametrize("protocol_version", [84, 87])
def test_a_delegated_delete_account_runs_in_the_block_of_its_delegate(protocol_version: int) -> None:
    chain = _chain(protocol_version)
    inner = DelegateAction(
        "alice.test", "alice.test", (DeleteAccount("bob.test"),), 1, chain.height + 100, public_key_of(ALICE)
    )
    blocks = chain.run([_signed(chain, "bob.test", BOB, "alice.test", (sign_delegate_action(inner, ALICE),))])
    # the delegate's receipt and the DeleteAccount it made, one after the other in one block
    executed = [(applied.view["predecessor_id"], applied.view["receiver_id"]) for applied in blocks[1].receipts]
    assert executed == [("bob.test", "alice.test"), ("alice.test", "alice.test")]
    delegate_outcome, delete_outcome = (applied.outcome for applied in blocks[1].receipts)
    # (from 85 a gas refund of the price surplus follows it, to the next block)
    assert delegate_outcome["outcome"]["receipt_ids"][0] == delete_outcome["id"]
    assert delete_outcome["outcome"]["status"] == {"SuccessValue": ""}
    assert "alice.test" not in chain.state.accounts
    # its balance goes to the beneficiary by a balance refund, in the next block as ever
    refunds = {(applied.view["predecessor_id"], applied.view["receiver_id"]) for applied in blocks[2].receipts}
    assert ("system", "bob.test") in refunds


@pytest.mark.parametrize(
    ("protocol_version", "error"),
    [
        # before FixDelegateActionDepositWithFunctionCallError the receiver check overwrote it
        (84, {"ReceiverMismatch": {"tx_receiver": "carol.test", "ak_receiver": "dave.test"}}),
        (85, "DepositWithFunctionCall"),
    ],
)
def test_a_delegated_call_with_a_deposit_fails_on_the_deposit_first(protocol_version: int, error: object) -> None:
    chain = _chain(protocol_version)
    permission = FunctionCallPermission(allowance=None, receiver_id="dave.test", method_names=())
    chain.state.keys[("alice.test", public_key_of(ALICE_CALLS))] = AccessKey(nonce=0, permission=permission)
    call = FunctionCall("go", b"", 10**12, 1)
    inner = DelegateAction("alice.test", "carol.test", (call,), 1, chain.height + 100, public_key_of(ALICE_CALLS))
    delegate = sign_delegate_action(inner, ALICE_CALLS)
    blocks = chain.run([_signed(chain, "bob.test", BOB, "alice.test", (delegate,))])
    kind = outcomes(blocks)[1]["outcome"]["status"]["Failure"]["ActionError"]["kind"]
    assert kind == {"DelegateActionAccessKeyError": error}


def test_v4_metadata_names_the_contract_before_each_action() -> None:
    chain = _chain(87)
    code = (SAMPLE_CONTRACTS / "counter.wasm").read_bytes()
    blocks = chain.run([_signed(chain, "alice.test", ALICE, "alice.test", (DeployContract(code), Transfer(1)))])
    receipt = outcomes(blocks)[1]
    code_hash = chain.state.accounts["alice.test"].code_hash
    # no code before the deploy; the deployed code before the transfer
    assert receipt["outcome"]["metadata"]["contracts"] == [None, {"local": code_hash}]
    assert receipt["outcome"]["metadata"]["version"] == 4
