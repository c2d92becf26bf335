"""near-sdk-rs's examples through the runtime's promises (read from the reference folder, skipped
without it): the fungible token's `ft_transfer_call` to the example DeFi receiver, which keeps
all ("take-my-money") or asks its own `value_please` for the amount to give back, which the
token's `ft_resolve_transfer` callback refunds (examples/fungible-token: ft/src/lib.rs,
test-contract-defi/src/lib.rs; near-contract-standards core_impl.rs); the cross-contract
examples' `factorial`, which calls itself down to 1 and multiplies on the way back
(`factorial_mult` reading its promise result, `promise_return` at each level); the NFT's
`nft_transfer_call` to its example token receiver, which keeps or returns the token."""

from __future__ import annotations

import base64
import json

import pytest

from nearrpc.sandbox.runtime.model import BlockResult, DeployContract, FunctionCall
from tests.sandbox.runtime_support import NEAR, Chain, Signer, outcomes, reference_contract
from tests.sandbox.test_apply_contracts import view

TGAS = 10**12


class _Flow:
    def __init__(self) -> None:
        self.chain = Chain()
        self.token, self.defi, self.alice = Signer("token.test"), Signer("defi.test"), Signer("alice.test")
        for signer in (self.token, self.defi, self.alice):
            self.chain.add_account(signer, 50 * NEAR)
        self.deploy(self.token, "new_fungible_token.wasm")
        self.call(self.token, "token.test", "new_default_meta", {"owner_id": "alice.test", "total_supply": "1000"})
        self.deploy(self.defi, "defi.wasm")
        self.call(self.defi, "defi.test", "new", {"fungible_token_account_id": "token.test"})
        self.call(self.alice, "token.test", "storage_deposit", {"account_id": "defi.test"}, deposit=NEAR // 100)

    def deploy(self, signer: Signer, name: str) -> None:
        code = reference_contract(name)
        self.chain.run([signer.sign(signer.account_id, [DeployContract(code)], self.chain.block_hash)])

    def call(self, signer: Signer, receiver: str, method: str, args: object, deposit: int = 0) -> list[BlockResult]:
        action = FunctionCall(method, json.dumps(args).encode(), 100 * TGAS, deposit)
        return self.chain.run([signer.sign(receiver, [action], self.chain.block_hash)])

    def balance(self, account_id: str) -> int:
        return int(str(view(self.chain, "token.test", "ft_balance_of", {"account_id": account_id})))


@pytest.mark.parametrize(("msg", "used"), [("take-my-money", 100), ("10", 90), ("100", 0)])
def test_ft_transfer_call_refunds_what_the_receiver_did_not_use(msg: str, used: int) -> None:
    flow = _Flow()
    args = {"receiver_id": "defi.test", "amount": "100", "msg": msg}
    blocks = flow.call(flow.alice, "token.test", "ft_transfer_call", args, deposit=1)
    assert (flow.balance("alice.test"), flow.balance("defi.test")) == (1000 - used, used)
    assert view(flow.chain, "token.test", "ft_total_supply") == "1000"
    found = outcomes(blocks)
    by_id = {outcome["id"]: outcome for outcome in found}
    # the call returns its callback (ft_resolve_transfer), which returns the amount used
    status = found[1]["outcome"]["status"]
    resolve = by_id[status["SuccessReceiptId"]]
    assert resolve["outcome"]["executor_id"] == "token.test"
    assert resolve["outcome"]["status"] == {"SuccessValue": base64.b64encode(f'"{used}"'.encode()).decode()}
    refunded = [log for outcome in found for log in outcome["outcome"]["logs"] if '"memo":"refund"' in log]
    assert len(refunded) == (1 if used < 100 else 0)


@pytest.mark.parametrize("name", ["new_cross_contract_high_level.wasm", "new_cross_contract_low_level.wasm"])
def test_factorial_calls_itself_through_promises(name: str) -> None:
    chain = Chain()
    contract, alice = Signer("math.test"), Signer("alice.test")
    for signer in (contract, alice):
        chain.add_account(signer, 50 * NEAR)
    chain.run([contract.sign("math.test", [DeployContract(reference_contract(name))], chain.block_hash)])
    call = FunctionCall("factorial", json.dumps({"n": 5}).encode(), 300 * TGAS, 0)
    blocks = chain.run([alice.sign("math.test", [call], chain.block_hash)])
    found = outcomes(blocks)
    by_id = {outcome["id"]: outcome for outcome in found}
    status = found[1]["outcome"]["status"]
    hops = 0
    while "SuccessReceiptId" in status:  # the transaction's final status, as nearcore follows it
        status, hops = by_id[status["SuccessReceiptId"]]["outcome"]["status"], hops + 1
    assert status == {"SuccessValue": base64.b64encode(b"120").decode()}
    # factorial(5) returns factorial_mult(5), which got 24 from factorial(4)'s own returned
    # factorial_mult(4) (the output data receivers handed down each level)
    assert hops == 1
    ran = [outcome for outcome in found[1:] if outcome["outcome"]["executor_id"] == "math.test"]
    assert len(ran) == 9  # factorial 5 to 1, factorial_mult 5 to 2


@pytest.mark.parametrize(("msg", "owner"), [("return-it-now", "alice.test"), ("keep-it-now", "recv.test")])
def test_nft_transfer_call_to_the_example_receiver(msg: str, owner: str) -> None:
    # examples/non-fungible-token: the receiver returns true ("give it back") or false; the
    # token's nft_resolve_transfer then leaves the token with the receiver or returns it
    chain = Chain()
    nft, receiver, alice = Signer("nft.test"), Signer("recv.test"), Signer("alice.test")
    for signer in (nft, receiver, alice):
        chain.add_account(signer, 50 * NEAR)

    def call(signer: Signer, account_id: str, method: str, args: object, deposit: int = 0) -> list[BlockResult]:
        action = FunctionCall(method, json.dumps(args).encode(), 200 * TGAS, deposit)
        return chain.run([signer.sign(account_id, [action], chain.block_hash)])

    for signer, name in ((nft, "new_non_fungible_token.wasm"), (receiver, "token_receiver.wasm")):
        code = reference_contract(name)
        chain.run([signer.sign(signer.account_id, [DeployContract(code)], chain.block_hash)])
    call(nft, "nft.test", "new_default_meta", {"owner_id": "alice.test"})
    call(receiver, "recv.test", "new", {"non_fungible_token_account_id": "nft.test"})
    mint = {"token_id": "t1", "token_owner_id": "alice.test", "token_metadata": {"title": "x"}}
    call(alice, "nft.test", "nft_mint", mint, deposit=NEAR // 10)
    blocks = call(alice, "nft.test", "nft_transfer_call", {"receiver_id": "recv.test", "token_id": "t1", "msg": msg}, 1)
    token = view(chain, "nft.test", "nft_token", {"token_id": "t1"})
    assert isinstance(token, dict) and token["owner_id"] == owner
    found = outcomes(blocks)
    by_id = {outcome["id"]: outcome for outcome in found}
    resolve = by_id[found[1]["outcome"]["status"]["SuccessReceiptId"]]
    # nft_resolve_transfer answers whether the token moved
    moved = b"true" if owner == "recv.test" else b"false"
    assert resolve["outcome"]["status"] == {"SuccessValue": base64.b64encode(moved).decode()}
