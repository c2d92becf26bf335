"""The sample chain's transactions as nearcore shows them: signed, converted to a receipt,
executed, refunded.

A transaction the generator applies becomes a `SignedTransactionView` (borsh `Transaction` V0,
its hash SHA-256 of those bytes, signed by the signer's key over the hash), the outcome of its
conversion (the send fees burnt, `SuccessReceiptId` of its action receipt), the action receipt
and its outcome (execution fees and the gas the contract used burnt, at the receipt's gas
price), and the system receipts nearcore adds: a refund of the unused prepaid gas to the signer
(gas times price, signed for by the signer's key, as `Receipt::new_gas_refund`) and, for a deleted
account, its balance to the beneficiary (`Receipt::new_balance_refund`). Refunds burn nothing.

Sample simplifications (documented in the generator): everything executes in the block and
chunk that include the transaction; receipt ids are SHA-256 of labels, not nearcore's
`create_receipt_id_from_transaction`; the gas profile is empty and contract rewards are not
paid.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Final

from nearrpc.nearcore.transaction import signed_transaction_bytes, transaction_bytes, transaction_hash
from nearrpc.sample import crypto
from nearrpc.sample.keys import Signer

SYSTEM: Final = "system"
# PublicKey::empty(ED25519): what a balance refund from the system carries as its signer key.
EMPTY_PUBLIC_KEY: Final = "ed25519:" + "1" * 32


@dataclass(frozen=True, slots=True)
class Plan:
    """One transaction the generator applies, before it is executed."""

    signer_id: str
    signer: Signer
    receiver_id: str
    actions: list[Any]  # ActionViews
    reference_hash: str  # the block hash the transaction is signed on (the including block's parent)
    price: int  # the gas price it is converted and executed at
    send_gas: int  # burnt converting it to a receipt
    exec_gas: int  # burnt executing the receipt, besides what a contract uses
    prepaid_gas: int = 0  # attached to its function call; the unused part is refunded
    used_gas: int = 0  # of prepaid_gas, what the contract used
    return_value: bytes = b""  # the receipt's SuccessValue
    balance_refund: tuple[str, int] | None = None  # (beneficiary, amount) of a deleted account


@dataclass(slots=True)
class Executed:
    """A transaction's views; outcomes lack `block_hash` and `proof` until the block is built."""

    tx_hash: str
    signer_id: str
    transaction: dict[str, Any]  # SignedTransactionView
    signed_bytes: bytes  # borsh SignedTransaction (tx_root's leaf)
    outcomes: list[dict[str, Any]]  # ExecutionOutcomeWithIdView: the transaction's, then its receipts'
    receipts: list[dict[str, Any]]  # ReceiptView of each receipt outcome, same order
    status: dict[str, Any] = field(default_factory=dict)  # FinalExecutionStatus

    @property
    def gas_burnt(self) -> int:
        return sum(o["outcome"]["gas_burnt"] for o in self.outcomes)

    @property
    def tokens_burnt(self) -> int:
        return sum(int(o["outcome"]["tokens_burnt"]) for o in self.outcomes)


def _outcome(
    outcome_id: str, executor: str, gas: int, price: int, receipt_ids: list[str], status: dict[str, Any], version: int
) -> dict[str, Any]:
    # A conversion's metadata is V1 (no gas profile); a receipt's V3 with its profile (empty here).
    metadata: dict[str, Any] = {"version": 1} if version == 1 else {"version": version, "gas_profile": []}
    return {
        "proof": [],
        "block_hash": "",
        "id": outcome_id,
        "outcome": {
            "logs": [],
            "receipt_ids": receipt_ids,
            "gas_burnt": gas,
            "tokens_burnt": str(gas * price),
            "executor_id": executor,
            "status": status,
            "metadata": metadata,
        },
    }


def _receipt(
    receipt_id: str, predecessor: str, receiver: str, signer_id: str, key: str, price: int, actions: list[Any]
) -> dict[str, Any]:
    return {
        "predecessor_id": predecessor,
        "receiver_id": receiver,
        "receipt_id": receipt_id,
        "receipt": {
            "Action": {
                "signer_id": signer_id,
                "signer_public_key": key,
                "gas_price": str(price),
                "output_data_receivers": [],
                "input_data_ids": [],
                "actions": actions,
                "is_promise_yield": False,
            }
        },
        "priority": 0,
    }


def outcome_leaf(outcome: dict[str, Any]) -> bytes:
    """An outcome's leaf in its chunk's outcome_root: its id and its outcome's canonical bytes
    (a stand-in for nearcore's borsh hashes of the outcome; the tree over them is nearcore's)."""
    return crypto.digest("outcome", outcome["id"], crypto.canonical_bytes(outcome["outcome"]))


def execute(plan: Plan) -> Executed:
    raw = transaction_bytes(
        signer_id=plan.signer_id,
        public_key=plan.signer.public_key,
        nonce=plan.signer.nonce,
        receiver_id=plan.receiver_id,
        block_hash=plan.reference_hash,
        actions=plan.actions,
    )
    digest = transaction_hash(raw)
    tx_hash = crypto.b58(digest)
    signature = crypto.sign(plan.signer.label, digest)
    transaction = {
        "signer_id": plan.signer_id,
        "public_key": plan.signer.public_key,
        "nonce": plan.signer.nonce,
        "receiver_id": plan.receiver_id,
        "actions": plan.actions,
        "priority_fee": 0,
        "signature": signature,
        "hash": tx_hash,
    }
    receipt_id = crypto.hash_of("receipt", tx_hash, 0)
    # The system receipts the action receipt's execution adds.
    follow_ups: list[tuple[str, str, str, str, int]] = []  # (id, receiver, signer, key, deposit)
    refund = (plan.prepaid_gas - plan.used_gas) * plan.price
    if refund > 0:
        follow_ups.append(
            (crypto.hash_of("refund", receipt_id), plan.signer_id, plan.signer_id, plan.signer.public_key, refund)
        )
    if plan.balance_refund is not None:
        beneficiary, amount = plan.balance_refund
        follow_ups.append((crypto.hash_of("balance", receipt_id), beneficiary, SYSTEM, EMPTY_PUBLIC_KEY, amount))
    value = {"SuccessValue": base64.b64encode(plan.return_value).decode()}
    outcomes = [
        _outcome(tx_hash, plan.signer_id, plan.send_gas, plan.price, [receipt_id], {"SuccessReceiptId": receipt_id}, 1),
        _outcome(
            receipt_id,
            plan.receiver_id,
            plan.exec_gas + plan.used_gas,
            plan.price,
            [f[0] for f in follow_ups],
            value,
            3,
        ),
    ]
    receipts = [
        _receipt(
            receipt_id,
            plan.signer_id,
            plan.receiver_id,
            plan.signer_id,
            plan.signer.public_key,
            plan.price,
            plan.actions,
        )
    ]
    for follow_id, receiver, signer_id, key, deposit in follow_ups:
        outcomes.append(_outcome(follow_id, receiver, 0, 0, [], {"SuccessValue": ""}, 3))
        receipts.append(
            _receipt(follow_id, SYSTEM, receiver, signer_id, key, 0, [{"Transfer": {"deposit": str(deposit)}}])
        )
    return Executed(
        tx_hash=tx_hash,
        signer_id=plan.signer_id,
        transaction=transaction,
        signed_bytes=signed_transaction_bytes(raw, signature),
        outcomes=outcomes,
        receipts=receipts,
        # nearcore's final status follows SuccessReceiptId from the transaction to the action
        # receipt and answers its value; the refunds it added do not count.
        status=value,
    )
