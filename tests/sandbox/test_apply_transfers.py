"""Transfers, account creation, keys and account deletion through the runtime, with balances
and fees held to nearcore's fee formula (config.rs) at protocol 84."""

from __future__ import annotations

import based58
import pytest

from nearrpc.sandbox.runtime.actions import BalanceOverflow, _refund_allowance
from nearrpc.sandbox.runtime.model import (
    AccessKey,
    Action,
    AddKey,
    CreateAccount,
    DeleteAccount,
    DeleteKey,
    DeployContract,
    FunctionCallPermission,
    Transfer,
)
from nearrpc.sandbox.runtime.state import Overlay
from tests.sandbox.runtime_support import (
    FEES,
    GAS_PRICE,
    NEAR,
    RECEIPT_FEE,
    RUNTIME_CONFIG,
    Chain,
    MemoryState,
    Signer,
    burnt,
    fee,
    outcomes,
)


def _total(chain: Chain) -> int:
    return sum(account.amount + account.locked for account in chain.state.accounts.values())


def test_a_transfer_moves_the_deposit_and_burns_the_send_and_execution_fees() -> None:
    chain = Chain()
    alice, bob = Signer("alice.test"), Signer("bob.test")
    chain.add_account(alice, 10 * NEAR)
    chain.add_account(bob, NEAR)
    supply = _total(chain)
    blocks = chain.run([alice.sign("bob.test", [Transfer(3 * NEAR)], chain.block_hash)])

    conversion, receipt = outcomes(blocks)
    send = RECEIPT_FEE["send_not_sir"] + fee("transfer_cost", "send_not_sir")
    execution = RECEIPT_FEE["execution"] + fee("transfer_cost")
    assert conversion["outcome"]["gas_burnt"] == send
    assert conversion["outcome"]["tokens_burnt"] == str(send * GAS_PRICE)
    assert conversion["outcome"]["status"] == {"SuccessReceiptId": receipt["id"]}
    assert receipt["outcome"]["gas_burnt"] == execution
    assert receipt["outcome"]["tokens_burnt"] == str(execution * GAS_PRICE)
    assert receipt["outcome"]["status"] == {"SuccessValue": ""}
    assert receipt["outcome"]["receipt_ids"] == []  # all prepaid gas used: no refund
    assert chain.state.accounts["alice.test"].amount == 7 * NEAR - (send + execution) * GAS_PRICE
    assert chain.state.accounts["bob.test"].amount == 4 * NEAR
    assert supply - _total(chain) == burnt(blocks) == sum(block.tokens_burnt for block in blocks)
    assert chain.state.keys[("alice.test", alice.public_key)].nonce == 1


def test_a_local_receipt_runs_in_the_block_of_its_transaction() -> None:
    chain = Chain()
    alice = Signer("alice.test")
    chain.add_account(alice, 10 * NEAR)
    result = chain.block([alice.sign("alice.test", [Transfer(NEAR)], chain.block_hash)])
    assert len(result.transactions) == 1 and len(result.receipts) == 1
    send = RECEIPT_FEE["send_sir"] + fee("transfer_cost", "send_sir")
    assert result.transactions[0].outcome["outcome"]["gas_burnt"] == send
    assert not result.outgoing


def test_account_creation_with_a_key_and_a_deposit() -> None:
    chain = Chain()
    alice, carol = Signer("alice.test"), Signer("carol.alice.test")
    chain.add_account(alice, 10 * NEAR)
    full = AccessKey(nonce=0, permission=None)
    actions: list[Action] = [CreateAccount(), Transfer(2 * NEAR), AddKey(carol.public_key, full)]
    blocks = chain.run([alice.sign("carol.alice.test", actions, chain.block_hash)])

    conversion, receipt = outcomes(blocks)
    send = (
        RECEIPT_FEE["send_not_sir"]
        + sum(fee(name, "send_not_sir") for name in ("create_account_cost", "transfer_cost"))
        + int(FEES["action_creation_config"]["add_key_cost"]["full_access_cost"]["send_not_sir"])
    )
    execution = (
        RECEIPT_FEE["execution"]
        + fee("create_account_cost")
        + fee("transfer_cost")
        + int(FEES["action_creation_config"]["add_key_cost"]["full_access_cost"]["execution"])
    )
    assert conversion["outcome"]["gas_burnt"] == send
    assert receipt["outcome"]["gas_burnt"] == execution
    carol_account = chain.state.accounts["carol.alice.test"]
    # 100 bytes of account, plus the key: 33 (key) + 9 (full access key) + 40 (record)
    assert (carol_account.amount, carol_account.storage_usage) == (2 * NEAR, 182)
    key = chain.state.keys[("carol.alice.test", carol.public_key)]
    # the receipt ran in the next block (height 101): the key's nonce starts at (101 - 1) * 10^6
    assert key.nonce == 100 * 1_000_000
    assert chain.state.accounts["alice.test"].amount == 8 * NEAR - (send + execution) * GAS_PRICE


