"""near-sdk-rs's NFT example and its two receivers, through the runtime. What the sources say
(near-contract-standards 4, non_fungible_token/core/core_impl.rs, approval/approval_impl.rs,
utils.rs; examples/non-fungible-token/test-token-receiver, test-approval-receiver):
- `nft_mint` (the owner only) charges the storage the token took at `storage_byte_cost` and sends
  back the rest of the attached deposit in a Transfer receipt (`refund_deposit_to_account`);
- `nft_transfer_call` moves the token, calls the receiver's `nft_on_transfer` and then its own
  `nft_resolve_transfer`, which gives the token back when the receiver answers true or fails,
  and returns whether the receiver kept it (the transaction's final value);
- the token receiver answers "return-it-now"/"keep-it-now" at once, "return-it-later"/
  "keep-it-later" through its own `ok_go` call, and panics on any other message;
- `nft_approve` with a msg calls the approval receiver's `nft_on_approve`, whose answer ("cool"
  for "return-now", else the msg through `ok_go`) is the transaction's final value."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sandbox.flows_support import TGAS, Flow, call, deploy, total_near
from tests.sandbox.runtime_support import NEAR, Chain, Signer
from tests.sandbox.runtime_support import view as run_view

NFT, RECEIVER, APPROVER, ALICE = "nft.test", "receiver.test", "approver.test", "alice.test"
STORAGE_BYTE_COST = 10**19  # runtime_config.storage_amount_per_byte
METADATA = {"title": "Olympus Mons", "description": "The tallest mountain in the charted solar system", "copies": 1}


def _owner(chain: Chain, token_id: str) -> str:
    token = run_view(chain, NFT, "nft_token", {"token_id": token_id})
    assert isinstance(token, dict)
    return str(token["owner_id"])


def _transfers(flow: Flow, receiver_id: str, system: bool = False) -> list[int]:
    """The deposits of the Transfer receipts sent to `receiver_id` by contracts (`system`: by the
    runtime, its refunds of gas and of a failed receipt's deposit)."""
    found = []
    for block in flow.blocks:
        for applied in block.receipts:
            view: Any = applied.view
            if view["receiver_id"] != receiver_id or (view["predecessor_id"] == "system") is not system:
                continue
            for action in view["receipt"]["Action"]["actions"]:
                if isinstance(action, dict) and "Transfer" in action:
                    found.append(int(action["Transfer"]["deposit"]))
    return found


def _minted() -> tuple[Chain, Signer, Flow, int]:
    chain = Chain()
    alice = Signer(ALICE)
    chain.add_account(alice, 100 * NEAR)
    deploy(chain, Signer(NFT), "new_non_fungible_token.wasm", call("new_default_meta", {"owner_id": ALICE}))
    deploy(chain, Signer(RECEIVER), "token_receiver.wasm", call("new", {"non_fungible_token_account_id": NFT}))
    deploy(chain, Signer(APPROVER), "approval_receiver.wasm", call("new", {"non_fungible_token_account_id": NFT}))
    usage_before = chain.state.accounts[NFT].storage_usage
    mint = call("nft_mint", {"token_id": "0", "token_owner_id": ALICE, "token_metadata": METADATA}, deposit=NEAR)
    flow = Flow.of(chain.run([alice.sign(NFT, [mint], chain.block_hash)]))
    assert flow.failures() == [], flow.failures()
    return chain, alice, flow, chain.state.accounts[NFT].storage_usage - usage_before


def test_nft_mint_keeps_the_storage_cost_and_refunds_the_rest() -> None:
    chain, _, flow, storage_used = _minted()
    assert storage_used > 0
    assert _transfers(flow, ALICE) == [NEAR - storage_used * STORAGE_BYTE_COST]
    assert _owner(chain, "0") == ALICE
    (event,) = flow.events("nep171")
    assert event["event"] == "nft_mint" and event["data"][0]["token_ids"] == ["0"]


def test_nft_mint_by_anyone_but_the_owner_fails_and_returns_the_deposit() -> None:
    chain, _, _, _ = _minted()
    bob = Signer("bob.test")
    chain.add_account(bob, 10 * NEAR)
    mint = call("nft_mint", {"token_id": "1", "token_owner_id": "bob.test", "token_metadata": METADATA}, deposit=NEAR)
    flow = Flow.of(chain.run([bob.sign(NFT, [mint], chain.block_hash)]))
    (failed,) = flow.failures()
    assert (
        "Unauthorized"
        in failed["outcome"]["status"]["Failure"]["ActionError"]["kind"]["FunctionCallError"]["ExecutionError"]
    )
    assert _transfers(flow, "bob.test") == []
    assert NEAR in _transfers(flow, "bob.test", system=True)  # the failed receipt's deposit, back to its predecessor


def test_nft_transfer_moves_the_token() -> None:
    chain, alice, _, _ = _minted()
    transfer = call("nft_transfer", {"receiver_id": "bob.test", "token_id": "0", "memo": "simple transfer"}, deposit=1)
    flow = Flow.of(chain.run([alice.sign(NFT, [transfer], chain.block_hash)]))
    assert flow.failures() == []
    assert _owner(chain, "0") == "bob.test"
    (event,) = flow.events("nep171")
    assert event["event"] == "nft_transfer"
    assert event["data"][0]["old_owner_id"] == ALICE and event["data"][0]["new_owner_id"] == "bob.test"


@pytest.mark.parametrize(
    ("msg", "kept", "extra_call"),
    [
        ("return-it-now", False, False),
        ("keep-it-now", True, False),
        ("return-it-later", False, True),
        ("keep-it-later", True, True),
    ],
)
def test_nft_transfer_call_resolves_as_the_receiver_answers(msg: str, kept: bool, extra_call: bool) -> None:
    chain, alice, _, _ = _minted()
    near_before = total_near(chain)
    args = {"receiver_id": RECEIVER, "token_id": "0", "msg": msg}
    flow = Flow.of(
        chain.run([alice.sign(NFT, [call("nft_transfer_call", args, deposit=1, gas=150 * TGAS)], chain.block_hash)])
    )

    assert flow.failures() == []
    assert flow.final_value() is kept  # nft_resolve_transfer: did the receiver keep it
    assert _owner(chain, "0") == (RECEIVER if kept else ALICE)
    on_transfer = flow.by_executor(RECEIVER)[0]["outcome"]["logs"]
    assert len(on_transfer) == 1 and on_transfer[0].startswith(f"in nft_on_transfer; sender_id={ALICE}")
    assert any(line.startswith("in ok_go") for line in flow.logs()) is extra_call
    assert near_before - total_near(chain) == flow.tokens_burnt()


def test_nft_transfer_call_to_a_receiver_that_panics_returns_the_token() -> None:
    chain, alice, _, _ = _minted()
    args = {"receiver_id": RECEIVER, "token_id": "0", "msg": "incorrect message"}
    flow = Flow.of(
        chain.run([alice.sign(NFT, [call("nft_transfer_call", args, deposit=1, gas=150 * TGAS)], chain.block_hash)])
    )
    (failed,) = flow.failures()
    assert failed["outcome"]["executor_id"] == RECEIVER
    assert flow.final_value() is False
    assert _owner(chain, "0") == ALICE


@pytest.mark.parametrize(("msg", "answer"), [("return-now", "cool"), ("hello there", "hello there")])
def test_nft_approve_calls_the_approval_receiver(msg: str, answer: str) -> None:
    chain, alice, _, _ = _minted()
    deposit = NEAR // 1000
    args = {"token_id": "0", "account_id": APPROVER, "msg": msg}
    flow = Flow.of(
        chain.run([alice.sign(NFT, [call("nft_approve", args, deposit=deposit, gas=150 * TGAS)], chain.block_hash)])
    )

    assert flow.failures() == []
    assert flow.final_value() == answer
    assert run_view(chain, NFT, "nft_is_approved", {"token_id": "0", "approved_account_id": APPROVER}) is True
    assert any(line.startswith("in nft_on_approve;") for line in flow.logs())
    # the approval's storage is paid from the deposit; the rest comes back to alice
    (refund,) = _transfers(flow, ALICE)
    assert 0 < refund < deposit
    token = run_view(chain, NFT, "nft_token", {"token_id": "0"})
    assert isinstance(token, dict) and token["approved_account_ids"] == {APPROVER: 1}
