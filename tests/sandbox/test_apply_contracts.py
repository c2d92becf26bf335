"""Contracts deployed and called through the runtime: the sample chain's counter, and
near-sdk-rs's fungible token and status message (read from the reference folder, skipped
without it); balances move by the amounts plus the tokens burnt, less the contract's reward."""

from __future__ import annotations

import json
from pathlib import Path

from nearrpc.sandbox.runtime.actions import code_hash_of
from nearrpc.sandbox.runtime.model import DeployContract, FunctionCall
from tests.sandbox.runtime_support import (
    GAS_PRICE,
    NEAR,
    RECEIPT_FEE,
    Chain,
    Signer,
    burnt,
    fee,
    outcomes,
    reference_contract,
    view,
)

SAMPLE_CONTRACTS = Path(__file__).resolve().parents[2] / "service" / "sample" / "contracts"
TGAS = 10**12


def _total(chain: Chain) -> int:
    return sum(account.amount + account.locked for account in chain.state.accounts.values())


def _call(method: str, args: object, deposit: int = 0, gas: int = 30 * TGAS) -> FunctionCall:
    return FunctionCall(method, json.dumps(args).encode(), gas, deposit)


def test_deploy_then_a_call_that_writes_storage() -> None:
    chain = Chain()
    counter = Signer("counter.test")
    chain.add_account(counter, 10 * NEAR)
    code = (SAMPLE_CONTRACTS / "counter.wasm").read_bytes()
    blocks = chain.run([counter.sign("counter.test", [DeployContract(code)], chain.block_hash)])
    conversion, receipt = outcomes(blocks)
    per_byte = fee("deploy_contract_cost_per_byte", "send_sir") * len(code)
    assert (
        conversion["outcome"]["gas_burnt"]
        == RECEIPT_FEE["send_sir"] + fee("deploy_contract_cost", "send_sir") + per_byte
    )
    execution = (
        RECEIPT_FEE["execution"] + fee("deploy_contract_cost") + fee("deploy_contract_cost_per_byte") * len(code)
    )
    assert receipt["outcome"]["gas_burnt"] == execution
    account = chain.state.accounts["counter.test"]
    assert account.code_hash == code_hash_of(code) and account.storage_usage == 182 + len(code)

    before = chain.state.accounts["counter.test"].amount
    blocks = chain.run([counter.sign("counter.test", [FunctionCall("increment", b"", 10 * TGAS, 0)], chain.block_hash)])
    found = outcomes(blocks)
    assert found[1]["outcome"]["status"] == {"SuccessValue": ""}
    assert view(chain, "counter.test", "get_num") == 1
    after = chain.state.accounts["counter.test"]
    # a new record: the key "STATE", an 8-byte value and 40 bytes of record
    assert after.storage_usage == 182 + len(code) + 5 + 8 + 40
    assert chain.state.data[("counter.test", b"STATE")] == (1).to_bytes(8, "little")
    chain.run([counter.sign("counter.test", [FunctionCall("increment", b"", 10 * TGAS, 0)], chain.block_hash)])
    assert view(chain, "counter.test", "get_num") == 2
    assert chain.state.accounts["counter.test"].storage_usage == after.storage_usage  # replaced in place
    # a call to oneself: the fees are burnt, the unused gas refunded, the reward paid back
    contract_gas = (
        found[1]["outcome"]["gas_burnt"]
        - RECEIPT_FEE["execution"]
        - fee("function_call_cost")
        - fee("function_call_cost_per_byte") * len("increment")
    )
    reward = contract_gas * 3 // 10 * GAS_PRICE
    assert before - after.amount == burnt(blocks) - reward
    assert len(found) == 3 and found[2]["outcome"]["executor_id"] == "counter.test"  # the gas refund
    # the profile accounts for the contract's gas: host costs and instructions, sorted by name
    profile = found[1]["outcome"]["metadata"]["gas_profile"]
    assert [entry["cost"] for entry in profile] == sorted(entry["cost"] for entry in profile)
    assert {"BASE", "CONTRACT_LOADING_BYTES", "STORAGE_WRITE_BASE", "WASM_INSTRUCTION"} <= {e["cost"] for e in profile}
    assert sum(int(entry["gas_used"]) for entry in profile) == contract_gas


