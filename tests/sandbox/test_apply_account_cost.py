"""Receipts at the sample chain's head protocol (87) and at 86: NEP-642's prices (gas bought at
min_gas_purchase_price, burnt at the block's lower price, the surplus refunded to the signer,
account_creation_charge for a created account), NEP-536's refunds and the contract reward, each
expected number computed here by hand from the runtime config (lib.rs `apply_action_receipt`,
`refund_unspent_gas_and_deposits`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from nearrpc.sandbox.runtime.actions import code_hash_of
from nearrpc.sandbox.runtime.model import (
    AccessKey,
    Action,
    AddKey,
    CreateAccount,
    DeployContract,
    FunctionCall,
    Transfer,
)
from tests.sandbox.runtime_support import NEAR, Chain, Signer, burnt, outcomes
from tests.sandbox.test_apply_contracts import SAMPLE_CONTRACTS

BLOCK_PRICE = 100_000_000  # the sample chain's gas price, below min_gas_purchase_price
TGAS = 10**12


class Fees:
    """A protocol version's numbers, read from its runtime config as EXPERIMENTAL_protocol_config shows it."""

    def __init__(self, config: dict[str, Any]) -> None:
        costs = config["transaction_costs"]
        self.receipt = costs["action_receipt_creation_config"]
        self.actions = costs["action_creation_config"]
        self.purchase_price = int(config["min_gas_purchase_price"])
        self.account_charge = int(config["account_creation_charge"])
        self.reward = costs["burnt_gas_reward"]

    def action(self, name: str, kind: str = "execution") -> int:
        return int(self.actions[name][kind])

    def full_key(self, kind: str = "execution") -> int:
        return int(self.actions["add_key_cost"]["full_access_cost"][kind])


def _chain(protocol_version: int = 87) -> tuple[Chain, Fees, Signer]:
    chain = Chain(protocol_version, BLOCK_PRICE)
    fees = Fees(chain.config)
    assert fees.purchase_price == 10 * BLOCK_PRICE  # the point of these tests: bought above the burn price
    alice = Signer("alice.test")
    chain.add_account(alice, 10 * NEAR)
    return chain, fees, alice


def _supply(chain: Chain) -> int:
    return sum(account.amount + account.locked for account in chain.state.accounts.values())


def _deposit(receipt_view: Mapping[str, Any]) -> int:
    ((action,),) = [receipt_view["receipt"]["Action"]["actions"]]
    return int(action["Transfer"]["deposit"])


def test_a_transfer_burns_at_the_block_price_and_gets_the_price_surplus_back() -> None:
    chain, fees, alice = _chain()
    chain.add_account(Signer("bob.test"), NEAR)
    supply = _supply(chain)
    blocks = chain.run([alice.sign("bob.test", [Transfer(3 * NEAR)], chain.block_hash)])

    send = fees.receipt["send_not_sir"] + fees.action("transfer_cost", "send_not_sir")
    execution = fees.receipt["execution"] + fees.action("transfer_cost")
    conversion, receipt, refund = outcomes(blocks)
    assert conversion["outcome"]["gas_burnt"] == send
    assert conversion["outcome"]["tokens_burnt"] == str(send * BLOCK_PRICE)
    # the receipt carries its gas at the purchase price and burns it at the block's
    assert blocks[1].receipts[0].view["receipt"]["Action"]["gas_price"] == str(fees.purchase_price)
    assert receipt["outcome"]["gas_burnt"] == execution
    assert receipt["outcome"]["tokens_burnt"] == str(execution * BLOCK_PRICE)
    assert receipt["outcome"]["receipt_ids"] == [refund["id"]]
    assert receipt["outcome"]["metadata"] == {"version": 4, "gas_profile": [], "contracts": [None]}
    # the surplus comes back by a gas refund: from the system, signed for by alice's key, free
    refund_view = blocks[2].receipts[0].view
    assert refund_view["predecessor_id"] == "system" and refund_view["receiver_id"] == "alice.test"
    assert refund_view["priority"] == 0
    body = refund_view["receipt"]["Action"]
    assert (body["signer_id"], body["signer_public_key"], body["gas_price"]) == ("alice.test", alice.public_key, "0")
    assert _deposit(refund_view) == (fees.purchase_price - BLOCK_PRICE) * execution
    # a refund burns nothing; its outcome shows the gas its Transfer took all the same
    assert (refund["outcome"]["gas_burnt"], refund["outcome"]["tokens_burnt"]) == (execution, "0")
    # in all, alice paid the amount and both fees at the block's price
    assert chain.state.accounts["alice.test"].amount == 7 * NEAR - (send + execution) * BLOCK_PRICE
    assert chain.state.accounts["bob.test"].amount == 4 * NEAR
    assert supply - _supply(chain) == burnt(blocks) == sum(block.tokens_burnt for block in blocks)
    assert burnt(blocks) == (send + execution) * BLOCK_PRICE


