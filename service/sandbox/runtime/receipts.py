"""Action receipts as the runtime carries them, and their ReceiptView JSON.

nearcore's refunds are action receipts from the system account with one Transfer
(core/primitives receipt.rs): `Receipt::new_gas_refund` to the signer, signed for by the
signer's own key (so the refund can restore a function-call key's allowance), and
`Receipt::new_balance_refund` to the predecessor or a deleted account's beneficiary, with the
empty ed25519 key; both carry gas price 0 and burn nothing.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from nearrpc.sandbox.runtime.model import (
    AccessKey,
    Action,
    AddKey,
    CreateAccount,
    Delegate,
    DelegateAction,
    DeleteAccount,
    DeleteKey,
    DeployContract,
    FunctionCall,
    FunctionCallPermission,
    NonDelegateAction,
    Receipt,
    Stake,
    Transfer,
)
from nearrpc.sandbox.runtime.views import action_receipt_view

SYSTEM: Final = "system"
EMPTY_PUBLIC_KEY: Final = "ed25519:" + "1" * 32  # PublicKey::empty(ED25519)


@dataclass(frozen=True, slots=True)
class ActionReceipt:
    receipt_id: str
    predecessor_id: str
    receiver_id: str
    signer_id: str
    signer_public_key: str
    gas_price: int
    actions: tuple[Action, ...]
    # receipt.rs ActionReceipt: the data it waits for, and where its result goes (data id, receiver)
    input_data_ids: tuple[str, ...] = ()
    output_data_receivers: tuple[tuple[str, str], ...] = ()
    is_promise_yield: bool = False  # a yield's callback, waiting for its resume (receipt.rs PromiseYield)
    expires_at: int | None = None  # a yield's timeout height (model.Receipt.expires_at)

    @property
    def is_refund(self) -> bool:
        return self.predecessor_id == SYSTEM

    def view(self) -> dict[str, Any]:
        """ReceiptView (core/primitives views.rs)."""
        return action_receipt_view(
            receipt_id=self.receipt_id,
            predecessor_id=self.predecessor_id,
            receiver_id=self.receiver_id,
            signer_id=self.signer_id,
            signer_public_key=self.signer_public_key,
            gas_price=self.gas_price,
            actions=self.actions,
            output_data_receivers=[
                {"data_id": data_id, "receiver_id": receiver_id} for data_id, receiver_id in self.output_data_receivers
            ],
            input_data_ids=self.input_data_ids,
            is_promise_yield=self.is_promise_yield,
        )

    def carried(self, produced_at: int) -> Receipt:
        return Receipt(view=self.view(), produced_at=produced_at, actions=self.actions, expires_at=self.expires_at)

    @classmethod
    def of(cls, receipt: Receipt) -> ActionReceipt:
        view = receipt.view
        body = view["receipt"]["Action"]
        actions = receipt.actions or tuple(action_of_view(item) for item in body["actions"])
        return cls(
            receipt_id=view["receipt_id"],
            predecessor_id=view["predecessor_id"],
            receiver_id=view["receiver_id"],
            signer_id=body["signer_id"],
            signer_public_key=body["signer_public_key"],
            gas_price=int(body["gas_price"]),
            actions=actions,
            input_data_ids=tuple(body.get("input_data_ids") or ()),
            output_data_receivers=tuple(
                (item["data_id"], item["receiver_id"]) for item in body.get("output_data_receivers") or ()
            ),
            is_promise_yield=bool(body.get("is_promise_yield")),
            expires_at=receipt.expires_at,
        )


@dataclass(frozen=True, slots=True)
class DataReceipt:
    """receipt.rs DataReceipt: a receipt's result on its way to a receipt waiting for it (None:
    the receipt failed, which the waiting one reads as PromiseResult::Failed)."""

    receipt_id: str
    predecessor_id: str
    receiver_id: str
    data_id: str
    data: bytes | None
    is_promise_resume: bool = False  # a yield's resume (receipt.rs PromiseResume)

    def view(self) -> dict[str, Any]:
        """ReceiptView with the Data variant (views.rs ReceiptEnumView::Data)."""
        data = None if self.data is None else base64.b64encode(self.data).decode()
        return {
            "predecessor_id": self.predecessor_id,
            "receiver_id": self.receiver_id,
            "receipt_id": self.receipt_id,
            "receipt": {"Data": {"data_id": self.data_id, "data": data, "is_promise_resume": self.is_promise_resume}},
            "priority": 0,
        }

    def carried(self, produced_at: int) -> Receipt:
        return Receipt(view=self.view(), produced_at=produced_at)

    @classmethod
    def of(cls, receipt: Receipt) -> DataReceipt | None:
        """The data receipt a carried receipt is, None for an action receipt."""
        view = receipt.view
        body = view["receipt"].get("Data")
        if body is None:
            return None
        data = body.get("data")
        return cls(
            receipt_id=view["receipt_id"],
            predecessor_id=view["predecessor_id"],
            receiver_id=view["receiver_id"],
            data_id=body["data_id"],
            data=None if data is None else base64.b64decode(data),
            is_promise_resume=bool(body.get("is_promise_resume")),
        )


def _permission_of(view: object) -> FunctionCallPermission | None:
    if view == "FullAccess":
        return None
    assert isinstance(view, Mapping)
    call = view["FunctionCall"]
    allowance = call.get("allowance")
    return FunctionCallPermission(
        allowance=None if allowance is None else int(allowance),
        receiver_id=call["receiver_id"],
        method_names=tuple(call["method_names"]),
    )


def action_of_view(view: object, serde: bool = False) -> Action:
    """The action an ActionView stands for (`serde`: a Delegate's inner action, written as serde
    writes an Action). A DeployContract's view holds its code's hash, not the code: such a
    receipt is carried with its actions (model.Receipt.actions)."""
    if view == "CreateAccount" or (serde and view == {"CreateAccount": {}}):
        return CreateAccount()
    assert isinstance(view, Mapping) and len(view) == 1, f"not an action view: {view!r}"
    ((name, body),) = view.items()
    if name == "DeployContract":
        if serde:
            return DeployContract(base64.b64decode(body["code"]))
        raise ValueError("a DeployContract's view does not carry its code")
    if name == "FunctionCall":
        args = base64.b64decode(body["args"])
        return FunctionCall(body["method_name"], args, int(body["gas"]), int(body["deposit"]))
    if name == "Transfer":
        return Transfer(int(body["deposit"]))
    if name == "Stake":
        return Stake(int(body["stake"]), body["public_key"])
    if name == "AddKey":
        key = body["access_key"]
        return AddKey(body["public_key"], AccessKey(int(key["nonce"]), _permission_of(key["permission"])))
    if name == "DeleteKey":
        return DeleteKey(body["public_key"])
    if name == "DeleteAccount":
        return DeleteAccount(body["beneficiary_id"])
    inner = body["delegate_action"]
    inner_actions: tuple[NonDelegateAction, ...] = tuple(
        item
        for item in (action_of_view(entry, serde=True) for entry in inner["actions"])
        if not isinstance(item, Delegate)
    )
    return Delegate(
        DelegateAction(
            sender_id=inner["sender_id"],
            receiver_id=inner["receiver_id"],
            actions=inner_actions,
            nonce=int(inner["nonce"]),
            max_block_height=int(inner["max_block_height"]),
            public_key=inner["public_key"],
        ),
        body["signature"],
    )


def access_key_borsh_len(access_key: AccessKey) -> int:
    """borsh::object_length of an AccessKey: nonce, then the permission's tag and fields."""
    permission = access_key.permission
    if permission is None:
        return 8 + 1
    allowance = 1 if permission.allowance is None else 17
    names = 4 + sum(4 + len(name.encode()) for name in permission.method_names)
    return 8 + 1 + allowance + 4 + len(permission.receiver_id.encode()) + names


