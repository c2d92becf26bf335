"""A decoded transaction and its actions in nearcore's JSON view shapes (core/primitives/src/views.rs):
`SignedTransactionView`, `ActionView` (what a transaction and an action receipt show),
`AccessKeyView` and an action receipt's `ReceiptView`.

views.rs `From<Action> for ActionView`: a DeployContract shows base64 of the code's SHA-256 (not
the code); FunctionCall args are base64; amounts (deposit, stake, allowance, gas price) are u128
shown as decimal strings, gas and nonces as numbers. A Delegate shows its `DelegateAction` as serde
writes the primitive (its inner actions are `Action`s, not ActionViews: a deployed code in full,
base64, and `CreateAccount` as an empty object) and the signature. A V0 transaction's view carries
`priority_fee` 0 (`unwrap_or_default`), as the sample chain's transactions do.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from typing import Any

from nearrpc.sandbox.runtime import model


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def access_key_view(access_key: model.AccessKey) -> dict[str, Any]:
    """AccessKeyView (views.rs `From<AccessKey>`)."""
    permission = access_key.permission
    if permission is None:
        return {"nonce": access_key.nonce, "permission": "FullAccess"}
    allowance = None if permission.allowance is None else str(permission.allowance)
    return {
        "nonce": access_key.nonce,
        "permission": {
            "FunctionCall": {
                "allowance": allowance,
                "receiver_id": permission.receiver_id,
                "method_names": list(permission.method_names),
            }
        },
    }


def action_view(action: model.Action) -> str | dict[str, Any]:
    """ActionView (views.rs `From<Action> for ActionView`)."""
    match action:
        case model.CreateAccount():
            return "CreateAccount"
        case model.DeployContract(code=code):
            return {"DeployContract": {"code": _b64(hashlib.sha256(code).digest())}}
        case model.Delegate(delegate_action=inner, signature=signature):
            return {"Delegate": {"delegate_action": delegate_action_json(inner), "signature": signature}}
    return _shared(action)


def _shared(action: model.Action) -> dict[str, Any]:
    """The actions whose view and serde shapes agree."""
    match action:
        case model.FunctionCall(method_name=method_name, args=args, gas=gas, deposit=deposit):
            return {
                "FunctionCall": {"method_name": method_name, "args": _b64(args), "gas": gas, "deposit": str(deposit)}
            }
        case model.Transfer(deposit=deposit):
            return {"Transfer": {"deposit": str(deposit)}}
        case model.Stake(stake=stake, public_key=public_key):
            return {"Stake": {"stake": str(stake), "public_key": public_key}}
        case model.AddKey(public_key=public_key, access_key=access_key):
            return {"AddKey": {"public_key": public_key, "access_key": access_key_view(access_key)}}
        case model.DeleteKey(public_key=public_key):
            return {"DeleteKey": {"public_key": public_key}}
        case model.DeleteAccount(beneficiary_id=beneficiary_id):
            return {"DeleteAccount": {"beneficiary_id": beneficiary_id}}
    raise TypeError(f"no view for {action!r}")


def _action_json(action: model.NonDelegateAction) -> dict[str, Any]:
    """An inner action as serde writes `Action` (inside a DelegateAction)."""
    match action:
        case model.CreateAccount():
            return {"CreateAccount": {}}
        case model.DeployContract(code=code):
            return {"DeployContract": {"code": _b64(code)}}
    return _shared(action)


def delegate_action_json(delegate: model.DelegateAction) -> dict[str, Any]:
    """A DelegateAction as serde writes it."""
    return {
        "sender_id": delegate.sender_id,
        "receiver_id": delegate.receiver_id,
        "actions": [_action_json(action) for action in delegate.actions],
        "nonce": delegate.nonce,
        "max_block_height": delegate.max_block_height,
        "public_key": delegate.public_key,
    }


def action_views(actions: Sequence[model.Action]) -> list[str | dict[str, Any]]:
    return [action_view(action) for action in actions]


def signed_transaction_view(signed: model.SignedTransaction) -> dict[str, Any]:
    """SignedTransactionView (views.rs `From<SignedTransaction>`), in nearcore's field order."""
    tx = signed.transaction
    return {
        "signer_id": tx.signer_id,
        "public_key": tx.public_key,
        "nonce": tx.nonce,
        "receiver_id": tx.receiver_id,
        "actions": action_views(tx.actions),
        "priority_fee": tx.priority_fee or 0,
        "signature": signed.signature,
        "hash": signed.hash,
    }


def action_receipt_view(
    *,
    receipt_id: str,
    predecessor_id: str,
    receiver_id: str,
    signer_id: str,
    signer_public_key: str,
    gas_price: int,
    actions: Sequence[model.Action],
    output_data_receivers: Sequence[dict[str, Any]] = (),
    input_data_ids: Sequence[str] = (),
    is_promise_yield: bool = False,
) -> dict[str, Any]:
    """ReceiptView of an action receipt (views.rs `From<Receipt> for ReceiptView`), priority 0."""
    return {
        "predecessor_id": predecessor_id,
        "receiver_id": receiver_id,
        "receipt_id": receipt_id,
        "receipt": {
            "Action": {
                "signer_id": signer_id,
                "signer_public_key": signer_public_key,
                "gas_price": str(gas_price),
                "output_data_receivers": list(output_data_receivers),
                "input_data_ids": list(input_data_ids),
                "actions": action_views(actions),
                "is_promise_yield": is_promise_yield,
            }
        },
        "priority": 0,
    }