def test_the_transfer_receipt_holds_the_purchase_price_until_its_refund_runs() -> None:
    chain, fees, alice = _chain()
    chain.add_account(Signer("bob.test"), NEAR)
    chain.block([alice.sign("bob.test", [Transfer(NEAR)], chain.block_hash)])
    send = fees.receipt["send_not_sir"] + fees.action("transfer_cost", "send_not_sir")
    execution = fees.receipt["execution"] + fees.action("transfer_cost")
    charged = 9 * NEAR - send * BLOCK_PRICE - execution * fees.purchase_price
    assert chain.state.accounts["alice.test"].amount == charged
    chain.block()  # the receipt
    assert chain.state.accounts["alice.test"].amount == charged
    chain.block()  # its refund
    assert chain.state.accounts["alice.test"].amount == 9 * NEAR - (send + execution) * BLOCK_PRICE


def test_creating_an_account_costs_the_account_creation_charge() -> None:
    chain, fees, alice = _chain()
    carol = Signer("carol.alice.test")
    supply = _supply(chain)
    actions: list[Action] = [CreateAccount(), Transfer(2 * NEAR), AddKey(carol.public_key, AccessKey(0, None))]
    blocks = chain.run([alice.sign("carol.alice.test", actions, chain.block_hash)])

    send = (
        fees.receipt["send_not_sir"]
        + fees.action("create_account_cost", "send_not_sir")
        + fees.action("transfer_cost", "send_not_sir")
        + fees.full_key("send_not_sir")
    )
    execution = (
        fees.receipt["execution"] + fees.action("create_account_cost") + fees.action("transfer_cost") + fees.full_key()
    )
    # 0.007 NEAR, less what create_account's execution fee (7.2 Tgas) burnt at the block's price
    charge = fees.account_charge - fees.action("create_account_cost") * BLOCK_PRICE
    assert charge == 7 * 10**21 - 72 * 10**19
    conversion, receipt, refund = outcomes(blocks)
    assert conversion["outcome"]["tokens_burnt"] == str(send * BLOCK_PRICE)
    assert receipt["outcome"]["gas_burnt"] == execution
    assert receipt["outcome"]["tokens_burnt"] == str(execution * BLOCK_PRICE + charge)
    # no contract before any of the three actions (the account did not exist, then had no code)
    assert receipt["outcome"]["metadata"]["contracts"] == [None, None, None]
    assert _deposit(blocks[2].receipts[0].view) == (fees.purchase_price - BLOCK_PRICE) * execution - charge
    assert refund["outcome"]["tokens_burnt"] == "0"
    assert chain.state.accounts["carol.alice.test"].amount == 2 * NEAR
    expected = 8 * NEAR - (send + execution) * BLOCK_PRICE - charge
    assert chain.state.accounts["alice.test"].amount == expected
    assert supply - _supply(chain) == burnt(blocks) == sum(block.tokens_burnt for block in blocks)


