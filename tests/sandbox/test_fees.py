"""Fees against nearcore's formula (runtime/runtime/src/config.rs `tx_cost`) for the sample chain's
protocol (its EXPERIMENTAL_protocol_config at the head, protocol 87): the expected numbers are
worked out here from the config's own values, not from fees.py."""

from __future__ import annotations

from typing import Any

import pytest

from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.sandbox.runtime import encode, fees, model
from tests.sandbox.support import ed25519_secret, protocol_config, runtime_config, transaction

KEY = encode.public_key_of(ed25519_secret("alice"))
CONFIG = runtime_config()
FEES = fees.FeeConfig.from_runtime_config(CONFIG)
COSTS = CONFIG["transaction_costs"]
ACTIONS = COSTS["action_creation_config"]
RECEIPT = COSTS["action_receipt_creation_config"]
MIN_PURCHASE = int(CONFIG["min_gas_purchase_price"])
NEAR_IMPLICIT = "a" * 64
ETH_IMPLICIT = "0x" + "b" * 40
TGAS = 10**12


def send(fee: dict[str, Any], sir: bool = False) -> int:
    return int(fee["send_sir"] if sir else fee["send_not_sir"])


def test_the_sample_runs_protocol_87_with_nep_642() -> None:
    """The rules below are those of the protocol the sample chain's head runs."""
    assert protocol_config()["protocol_version"] == 87
    assert MIN_PURCHASE == 10**9
    assert COSTS["pessimistic_gas_price_inflation_ratio"] == [1, 1]


@pytest.mark.parametrize("gas_price", [10**8, 5 * 10**9], ids=["below-min-purchase", "above-min-purchase"])
def test_a_transfer_to_a_named_account(gas_price: int) -> None:
    cost = fees.tx_cost(FEES, transaction(KEY, model.Transfer(deposit=10**24)), gas_price)
    burnt = send(RECEIPT) + send(ACTIONS["transfer_cost"])
    remaining = RECEIPT["execution"] + ACTIONS["transfer_cost"]["execution"]
    receipt_price = max(gas_price, MIN_PURCHASE)
    assert (cost.gas_burnt, cost.gas_remaining, cost.receipt_gas_price) == (burnt, remaining, receipt_price)
    assert cost.burnt_amount == burnt * gas_price
    assert cost.total_cost == burnt * gas_price + remaining * receipt_price + 10**24
    assert cost.deposit_cost == 10**24


def test_a_transfer_to_oneself_pays_the_sir_fees() -> None:
    tx = transaction(KEY, model.Transfer(deposit=1), receiver_id="alice.localnet")
    cost = fees.tx_cost(FEES, tx, 10**8)
    assert cost.gas_burnt == send(RECEIPT, sir=True) + send(ACTIONS["transfer_cost"], sir=True)


def test_a_transfer_to_a_near_implicit_account_pays_for_the_account_and_its_key() -> None:
    cost = fees.tx_cost(FEES, transaction(KEY, model.Transfer(deposit=1), receiver_id=NEAR_IMPLICIT), 10**8)
    extra = [ACTIONS["create_account_cost"], ACTIONS["add_key_cost"]["full_access_cost"], ACTIONS["transfer_cost"]]
    assert cost.gas_burnt == send(RECEIPT) + sum(send(fee) for fee in extra)
    assert cost.gas_remaining == RECEIPT["execution"] + sum(fee["execution"] for fee in extra)


def test_a_transfer_to_an_eth_implicit_account_pays_for_the_account() -> None:
    assert CONFIG["wasm_config"]["eth_implicit_accounts"] is True
    cost = fees.tx_cost(FEES, transaction(KEY, model.Transfer(deposit=1), receiver_id=ETH_IMPLICIT), 10**8)
    extra = [ACTIONS["create_account_cost"], ACTIONS["transfer_cost"]]
    assert cost.gas_burnt == send(RECEIPT) + sum(send(fee) for fee in extra)
    assert cost.gas_remaining == RECEIPT["execution"] + sum(fee["execution"] for fee in extra)