def test_creating_an_account_that_is_not_a_sub_account_fails_and_refunds_the_deposit() -> None:
    chain = Chain()
    alice = Signer("alice.test")
    chain.add_account(alice, 10 * NEAR)
    blocks = chain.run([alice.sign("dave.bob.test", [CreateAccount(), Transfer(NEAR)], chain.block_hash)])
    found = outcomes(blocks)
    conversion, receipt = found[0], found[1]
    assert receipt["outcome"]["status"] == {
        "Failure": {
            "ActionError": {
                "index": 0,
                "kind": {"CreateAccountNotAllowed": {"account_id": "dave.bob.test", "predecessor_id": "alice.test"}},
            }
        }
    }
    assert "dave.bob.test" not in chain.state.accounts
    # the deposit comes back by a balance refund; the failed action's fees are burnt, the rest
    # of the prepaid execution (the transfer's) comes back by a gas refund
    refunds = found[2:]
    assert len(refunds) == 2 and all(r["outcome"]["tokens_burnt"] == "0" for r in refunds)
    assert receipt["outcome"]["receipt_ids"] == [r["id"] for r in refunds]
    deposit_back, gas_back = blocks[2].receipts[0].view, blocks[2].receipts[1].view
    assert deposit_back["receipt"]["Action"]["actions"] == [{"Transfer": {"deposit": str(NEAR)}}]
    assert deposit_back["predecessor_id"] == "system"
    unused = fee("transfer_cost") * GAS_PRICE  # prepaid, never executed
    assert gas_back["receipt"]["Action"]["actions"] == [{"Transfer": {"deposit": str(unused)}}]
    burnt_gas = receipt["outcome"]["gas_burnt"]
    assert burnt_gas == RECEIPT_FEE["execution"] + fee("create_account_cost")
    spent = (conversion["outcome"]["gas_burnt"] + burnt_gas) * GAS_PRICE
    assert chain.state.accounts["alice.test"].amount == 10 * NEAR - spent


def test_short_top_level_accounts_are_the_registrars() -> None:
    chain = Chain()
    alice = Signer("alice.test")
    chain.add_account(alice, 10 * NEAR)
    blocks = chain.run([alice.sign("short", [CreateAccount(), Transfer(NEAR)], chain.block_hash)])
    kind = outcomes(blocks)[1]["outcome"]["status"]["Failure"]["ActionError"]["kind"]
    assert kind == {
        "CreateAccountOnlyByRegistrar": {
            "account_id": "short",
            "registrar_account_id": "registrar",
            "predecessor_id": "alice.test",
        }
    }


def test_a_transfer_to_a_near_implicit_account_creates_it_with_its_key() -> None:
    chain = Chain()
    alice, implicit = Signer("alice.test"), Signer("")
    chain.add_account(alice, 10 * NEAR)
    hex_id = based58.b58decode(implicit.public_key.partition(":")[2].encode()).hex()
    blocks = chain.run([alice.sign(hex_id, [Transfer(NEAR)], chain.block_hash)])
    receipt = outcomes(blocks)[1]
    full_access = FEES["action_creation_config"]["add_key_cost"]["full_access_cost"]
    assert receipt["outcome"]["gas_burnt"] == (
        RECEIPT_FEE["execution"] + fee("transfer_cost") + fee("create_account_cost") + full_access["execution"]
    )
    assert chain.state.accounts[hex_id].amount == NEAR
    assert chain.state.accounts[hex_id].storage_usage == 182
    assert (hex_id, implicit.public_key) in chain.state.keys


def test_keys_added_and_deleted_change_storage_usage() -> None:
    chain = Chain()
    alice, other = Signer("alice.test"), Signer("alice.test")
    chain.add_account(alice, 10 * NEAR)
    limited = AccessKey(0, FunctionCallPermission(allowance=NEAR, receiver_id="app.test", method_names=("go",)))
    chain.run([alice.sign("alice.test", [AddKey(other.public_key, limited)], chain.block_hash)])
    # 33 + (8 + 1 + 17 + 4 + 8 + 4 + 4 + 2) + 40
    assert chain.state.accounts["alice.test"].storage_usage == 182 + 121
    blocks = chain.run([alice.sign("alice.test", [DeleteKey(other.public_key)], chain.block_hash)])
    assert chain.state.accounts["alice.test"].storage_usage == 182
    assert ("alice.test", other.public_key) not in chain.state.keys
    blocks = chain.run([alice.sign("alice.test", [DeleteKey(other.public_key)], chain.block_hash)])
    kind = outcomes(blocks)[1]["outcome"]["status"]["Failure"]["ActionError"]["kind"]
    assert kind == {"DeleteKeyDoesNotExist": {"account_id": "alice.test", "public_key": other.public_key}}