def test_an_implicit_account_made_by_a_transfer_is_charged_too() -> None:
    chain, fees, alice = _chain()
    implicit = "a" * 64
    blocks = chain.run([alice.sign(implicit, [Transfer(NEAR)], chain.block_hash)])
    # the transfer's execution fee holds create_account's and add_full_access_key's (transfer_exec_fee)
    execution = (
        fees.receipt["execution"] + fees.action("transfer_cost") + fees.action("create_account_cost") + fees.full_key()
    )
    charge = fees.account_charge - fees.action("create_account_cost") * BLOCK_PRICE
    receipt = outcomes(blocks)[1]
    assert receipt["outcome"]["gas_burnt"] == execution
    assert receipt["outcome"]["tokens_burnt"] == str(execution * BLOCK_PRICE + charge)
    assert chain.state.accounts[implicit].amount == NEAR


def test_a_failed_receipt_refunds_its_deposit_and_charges_no_account() -> None:
    chain, fees, alice = _chain()
    supply = _supply(chain)
    blocks = chain.run([alice.sign("dave.bob.test", [CreateAccount(), Transfer(NEAR)], chain.block_hash)])

    send = (
        fees.receipt["send_not_sir"]
        + fees.action("create_account_cost", "send_not_sir")
        + fees.action("transfer_cost", "send_not_sir")
    )
    _, receipt, deposit_back, gas_back = outcomes(blocks)
    kind = receipt["outcome"]["status"]["Failure"]["ActionError"]["kind"]
    assert kind == {"CreateAccountNotAllowed": {"account_id": "dave.bob.test", "predecessor_id": "alice.test"}}
    # the failed action's fee is burnt; the transfer's, never run, comes back at the purchase price
    burnt_gas = fees.receipt["execution"] + fees.action("create_account_cost")
    assert receipt["outcome"]["gas_burnt"] == burnt_gas
    assert receipt["outcome"]["tokens_burnt"] == str(burnt_gas * BLOCK_PRICE)
    assert receipt["outcome"]["metadata"]["contracts"] == [None, None]  # the second slot never ran
    assert receipt["outcome"]["receipt_ids"] == [deposit_back["id"], gas_back["id"]]
    deposit_view, gas_view = (applied.view for applied in blocks[2].receipts)
    assert deposit_view["receipt"]["Action"]["signer_id"] == "system" and _deposit(deposit_view) == NEAR
    unused = fees.action("transfer_cost") * fees.purchase_price
    assert _deposit(gas_view) == unused + (fees.purchase_price - BLOCK_PRICE) * burnt_gas
    assert chain.state.accounts["alice.test"].amount == 10 * NEAR - (send + burnt_gas) * BLOCK_PRICE
    assert supply - _supply(chain) == burnt(blocks) == sum(block.tokens_burnt for block in blocks)


def _deploy_counter(chain: Chain) -> None:
    counter = Signer("counter.test")
    chain.add_account(counter, 10 * NEAR)
    code = (SAMPLE_CONTRACTS / "counter.wasm").read_bytes()
    chain.run([counter.sign("counter.test", [DeployContract(code)], chain.block_hash)])