def test_account_types() -> None:
    assert fees.account_type(NEAR_IMPLICIT) == "NearImplicitAccount"
    assert fees.account_type(ETH_IMPLICIT) == "EthImplicitAccount"
    assert fees.account_type("A" * 64) == "NamedAccount"  # upper case is no hex here
    assert fees.account_type("0x" + "b" * 39) == "NamedAccount"
    assert fees.account_type("0s" + "c" * 40) == "NearDeterministicAccount"


def test_a_transfer_to_a_deterministic_account_pays_for_the_account() -> None:
    cost = fees.tx_cost(FEES, transaction(KEY, model.Transfer(deposit=1), receiver_id="0s" + "c" * 40), 10**8)
    assert cost.gas_burnt == send(RECEIPT) + send(ACTIONS["create_account_cost"]) + send(ACTIONS["transfer_cost"])


def test_a_function_call_buys_its_prepaid_gas() -> None:
    call = model.FunctionCall(method_name="ft_transfer", args=b'{"amount":"1"}', gas=30 * TGAS, deposit=1)
    cost = fees.tx_cost(FEES, transaction(KEY, call, receiver_id="token.localnet"), 10**8)
    size = len("ft_transfer") + len(b'{"amount":"1"}')
    base, per_byte = ACTIONS["function_call_cost"], ACTIONS["function_call_cost_per_byte"]
    assert cost.gas_burnt == send(RECEIPT) + send(base) + send(per_byte) * size
    remaining = 30 * TGAS + RECEIPT["execution"] + base["execution"] + per_byte["execution"] * size
    assert cost.gas_remaining == remaining
    assert cost.total_cost == cost.gas_burnt * 10**8 + remaining * MIN_PURCHASE + 1


def test_deploy_and_keys_count_their_bytes() -> None:
    code = b"\x00asm" + bytes(1000)
    permission = model.FunctionCallPermission(allowance=None, receiver_id="x.localnet", method_names=("a", "bcd"))
    actions = (
        model.CreateAccount(),
        model.DeployContract(code=code),
        model.AddKey(public_key=KEY, access_key=model.AccessKey(nonce=0, permission=permission)),
        model.AddKey(public_key=KEY, access_key=model.AccessKey(nonce=0, permission=None)),
        model.DeleteKey(public_key=KEY),
        model.Stake(stake=1, public_key=KEY),
        model.DeleteAccount(beneficiary_id="bob.localnet"),
    )
    cost = fees.tx_cost(FEES, transaction(KEY, *actions, receiver_id="new.alice.localnet"), 10**8)
    add_key = ACTIONS["add_key_cost"]
    key_bytes = (1 + 1) + (3 + 1)  # each method name and its terminating character
    parts = [
        (ACTIONS["create_account_cost"], 1),
        (ACTIONS["deploy_contract_cost"], 1),
        (ACTIONS["deploy_contract_cost_per_byte"], len(code)),
        (add_key["function_call_cost"], 1),
        (add_key["function_call_cost_per_byte"], key_bytes),
        (add_key["full_access_cost"], 1),
        (ACTIONS["delete_key_cost"], 1),
        (ACTIONS["stake_cost"], 1),
        (ACTIONS["delete_account_cost"], 1),
    ]
    assert cost.gas_burnt == send(RECEIPT) + sum(send(fee) * n for fee, n in parts)
    assert cost.gas_remaining == RECEIPT["execution"] + sum(fee["execution"] * n for fee, n in parts)


def test_a_delegate_action_prepays_its_inner_receipt() -> None:
    inner_call = model.FunctionCall(method_name="go", args=b"", gas=5 * TGAS, deposit=7)
    inner = model.DelegateAction(
        sender_id="alice.localnet",
        receiver_id="token.localnet",
        actions=(inner_call, model.Transfer(deposit=3)),
        nonce=1,
        max_block_height=100,
        public_key=KEY,
    )
    delegate = encode.sign_delegate_action(inner, ed25519_secret("alice"))
    tx = transaction(KEY, delegate, signer_id="relayer.localnet", receiver_id="alice.localnet")
    cost = fees.tx_cost(FEES, tx, 10**8)
    call_fee = [(ACTIONS["function_call_cost"], 1), (ACTIONS["function_call_cost_per_byte"], 2)]
    inner_fees = [*call_fee, (ACTIONS["transfer_cost"], 1)]
    inner_send = sum(send(fee) * n for fee, n in inner_fees)  # inner sender != inner receiver
    inner_exec = sum(fee["execution"] * n for fee, n in inner_fees)
    delegate_fee = ACTIONS["delegate_cost"]
    # burnt: the receipt and the Delegate's send fees, and the inner actions' at the outer sir
    assert cost.gas_burnt == send(RECEIPT) + send(delegate_fee) + inner_send
    # bought: the inner gas, the inner receipt's send fees, both receipts' and every action's exec fees
    remaining = 5 * TGAS + inner_send + RECEIPT["execution"]
    remaining += inner_exec + delegate_fee["execution"] + RECEIPT["execution"]
    assert cost.gas_remaining == remaining
    assert cost.deposit_cost == 10  # the relayer pays the inner deposits


