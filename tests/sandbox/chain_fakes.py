"""A small stand-in runtime for the chain writer's tests: transfers only, a fixed fee, nearcore's
shapes (the views and outcomes the chain stores), over the `Runtime` protocol alone. The real
runtime (nearrpc.sandbox.runtime) replaces it once it lands; the chain depends on the protocol.

Its signed transactions are borsh `SignedTransaction`s with one Transfer action and an ed25519
key (the signature is not checked), so the chain reads their block hash as from a real one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import based58

from nearrpc.sandbox.runtime.model import (
    AccessKey,
    Account,
    BlockContext,
    BlockResult,
    Receipt,
    ReceiptApplied,
    StateChanges,
    StateView,
    TransactionApplied,
    TransactionRefused,
)

FEE_GAS = 424_555_062_500  # what the stand-in burns per conversion and per receipt


def _string(text: str) -> bytes:
    data = text.encode()
    return len(data).to_bytes(4, "little") + data


def b58(data: bytes) -> str:
    return based58.b58encode(data).decode("ascii")


def signed_transfer(signer: str, public_key: str, nonce: int, receiver: str, block_hash: str, deposit: int) -> bytes:
    """A borsh SignedTransaction (V0) of one Transfer, with a made-up ed25519 signature."""
    key = based58.b58decode(public_key.removeprefix("ed25519:").encode())
    transaction = (
        _string(signer) + b"\x00" + key + nonce.to_bytes(8, "little") + _string(receiver)
        + based58.b58decode(block_hash.encode()) + (1).to_bytes(4, "little") + b"\x03" + deposit.to_bytes(16, "little")
    )  # fmt: skip
    return transaction + b"\x00" + hashlib.sha256(transaction).digest() * 2


def _decode(signed: bytes) -> dict[str, Any]:
    transaction = signed[:-65]
    at = 0

    def take(count: int) -> bytes:
        nonlocal at
        at += count
        return transaction[at - count : at]

    def string() -> str:
        return take(int.from_bytes(take(4), "little")).decode()

    signer = string()
    take(1)
    public_key = "ed25519:" + b58(take(32))
    nonce = int.from_bytes(take(8), "little")
    receiver = string()
    block_hash = b58(take(32))
    take(5)
    deposit = int.from_bytes(take(16), "little")
    return {
        "signer_id": signer, "public_key": public_key, "nonce": nonce, "receiver_id": receiver,
        "block_hash": block_hash, "deposit": deposit, "hash": b58(hashlib.sha256(transaction).digest()),
        "signature": "ed25519:" + b58(signed[-64:]),
    }  # fmt: skip


def _outcome(
    outcome_id: str, executor: str, price: int, receipt_ids: list[str], status: dict[str, Any]
) -> dict[str, Any]:
    return {
        "proof": [], "block_hash": "", "id": outcome_id,
        "outcome": {
            "logs": [], "receipt_ids": receipt_ids, "gas_burnt": FEE_GAS, "tokens_burnt": str(FEE_GAS * price),
            "executor_id": executor, "status": status, "metadata": {"version": 1},
        },
    }  # fmt: skip


def _receipt_view(receipt_id: str, tx: dict[str, Any], price: int) -> dict[str, Any]:
    return {
        "predecessor_id": tx["signer_id"], "receiver_id": tx["receiver_id"], "receipt_id": receipt_id,
        "receipt": {"Action": {
            "signer_id": tx["signer_id"], "signer_public_key": tx["public_key"], "gas_price": str(price),
            "output_data_receivers": [], "input_data_ids": [],
            "actions": [{"Transfer": {"deposit": str(tx["deposit"])}}], "is_promise_yield": False,
        }},
        "priority": 0,
    }  # fmt: skip


class _Layered:
    """The parent's state with this block's writes over it."""

    def __init__(self, state: StateView, changes: StateChanges) -> None:
        self.state, self.changes = state, changes

    def account(self, account_id: str) -> Account | None:
        if account_id in self.changes.accounts:
            return self.changes.accounts[account_id]
        return self.state.account(account_id)

    def key(self, account_id: str, public_key: str) -> AccessKey | None:
        if (account_id, public_key) in self.changes.access_keys:
            return self.changes.access_keys[(account_id, public_key)]
        return self.state.access_key(account_id, public_key)


class TransferRuntime:
    def __init__(self) -> None:
        self.checked = 0
        self.broken_deposit: int | None = None  # apply_block raises on a transfer of this amount
        self.unburnt = 0  # per executed receipt: kept out of the block's tokens_burnt (as a contract's reward)
        self.unstorable_deposit: int | None = None  # a transfer of this amount writes what no store takes

    def _view(self, tx: dict[str, Any]) -> dict[str, Any]:
        return {
            "signer_id": tx["signer_id"], "public_key": tx["public_key"], "nonce": tx["nonce"],
            "receiver_id": tx["receiver_id"], "actions": [{"Transfer": {"deposit": str(tx["deposit"])}}],
            "priority_fee": 0, "signature": tx["signature"], "hash": tx["hash"],
        }  # fmt: skip

    def _validate(self, layer: _Layered, tx: dict[str, Any], price: int) -> None:
        signer = layer.account(tx["signer_id"])
        if signer is None:
            raise TransactionRefused({"SignerDoesNotExist": {"signer_id": tx["signer_id"]}})
        key = layer.key(tx["signer_id"], tx["public_key"])
        if key is None:
            raise TransactionRefused({"InvalidAccessKeyError": {"AccessKeyNotFound": {
                "account_id": tx["signer_id"], "public_key": tx["public_key"]}}})  # fmt: skip
        if tx["nonce"] <= key.nonce:
            raise TransactionRefused({"InvalidNonce": {"tx_nonce": tx["nonce"], "ak_nonce": key.nonce}})
        cost = tx["deposit"] + FEE_GAS * price
        if signer.amount < cost:
            raise TransactionRefused({"NotEnoughBalance": {
                "signer_id": tx["signer_id"], "balance": str(signer.amount), "cost": str(cost)}})  # fmt: skip

    def check_transaction(self, state: StateView, context: BlockContext, signed: bytes) -> TransactionApplied:
        self.checked += 1
        tx = _decode(signed)
        self._validate(_Layered(state, StateChanges()), tx, context.gas_price)
        outcome = _outcome(tx["hash"], tx["signer_id"], context.gas_price, [], {"Unknown": None})
        return TransactionApplied(
            tx["hash"], tx["signer_id"], context.shard_of(tx["signer_id"]), self._view(tx), outcome
        )

    def apply_block(
        self,
        state: StateView,
        context: BlockContext,
        transactions: Sequence[bytes],
        receipts: Sequence[Receipt],
        waiting: Sequence[Receipt] = (),
    ) -> BlockResult:
        changes = StateChanges()
        layer = _Layered(state, changes)
        executed: list[ReceiptApplied] = []
        outgoing: list[Receipt] = []
        burnt = 0

        def execute(view: dict[str, Any]) -> None:
            nonlocal burnt
            receiver = view["receiver_id"]
            deposit = int(view["receipt"]["Action"]["actions"][0]["Transfer"]["deposit"])
            account = layer.account(receiver)
            if account is None:
                status: dict[str, Any] = {"Failure": {"ActionError": {"index": 0, "kind": {
                    "AccountDoesNotExist": {"account_id": receiver}}}}}  # fmt: skip
            else:
                changes.accounts[receiver] = replace(account, amount=account.amount + deposit)
                status = {"SuccessValue": ""}
            burnt += FEE_GAS * context.gas_price
            outcome = _outcome(view["receipt_id"], receiver, context.gas_price, [], status)
            executed.append(ReceiptApplied(view["receipt_id"], context.shard_of(receiver), view, outcome))

        for receipt in receipts:
            execute(dict(receipt.view))
        applied: list[TransactionApplied] = []
        for signed in transactions:
            tx = _decode(signed)
            if tx["deposit"] == self.broken_deposit:
                raise RuntimeError("the stand-in runtime breaks on this deposit")
            try:
                self._validate(layer, tx, context.gas_price)
            except TransactionRefused:
                continue
            signer = layer.account(tx["signer_id"])
            key = layer.key(tx["signer_id"], tx["public_key"])
            assert signer is not None and key is not None
            changes.accounts[tx["signer_id"]] = replace(
                signer, amount=signer.amount - tx["deposit"] - FEE_GAS * context.gas_price
            )
            changes.access_keys[(tx["signer_id"], tx["public_key"])] = replace(key, nonce=tx["nonce"])
            burnt += FEE_GAS * context.gas_price
            if tx["deposit"] == self.unstorable_deposit:
                changes.data[(tx["signer_id"], b"k" * (1 << 23))] = b""  # past any max_length_storage_key
            receipt_id = b58(hashlib.sha256(tx["hash"].encode() + context.block_hash.encode()).digest())
            outcome = _outcome(tx["hash"], tx["signer_id"], context.gas_price, [receipt_id],
                               {"SuccessReceiptId": receipt_id})  # fmt: skip
            applied.append(TransactionApplied(tx["hash"], tx["signer_id"], context.shard_of(tx["signer_id"]),
                                              self._view(tx), outcome))  # fmt: skip
            view = _receipt_view(receipt_id, tx, context.gas_price)
            if tx["signer_id"] == tx["receiver_id"]:
                execute(view)  # a local receipt runs in the block
            else:
                outgoing.append(Receipt(view, context.height))
        gas = FEE_GAS * (len(applied) + len(executed))
        return BlockResult(applied, executed, outgoing, changes, gas, burnt - self.unburnt * len(executed))