def test_deleting_an_account_pays_its_balance_to_the_beneficiary() -> None:
    chain = Chain()
    alice, bob = Signer("alice.test"), Signer("bob.test")
    chain.add_account(alice, 10 * NEAR)
    chain.add_account(bob, NEAR)
    supply = _total(chain)
    blocks = chain.run([alice.sign("alice.test", [DeleteAccount("bob.test")], chain.block_hash)])
    assert "alice.test" not in chain.state.accounts
    assert ("alice.test", alice.public_key) not in chain.state.keys
    found = outcomes(blocks)
    assert [o["outcome"]["executor_id"] for o in found] == ["alice.test", "alice.test", "bob.test"]
    assert supply - _total(chain) == burnt(blocks)
    assert chain.state.accounts["bob.test"].amount == supply - burnt(blocks)


def test_storage_the_balance_cannot_stake_fails_the_receipt() -> None:
    chain = Chain()
    poor = Signer("poor.test")
    # enough for the fees, not for 2 kB of code at 10^19 yoctoNEAR a byte
    chain.add_account(poor, NEAR // 100)
    code = bytes(2000)
    blocks = chain.run([poor.sign("poor.test", [DeployContract(code)], chain.block_hash)])
    status = outcomes(blocks)[1]["outcome"]["status"]
    account = chain.state.accounts["poor.test"]
    required = (182 + len(code)) * int(RUNTIME_CONFIG["storage_amount_per_byte"])
    assert status == {
        "Failure": {
            "ActionError": {
                "index": None,
                "kind": {"LackBalanceForState": {"account_id": "poor.test", "amount": str(required - account.amount)}},
            }
        }
    }
    assert account.code_hash == "11111111111111111111111111111111" and account.storage_usage == 182


def test_a_failed_action_rolls_back_the_receipts_earlier_actions_but_keeps_the_charges() -> None:
    chain = Chain()
    alice, extra, missing = Signer("alice.test"), Signer("alice.test"), Signer("alice.test")
    chain.add_account(alice, 10 * NEAR)
    actions: list[Action] = [AddKey(extra.public_key, AccessKey(0, None)), DeleteKey(missing.public_key)]
    blocks = chain.run([alice.sign("alice.test", actions, chain.block_hash)])
    _, receipt = outcomes(blocks)  # no refund: every prepaid fee was burnt
    assert receipt["outcome"]["status"]["Failure"]["ActionError"]["index"] == 1
    assert ("alice.test", extra.public_key) not in chain.state.keys
    account = chain.state.accounts["alice.test"]
    assert account.storage_usage == 182
    # both actions' fees were burnt: the failing one ran to its check
    full_access = int(FEES["action_creation_config"]["add_key_cost"]["full_access_cost"]["execution"])
    assert receipt["outcome"]["gas_burnt"] == RECEIPT_FEE["execution"] + full_access + fee("delete_key_cost")
    assert account.amount == 10 * NEAR - burnt(blocks)
    assert chain.state.keys[("alice.test", alice.public_key)].nonce == 1  # the conversion's charge stays


def test_a_balance_past_u128_fails_the_block_not_the_store() -> None:
    # only a patched state holds such a balance; nearcore's `action_transfer` answers it with
    # StorageInconsistentState (the chunk fails): never a balance that no u128 can hold
    chain = Chain()
    alice, rich = Signer("alice.test"), Signer("rich.test")
    chain.add_account(alice, 10 * NEAR)
    chain.add_account(rich, 2**128 - NEAR)
    with pytest.raises(BalanceOverflow, match="Account balance integer overflow"):
        chain.run([alice.sign("rich.test", [Transfer(2 * NEAR)], chain.block_hash)])


def test_an_allowance_refund_saturates_at_u128() -> None:
    state = MemoryState()
    permission = FunctionCallPermission(allowance=2**128 - 5, receiver_id="bob.test", method_names=())
    state.keys[("alice.test", "ed25519:k")] = AccessKey(nonce=0, permission=permission)
    overlay = Overlay(state)
    _refund_allowance(overlay, "alice.test", "ed25519:k", NEAR)
    refunded = overlay.access_key("alice.test", "ed25519:k")
    assert refunded is not None and refunded.permission is not None
    assert refunded.permission.allowance == 2**128 - 1
