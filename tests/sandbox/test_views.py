"""Views of decoded transactions as nearcore shows them: every sample-chain transaction, rebuilt as
the borsh bytes its signer signed, decodes, verifies and shows exactly the SignedTransactionView
and receipt actions the chain serves; the shapes the sample lacks (deploys, delegates, keys) are
held to the spec's schemas and to views.rs's rules."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import orjson
import pytest

from nearrpc.nearcore.transaction import signed_transaction_bytes, transaction_bytes
from nearrpc.sample import sample_chain
from nearrpc.sandbox.runtime import decode, encode, model, signature, views
from nearrpc.spec import validate_component
from tests.sandbox.support import ed25519_secret, transaction

ALICE = ed25519_secret("alice")
KEY = encode.public_key_of(ALICE)


def sample_transactions() -> list[tuple[dict[str, Any], str]]:
    """(EXPERIMENTAL_tx_status result, the block hash it was signed on) of every sample transaction."""
    chain = sample_chain()
    prev_hash = {}
    for block in chain.blocks:
        header = orjson.loads(block.view_json)["header"]
        prev_hash[header["hash"]] = header["prev_hash"]
    return [(orjson.loads(tx.view_json), prev_hash[tx.block_hash]) for tx in chain.transactions]


def test_every_sample_transaction_decodes_to_the_view_the_chain_serves() -> None:
    checked = 0
    for status, signed_on in sample_transactions():
        view = status["transaction"]
        raw = transaction_bytes(
            signer_id=view["signer_id"],
            public_key=view["public_key"],
            nonce=view["nonce"],
            receiver_id=view["receiver_id"],
            block_hash=signed_on,
            actions=view["actions"],
        )
        signed = decode.decode_signed_transaction(signed_transaction_bytes(raw, view["signature"]))
        assert signature.verify_transaction(signed), view["hash"]
        assert views.signed_transaction_view(signed) == view
        # the action receipt shows the same ActionViews
        assert views.action_views(signed.transaction.actions) == status["receipts"][0]["receipt"]["Action"]["actions"]
        checked += 1
    assert checked > 200


def test_a_deploy_shows_the_base64_of_its_codes_hash() -> None:
    code = b"\x00asm\x01\x00\x00\x00"
    view = views.action_view(model.DeployContract(code=code))
    assert view == {"DeployContract": {"code": base64.b64encode(hashlib.sha256(code).digest()).decode()}}
    validate_component("ActionView", view)


def test_function_call_keys_and_amounts() -> None:
    permission = model.FunctionCallPermission(allowance=25 * 10**22, receiver_id="token.localnet", method_names=("a",))
    actions = (
        model.FunctionCall(method_name="ft_transfer", args=b'{"x":1}', gas=30 * 10**12, deposit=1),
        model.AddKey(public_key=KEY, access_key=model.AccessKey(nonce=0, permission=permission)),
        model.AddKey(public_key=KEY, access_key=model.AccessKey(nonce=3, permission=None)),
        model.Stake(stake=10**30, public_key=KEY),
    )
    shown = views.action_views(actions)
    assert shown[0] == {
        "FunctionCall": {"method_name": "ft_transfer", "args": "eyJ4IjoxfQ==", "gas": 30 * 10**12, "deposit": "1"}
    }
    assert shown[1] == {
        "AddKey": {
            "public_key": KEY,
            "access_key": {
                "nonce": 0,
                "permission": {
                    "FunctionCall": {
                        "allowance": "250000000000000000000000",
                        "receiver_id": "token.localnet",
                        "method_names": ["a"],
                    }
                },
            },
        }
    }
    assert shown[2] == {"AddKey": {"public_key": KEY, "access_key": {"nonce": 3, "permission": "FullAccess"}}}
    assert shown[3] == {"Stake": {"stake": str(10**30), "public_key": KEY}}
    for view in shown:
        validate_component("ActionView", view)


def test_a_delegate_shows_its_inner_actions_as_the_primitive_serialises_them() -> None:
    code = b"\x00asm"
    inner = model.DelegateAction(
        sender_id="alice.localnet",
        receiver_id="bob.localnet",
        actions=(model.CreateAccount(), model.DeployContract(code=code), model.Transfer(deposit=5)),
        nonce=12,
        max_block_height=400,
        public_key=KEY,
    )
    delegate = encode.sign_delegate_action(inner, ALICE)
    view = views.action_view(delegate)
    assert view == {
        "Delegate": {
            "delegate_action": {
                "sender_id": "alice.localnet",
                "receiver_id": "bob.localnet",
                "actions": [
                    {"CreateAccount": {}},
                    {"DeployContract": {"code": base64.b64encode(code).decode()}},
                    {"Transfer": {"deposit": "5"}},
                ],
                "nonce": 12,
                "max_block_height": 400,
                "public_key": KEY,
            },
            "signature": delegate.signature,
        }
    }
    validate_component("ActionView", view)


def test_transaction_and_receipt_views_match_the_spec() -> None:
    raw = encode.sign_transaction(transaction(KEY, model.CreateAccount(), model.Transfer(deposit=7)), ALICE)
    signed = decode.decode_signed_transaction(raw)
    view = views.signed_transaction_view(signed)
    assert list(view) == [
        "signer_id",
        "public_key",
        "nonce",
        "receiver_id",
        "actions",
        "priority_fee",
        "signature",
        "hash",
    ]
    assert view["priority_fee"] == 0
    validate_component("SignedTransactionView", view)
    receipt = views.action_receipt_view(
        receipt_id=signed.hash,
        predecessor_id="alice.localnet",
        receiver_id="bob.localnet",
        signer_id="alice.localnet",
        signer_public_key=KEY,
        gas_price=10**9,
        actions=signed.transaction.actions,
    )
    assert receipt["receipt"]["Action"]["actions"] == ["CreateAccount", {"Transfer": {"deposit": "7"}}]
    validate_component("ReceiptView", receipt)


@pytest.mark.parametrize("action", [model.CreateAccount(), model.Transfer(deposit=0)])
def test_plain_actions(action: model.Action) -> None:
    validate_component("ActionView", views.action_view(action))