def test_a_call_past_its_prepaid_gas_fails_and_keeps_no_write() -> None:
    chain = Chain()
    counter = Signer("counter.test")
    chain.add_account(counter, 10 * NEAR)
    code = (SAMPLE_CONTRACTS / "counter.wasm").read_bytes()
    chain.run([counter.sign("counter.test", [DeployContract(code)], chain.block_hash)])
    usage = chain.state.accounts["counter.test"].storage_usage
    blocks = chain.run([counter.sign("counter.test", [FunctionCall("increment", b"", 10**9, 0)], chain.block_hash)])
    status = outcomes(blocks)[1]["outcome"]["status"]
    assert status == {
        "Failure": {
            "ActionError": {"index": 0, "kind": {"FunctionCallError": {"ExecutionError": "Exceeded the prepaid gas."}}}
        }
    }
    assert chain.state.accounts["counter.test"].storage_usage == usage
    assert not [key for owner, key in chain.state.data if owner == "counter.test"]


def test_calling_an_account_without_code() -> None:
    chain = Chain()
    alice = Signer("alice.test")
    chain.add_account(alice, 10 * NEAR)
    blocks = chain.run([alice.sign("alice.test", [FunctionCall("go", b"", TGAS, 0)], chain.block_hash)])
    kind = outcomes(blocks)[1]["outcome"]["status"]["Failure"]["ActionError"]["kind"]
    assert kind == {"FunctionCallError": {"CompilationError": {"CodeDoesNotExist": {"account_id": "alice.test"}}}}


def test_near_sdk_fungible_token_new_storage_deposit_and_transfer() -> None:
    code = reference_contract("new_fungible_token.wasm")
    chain = Chain()
    token, alice, bob = Signer("token.test"), Signer("alice.test"), Signer("bob.test")
    chain.add_account(token, 50 * NEAR)
    chain.add_account(alice, 10 * NEAR)
    chain.add_account(bob, 10 * NEAR)
    init = _call("new_default_meta", {"owner_id": "alice.test", "total_supply": "1000000"}, gas=100 * TGAS)
    blocks = chain.run([token.sign("token.test", [DeployContract(code), init], chain.block_hash)])
    assert outcomes(blocks)[1]["outcome"]["status"] == {"SuccessValue": ""}, outcomes(blocks)[1]
    assert view(chain, "token.test", "ft_balance_of", {"account_id": "alice.test"}) == "1000000"

    bound = view(chain, "token.test", "storage_balance_bounds")
    assert isinstance(bound, dict)
    minimum = int(bound["min"])
    supply, bob_before, token_before = (
        _total(chain),
        chain.state.accounts["bob.test"].amount,
        chain.state.accounts["token.test"].amount,
    )
    deposit = _call("storage_deposit", {"account_id": "bob.test"}, deposit=minimum)
    blocks = chain.run([bob.sign("token.test", [deposit], chain.block_hash)])
    found = outcomes(blocks)
    assert found[1]["outcome"]["status"]["SuccessValue"]  # the storage balance, as JSON
    contract_gas = (
        found[1]["outcome"]["gas_burnt"]
        - RECEIPT_FEE["execution"]
        - fee("function_call_cost")
        - fee("function_call_cost_per_byte") * (len("storage_deposit") + len(deposit.args))
    )
    reward = contract_gas * 3 // 10 * GAS_PRICE
    # exactly the bound: no refund of the deposit, only the unused gas comes back
    assert [o["outcome"]["executor_id"] for o in found] == ["bob.test", "token.test", "bob.test"]
    assert bob_before - chain.state.accounts["bob.test"].amount == minimum + burnt(blocks)
    assert chain.state.accounts["token.test"].amount - token_before == minimum + reward
    assert supply - _total(chain) == burnt(blocks) - reward

    transfer = _call("ft_transfer", {"receiver_id": "bob.test", "amount": "250"}, deposit=1)
    blocks = chain.run([alice.sign("token.test", [transfer], chain.block_hash)])
    receipt = outcomes(blocks)[1]
    assert receipt["outcome"]["status"] == {"SuccessValue": ""}, receipt
    assert receipt["outcome"]["logs"] and "ft_transfer" in receipt["outcome"]["logs"][0]
    assert view(chain, "token.test", "ft_balance_of", {"account_id": "bob.test"}) == "250"
    assert view(chain, "token.test", "ft_balance_of", {"account_id": "alice.test"}) == "999750"


def test_near_sdk_status_message() -> None:
    code = reference_contract("new_status_message.wasm")
    chain = Chain()
    status, alice = Signer("status.test"), Signer("alice.test")
    chain.add_account(status, 50 * NEAR)
    chain.add_account(alice, 10 * NEAR)
    chain.run([status.sign("status.test", [DeployContract(code)], chain.block_hash)])
    blocks = chain.run([alice.sign("status.test", [_call("set_status", {"message": "hello"})], chain.block_hash)])
    assert outcomes(blocks)[1]["outcome"]["status"] == {"SuccessValue": ""}, outcomes(blocks)[1]
    assert view(chain, "status.test", "get_status", {"account_id": "alice.test"}) == "hello"