@pytest.mark.parametrize("protocol_version", [86, 87])
def test_a_call_refunds_its_unused_gas_and_the_surplus_and_rewards_the_contract(protocol_version: int) -> None:
    chain, fees, alice = _chain(protocol_version)
    _deploy_counter(chain)
    counter_before = chain.state.accounts["counter.test"].amount
    supply = _supply(chain)
    attached = 30 * TGAS
    blocks = chain.run([alice.sign("counter.test", [FunctionCall("increment", b"", attached, 0)], chain.block_hash)])

    method = len("increment")
    send = (
        fees.receipt["send_not_sir"]
        + fees.action("function_call_cost", "send_not_sir")
        + fees.action("function_call_cost_per_byte", "send_not_sir") * method
    )
    exec_fees = (
        fees.receipt["execution"]
        + fees.action("function_call_cost")
        + fees.action("function_call_cost_per_byte") * method
    )
    conversion, receipt, refund = outcomes(blocks)
    gas_burnt = receipt["outcome"]["gas_burnt"]
    contract_gas = gas_burnt - exec_fees
    assert 0 < contract_gas < attached
    assert receipt["outcome"]["tokens_burnt"] == str(gas_burnt * BLOCK_PRICE)
    code_hash = chain.state.accounts["counter.test"].code_hash
    assert code_hash == code_hash_of((SAMPLE_CONTRACTS / "counter.wasm").read_bytes())
    assert receipt["outcome"]["metadata"]["contracts"] == [{"local": code_hash}]
    # the unused gas (no promise: used == burnt) at the purchase price, the burnt gas's surplus,
    # no penalty (gas_refund_penalty 0/100 up to 87)
    unused = attached + exec_fees - gas_burnt
    expected_refund = unused * fees.purchase_price + (fees.purchase_price - BLOCK_PRICE) * gas_burnt
    assert _deposit(blocks[2].receipts[0].view) == expected_refund
    # 30% of the contract's gas at the burn price at 86; nothing from 87 (RemoveGasRewards)
    numerator, denominator = fees.reward
    assert (numerator, denominator) == ((3, 10) if protocol_version == 86 else (0, 1))
    reward = contract_gas * numerator // denominator * BLOCK_PRICE
    assert chain.state.accounts["counter.test"].amount - counter_before == reward
    assert chain.state.accounts["alice.test"].amount == 10 * NEAR - (send + gas_burnt) * BLOCK_PRICE
    assert conversion["outcome"]["tokens_burnt"] == str(send * BLOCK_PRICE)
    assert refund["outcome"]["tokens_burnt"] == "0"
    assert supply - _supply(chain) == burnt(blocks) - reward == sum(block.tokens_burnt for block in blocks)


def test_a_refund_penalty_is_taken_at_the_burn_price() -> None:
    # NEP-536's penalty as its NEP proposed it (5%, at least 1 Tgas): nearcore's parameters keep
    # 0 up to 87, so the config is given the numbers the runtime would read
    chain, fees, alice = _chain()
    chain.config = {**chain.config, "gas_refund_penalty": [5, 100], "min_gas_refund_penalty": TGAS}
    _deploy_counter(chain)
    attached = 100 * TGAS
    blocks = chain.run([alice.sign("counter.test", [FunctionCall("increment", b"", attached, 0)], chain.block_hash)])
    receipt = outcomes(blocks)[1]
    gas_burnt = receipt["outcome"]["gas_burnt"]
    exec_fees = (
        fees.receipt["execution"]
        + fees.action("function_call_cost")
        + fees.action("function_call_cost_per_byte") * len("increment")
    )
    unused = attached + exec_fees - gas_burnt
    penalty = max(unused * 5 // 100, TGAS) * BLOCK_PRICE
    assert receipt["outcome"]["tokens_burnt"] == str(gas_burnt * BLOCK_PRICE + penalty)
    surplus = (fees.purchase_price - BLOCK_PRICE) * gas_burnt
    assert _deposit(blocks[2].receipts[0].view) == unused * fees.purchase_price - penalty + surplus


def test_protocol_84_burns_at_the_receipts_price_with_no_surplus_refund() -> None:
    chain = Chain(84, BLOCK_PRICE)
    fees_84 = chain.config["transaction_costs"]
    assert chain.config["min_gas_purchase_price"] == "0"
    alice = Signer("alice.test")
    chain.add_account(alice, 10 * NEAR)
    chain.add_account(Signer("bob.test"), NEAR)
    blocks = chain.run([alice.sign("bob.test", [Transfer(NEAR)], chain.block_hash)])
    conversion, receipt = outcomes(blocks)  # no refund receipt: bought and burnt at one price
    execution = fees_84["action_receipt_creation_config"]["execution"] + int(
        fees_84["action_creation_config"]["transfer_cost"]["execution"]
    )
    assert receipt["outcome"]["tokens_burnt"] == str(execution * BLOCK_PRICE)
    assert receipt["outcome"]["metadata"] == {"version": 3, "gas_profile": []}
    assert json.dumps(conversion["outcome"]["metadata"]) == '{"version": 1}'
