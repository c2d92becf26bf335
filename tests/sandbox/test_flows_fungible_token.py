"""`ft_transfer_call` from near-sdk-rs's fungible token example to its DeFi receiver, through the
runtime: the token moves, the receiver's `ft_on_transfer` answers how much it did not use (at
once, or through its own `value_please` call), and the token's `ft_resolve_transfer` callback
refunds that much to the sender. What the sources say (near-contract-standards 4,
fungible_token/core_impl.rs; examples/fungible-token/test-contract-defi/src/lib.rs):
- msg "take-my-money": `ft_on_transfer` returns 0 at once, the receiver keeps all;
- any other msg: `value_please(msg)` returns msg as the unused amount (refunded up to the
  amount); a msg that is no number panics there, the callback sees a failed promise and refunds
  everything;
- `ft_resolve_transfer` returns the amount used, which is the transaction's final value, and
  logs an `ft_transfer` event (memo "refund") for a refund.
Balances of NEAR: what left the total supply equals what the blocks burnt, less the contracts'
rewards (the blocks' own tokens_burnt), so no yoctoNEAR appears or vanishes."""

from __future__ import annotations

import pytest

from tests.sandbox.flows_support import TGAS, Flow, call, deploy, total_near
from tests.sandbox.runtime_support import NEAR, Chain, Signer
from tests.sandbox.runtime_support import view as run_view

TOKEN, DEFI, ALICE = "token.test", "defi.test", "alice.test"
SUPPLY = 1_000_000


def _balance(chain: Chain, account_id: str) -> int:
    return int(str(run_view(chain, TOKEN, "ft_balance_of", {"account_id": account_id})))


def _token_and_receiver() -> tuple[Chain, Signer]:
    chain = Chain()
    alice = Signer(ALICE)
    chain.add_account(alice, 100 * NEAR)
    deploy(
        chain,
        Signer(TOKEN),
        "new_fungible_token.wasm",
        call("new_default_meta", {"owner_id": ALICE, "total_supply": str(SUPPLY)}),
    )
    deploy(chain, Signer(DEFI), "defi.wasm", call("new", {"fungible_token_account_id": TOKEN}))
    bounds = run_view(chain, TOKEN, "storage_balance_bounds")
    assert isinstance(bounds, dict)
    register = call("storage_deposit", {"account_id": DEFI}, deposit=int(bounds["min"]))
    assert Flow.of(chain.run([alice.sign(TOKEN, [register], chain.block_hash)])).failures() == []
    return chain, alice


def _transfer_call(chain: Chain, alice: Signer, amount: int, msg: str) -> Flow:
    args = {"receiver_id": DEFI, "amount": str(amount), "msg": msg}
    return Flow.of(
        chain.run([alice.sign(TOKEN, [call("ft_transfer_call", args, deposit=1, gas=150 * TGAS)], chain.block_hash)])
    )


@pytest.mark.parametrize(
    ("msg", "refunded"),
    [("take-my-money", 0), ("10", 10), ("100", 100), ("5000", 100)],
    ids=["keeps-all", "refunds-part", "refunds-all", "refund-capped-at-amount"],
)
def test_ft_transfer_call_refunds_what_the_receiver_did_not_use(msg: str, refunded: int) -> None:
    chain, alice = _token_and_receiver()
    near_before = total_near(chain)
    flow = _transfer_call(chain, alice, 100, msg)

    assert _balance(chain, ALICE) == SUPPLY - 100 + refunded
    assert _balance(chain, DEFI) == 100 - refunded
    assert run_view(chain, TOKEN, "ft_total_supply") == str(SUPPLY)
    assert flow.final_value() == str(100 - refunded)  # ft_resolve_transfer's used amount
    assert near_before - total_near(chain) == flow.tokens_burnt()

    executors = [o["outcome"]["executor_id"] for o in flow.receipts()]
    # alice → token (ft_transfer_call) → defi (ft_on_transfer) [→ defi (value_please)] → token (callback)
    calls = [e for e in executors if e in (TOKEN, DEFI)]
    assert calls == ([TOKEN, DEFI, TOKEN] if msg == "take-my-money" else [TOKEN, DEFI, DEFI, TOKEN])
    on_transfer = flow.by_executor(DEFI)[0]
    assert on_transfer["outcome"]["logs"] == [f"in 100 tokens from @{ALICE} ft_on_transfer, msg = {msg}"]
    transfers = [e["data"][0] for e in flow.events("nep141") if e["event"] == "ft_transfer"]
    assert transfers[0] == {"old_owner_id": ALICE, "new_owner_id": DEFI, "amount": "100"}
    if refunded:
        assert transfers[1] == {"old_owner_id": DEFI, "new_owner_id": ALICE, "amount": str(refunded), "memo": "refund"}
    else:
        assert len(transfers) == 1
    assert flow.failures() == []