def test_the_pessimistic_price_of_old_protocols() -> None:
    """Before protocol 78 the receipt's gas was bought at 103/100 of the price per possible hop."""
    old = fees.FeeConfig.from_runtime_config(
        {
            **CONFIG,
            "min_gas_purchase_price": "0",
            "transaction_costs": {**COSTS, "pessimistic_gas_price_inflation_ratio": [103, 100]},
        }
    )
    call = model.FunctionCall(method_name="m", args=b"", gas=300 * TGAS, deposit=0)
    cost = fees.tx_cost(old, transaction(KEY, call), 10**8)
    minimum = min(send(RECEIPT), send(RECEIPT, True)) + RECEIPT["execution"]
    minimum += min(send(ACTIONS["function_call_cost"]), send(ACTIONS["function_call_cost"], True))
    minimum += ACTIONS["function_call_cost"]["execution"]
    hops = 1 + 300 * TGAS // minimum
    assert cost.receipt_gas_price == -(-(103**hops) * 10**8 // 100**hops)  # rounded up


def test_sums_past_nearcores_widths_overflow() -> None:
    calls = [model.FunctionCall(method_name="m", args=b"", gas=2**63, deposit=0)] * 2
    with pytest.raises(fees.CostOverflow):
        fees.tx_cost(FEES, transaction(KEY, *calls), 10**8)
    with pytest.raises(fees.CostOverflow):
        fees.tx_cost(FEES, transaction(KEY, model.Transfer(2**127), model.Transfer(2**127)), 10**8)


def test_gas_to_tokens() -> None:
    assert fees.gas_to_tokens(3 * TGAS, 10**9) == 3 * 10**21


def config_of(version: int) -> fees.FeeConfig:
    """The runtime config nearcore has for `version` (the project's parameter tables)."""
    return fees.FeeConfig.from_runtime_config(RuntimeParamStore.load().spec_view(version, "mainnet"))


def test_each_protocols_price_for_the_receipts_gas() -> None:
    transfer = transaction(KEY, model.Transfer(deposit=1))
    # 84: no minimum purchase price yet, no inflation any more (78)
    assert fees.tx_cost(config_of(84), transfer, 10**8).receipt_gas_price == 10**8
    # 85 on: NEP-642's minimum
    assert fees.tx_cost(config_of(85), transfer, 10**8).receipt_gas_price == 10**9
    # 77: one 103/100 inflation for the hop to another account, rounded up
    assert fees.tx_cost(config_of(77), transfer, 10**8 + 1).receipt_gas_price == -(-(10**8 + 1) * 103 // 100)
    to_self = transaction(KEY, model.Transfer(deposit=1), receiver_id="alice.localnet")
    assert fees.tx_cost(config_of(77), to_self, 10**8).receipt_gas_price == 10**8


def test_eth_implicit_accounts_are_created_from_protocol_70() -> None:
    tx = transaction(KEY, model.Transfer(deposit=1), receiver_id=ETH_IMPLICIT)
    plain = send(RECEIPT) + send(ACTIONS["transfer_cost"])
    before, after = config_of(69), config_of(70)
    assert (
        fees.tx_cost(before, tx, 10**8).gas_burnt
        == before.new_action_receipt.send_not_sir + before.transfer.send_not_sir
    )
    assert fees.tx_cost(after, tx, 10**8).gas_burnt == (
        after.new_action_receipt.send_not_sir + after.transfer.send_not_sir + after.create_account.send_not_sir
    )
    assert plain == FEES.new_action_receipt.send_not_sir + FEES.transfer.send_not_sir
