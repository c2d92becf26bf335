"""Why a stored row changed in a block: nearcore's StateChangeCauseView, told from the block's
transactions and executed receipts.

nearcore records every write with the cause it was committed under (runtime `apply`): first the
validator accounts at an epoch's first block (`validator_accounts_update`), then each
transaction charges its signer and bumps the nonce of the key that signed it
(`transaction_processing`), then each receipt changes what belongs to its receiver
(`receipt_processing`), and a function call's receipt ends with the contract's share of the burnt
gas (`action_receipt_gas_reward`). The store keeps only the value a row ended the block with, so
a row gets the cause of the last event that could have written it, in that order.

Which event writes what, as far as a receipt's view tells: a failed receipt's actions are
rolled back (its function calls' gas reward stays); keys change by AddKey / DeleteKey of that
key, or by a refund from `system` to the key that signed (a function-call key's allowance);
contract data by a function call; code by a deployment; a DeleteAccount removes everything of
the account. A row no known event explains is put down to the last event of its account, and
without one to `validator_accounts_update` at an epoch's first block. Otherwise the store does
not know the cause: it is given as `not_writable_to_disk`, a cause nearcore never stores
(spec/DEVIATIONS.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

import orjson

from nearrpc.nearcore.public_key import PublicKeyError, canonical_public_key
from nearrpc.store import StoredReceipt, StoredTransaction

Cause = dict[str, str]
UNKNOWN_CAUSE: Final[Cause] = {"type": "not_writable_to_disk"}
VALIDATOR_ACCOUNTS_UPDATE: Final[Cause] = {"type": "validator_accounts_update"}
_REFUNDER: Final = "system"  # the predecessor of nearcore's refund receipts


@dataclass(frozen=True, slots=True)
class _Event:
    """One transaction or receipt of the block, reduced to what it can have written."""

    cause: Cause
    account_id: str  # the signer of a transaction, the receiver of a receipt
    writes_account: bool
    keys: frozenset[str]  # canonical public keys whose rows it writes
    all_keys: bool  # every key of the account (a deleted account)
    data: bool
    code: bool
    gas_reward: Cause | None  # the last write to the account row, after the others


def _canonical(public_key: object) -> str | None:
    try:
        return canonical_public_key(str(public_key))
    except PublicKeyError:
        return None


def _transaction_event(transaction: StoredTransaction) -> _Event:
    signed: dict[str, Any] = orjson.loads(transaction.view_json)["transaction"]
    key = _canonical(signed.get("public_key"))
    return _Event(
        {"type": "transaction_processing", "tx_hash": transaction.tx_hash},
        str(signed.get("signer_id", transaction.signer_id)),
        writes_account=True,
        keys=frozenset(() if key is None else (key,)),
        all_keys=False,
        data=False,
        code=False,
        gas_reward=None,
    )


def _failed(receipt: StoredReceipt) -> bool:
    if receipt.outcome_json is None:
        return False  # unknown outcome: taken as applied
    status = orjson.loads(receipt.outcome_json).get("outcome", {}).get("status")
    return isinstance(status, dict) and "Failure" in status


def _action_names(actions: Iterable[Any]) -> list[tuple[str, Any]]:
    """(name, body) of each ActionView: "CreateAccount" is a bare string, the others one-key objects."""
    named: list[tuple[str, Any]] = []
    for action in actions:
        if isinstance(action, str):
            named.append((action, None))
        elif isinstance(action, dict):
            named.extend(action.items())
    return named


def _receipt_event(receipt: StoredReceipt) -> _Event | None:
    view: dict[str, Any] = orjson.loads(receipt.view_json)
    body = view.get("receipt")
    action = body.get("Action") if isinstance(body, dict) else None
    if not isinstance(action, dict):
        return None  # a data receipt writes nothing the store keeps
    receipt_id = receipt.receipt_id
    names = _action_names(action.get("actions") or ())
    kinds = {name for name, _ in names}
    calls = "FunctionCall" in kinds
    reward = {"type": "action_receipt_gas_reward", "receipt_hash": receipt_id} if calls else None
    cause = {"type": "receipt_processing", "receipt_hash": receipt_id}
    receiver = str(view.get("receiver_id"))
    if _failed(receipt):
        return _Event(cause, receiver, False, frozenset(), False, False, False, reward)
    deleted = "DeleteAccount" in kinds
    keys = {
        key
        for name, payload in names
        if name in ("AddKey", "DeleteKey") and isinstance(payload, dict)
        for key in (_canonical(payload.get("public_key")),)
        if key is not None
    }
    if view.get("predecessor_id") == _REFUNDER:  # a refund also returns a function-call key's allowance
        signer_key = _canonical(action.get("signer_public_key"))
        if signer_key is not None and action.get("signer_id") == receiver:
            keys.add(signer_key)
    return _Event(
        cause,
        receiver,
        writes_account=True,
        keys=frozenset(keys),
        all_keys=deleted,
        data=calls or deleted,
        code="DeployContract" in kinds or deleted,
        gas_reward=reward,
    )


class ChangeCauses:
    """The causes of the rows written at one block, from its transactions and executed receipts
    (each list in the order the block applied them)."""

    def __init__(
        self,
        transactions: Iterable[StoredTransaction],
        receipts: Iterable[StoredReceipt],
        *,
        starts_epoch: bool,
    ) -> None:
        events = [_transaction_event(transaction) for transaction in transactions]
        events += [event for receipt in receipts if (event := _receipt_event(receipt)) is not None]
        self._by_account: dict[str, list[_Event]] = {}
        for event in events:
            self._by_account.setdefault(event.account_id, []).append(event)
        self._starts_epoch = starts_epoch

    def _last(self, account_id: str, writes: Callable[[_Event], bool]) -> Cause:
        events = self._by_account.get(account_id, [])
        for event in reversed(events):
            if writes(event):
                return event.cause
        return events[-1].cause if events else UNKNOWN_CAUSE

    def account(self, account_id: str) -> Cause:
        events = self._by_account.get(account_id, [])
        for event in reversed(events):
            if event.gas_reward is not None:
                return event.gas_reward
            if event.writes_account:
                return event.cause
        return VALIDATOR_ACCOUNTS_UPDATE if self._starts_epoch else UNKNOWN_CAUSE

    def access_key(self, account_id: str, public_key: str) -> Cause:
        return self._last(account_id, lambda event: event.all_keys or public_key in event.keys)

    def data(self, account_id: str) -> Cause:
        return self._last(account_id, lambda event: event.data)

    def code(self, account_id: str) -> Cause:
        return self._last(account_id, lambda event: event.code)