def test_ft_transfer_call_to_a_receiver_that_panics_is_refunded_in_full() -> None:
    chain, alice = _token_and_receiver()
    flow = _transfer_call(chain, alice, 100, "not a number")

    assert _balance(chain, ALICE) == SUPPLY and _balance(chain, DEFI) == 0
    assert flow.final_value() == "0"
    (failed,) = flow.failures()
    assert failed["outcome"]["executor_id"] == DEFI
    kind = failed["outcome"]["status"]["Failure"]["ActionError"]["kind"]
    assert "Not an integer" in kind["FunctionCallError"]["ExecutionError"]
    # the callback ran after the failure and logged the refund
    callback = flow.by_executor(TOKEN)[-1]
    assert "SuccessValue" in callback["outcome"]["status"]


def test_the_callback_waits_for_the_receivers_answer() -> None:
    """ft_resolve_transfer is made in the same receipt as ft_on_transfer, but runs only once the
    data it waits on (value_please's answer) has arrived: a block after value_please at least."""
    chain, alice = _token_and_receiver()
    flow = _transfer_call(chain, alice, 100, "10")
    height_of: dict[str, int] = {}
    for index, block in enumerate(flow.blocks):
        for applied in block.receipts:
            height_of.setdefault(applied.outcome["outcome"]["executor_id"] + ":" + applied.receipt_id, index)
    value_please = flow.by_executor(DEFI)[1]
    callback = flow.by_executor(TOKEN)[-1]
    assert height_of[f"{TOKEN}:{callback['id']}"] > height_of[f"{DEFI}:{value_please['id']}"]
    # the call that made both names them among its receipts
    maker = flow.by_executor(TOKEN)[0]
    assert callback["id"] in maker["outcome"]["receipt_ids"]


def test_storage_deposit_above_the_bound_refunds_the_excess() -> None:
    chain, _ = _token_and_receiver()
    bob = Signer("bob.test")
    chain.add_account(bob, 10 * NEAR)
    bounds = run_view(chain, TOKEN, "storage_balance_bounds")
    assert isinstance(bounds, dict)
    minimum = int(bounds["min"])
    token_before, bob_before = chain.state.accounts[TOKEN].amount, chain.state.accounts["bob.test"].amount
    flow = Flow.of(chain.run([bob.sign(TOKEN, [call("storage_deposit", {}, deposit=5 * NEAR)], chain.block_hash)]))

    assert flow.failures() == []
    assert run_view(chain, TOKEN, "storage_balance_of", {"account_id": "bob.test"}) == {
        "total": str(minimum),
        "available": "0",
    }
    # the token keeps the bound (and its gas reward); bob gets the rest back in a Transfer receipt
    refund = [o for o in flow.by_executor("bob.test") if o["outcome"]["status"] == {"SuccessValue": ""}]
    assert refund, flow.receipts()
    token_gain = chain.state.accounts[TOKEN].amount - token_before
    assert minimum <= token_gain < minimum + NEAR // 1000
    bob_spent = bob_before - chain.state.accounts["bob.test"].amount
    assert minimum < bob_spent < minimum + NEAR // 1000