@dataclass(frozen=True, slots=True)
class NewReceipt:
    """A receipt an action makes; its id is given once the whole receipt has run."""

    predecessor_id: str
    receiver_id: str
    signer_id: str
    signer_public_key: str
    gas_price: int
    actions: tuple[Action, ...]
    input_data_ids: tuple[str, ...] = ()
    output_data_receivers: tuple[tuple[str, str], ...] = ()  # (data id, receiver id)
    is_promise_yield: bool = False
    expires_at: int | None = None

    def with_id(self, receipt_id: str) -> ActionReceipt:
        return ActionReceipt(
            receipt_id,
            self.predecessor_id,
            self.receiver_id,
            self.signer_id,
            self.signer_public_key,
            self.gas_price,
            self.actions,
            self.input_data_ids,
            self.output_data_receivers,
            self.is_promise_yield,
            self.expires_at,
        )


@dataclass(frozen=True, slots=True)
class NewData:
    """A data receipt a receipt sends (lib.rs `apply_action_receipt`, its output data receivers);
    its id is given with the others'."""

    predecessor_id: str
    receiver_id: str
    data_id: str
    data: bytes | None
    is_promise_resume: bool = False

    def with_id(self, receipt_id: str) -> DataReceipt:
        return DataReceipt(
            receipt_id, self.predecessor_id, self.receiver_id, self.data_id, self.data, self.is_promise_resume
        )
