"""The sample chain's access keys: every account's keys over the heights, as nearcore keeps them.

Each account holds a full-access key and a function-call key for the counter contract
(`increment`, `decrement`, with an allowance). Every key is a real ed25519 key pair derived from
a label (crypto.signing_key). Validators' full-access key is their validator key; a
NEAR-implicit account's is the key its id spells (the id is the key's hex); an ETH-implicit
account has no access key (nearcore gives it none: its wallet contract signs). A
key added after genesis starts at nonce (height - 1) * 10^6 (nearcore's
ACCESS_KEY_NONCE_RANGE_MULTIPLIER); each transaction a key signs raises its nonce by one, and
one signed by the function-call key spends its fee from the allowance. A deleted account's keys
are deleted with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import orjson

from nearrpc import sample_keys
from nearrpc.sample import crypto, scenario
from nearrpc.sample.scenario import NEAR

NONCE_RANGE_MULTIPLIER: Final = 1_000_000
FUNCTION_CALL_ALLOWANCE: Final = NEAR // 4
FUNCTION_CALL_METHODS: Final = ("increment", "decrement")


@dataclass(frozen=True, slots=True)
class AccessKeyRow:
    """One `put_access_key` call: the key's view after the block at `height`, None when deleted."""

    account_id: str
    public_key: str
    height: int
    view_json: bytes | None


@dataclass(frozen=True, slots=True)
class Signer:
    """The key a transaction is signed with: its public key, the nonce the transaction
    carries (the key's nonce after it) and the label of its key pair."""

    public_key: str
    nonce: int
    label: str


_IMPLICIT_LABELS: Final = {account_id: scenario.implicit_key_label(i) for i, account_id in enumerate(scenario.IMPLICIT)}


def _full_access_label(account_id: str, is_validator: bool) -> str | None:
    if is_validator:
        return scenario.validator_key_label(account_id)
    if account_id.startswith("0x"):
        return None  # ETH-implicit: no access key
    implicit = _IMPLICIT_LABELS.get(account_id)
    if implicit is not None:
        return implicit
    return sample_keys.full_access_label(account_id)


class KeyLedger:
    """Every account's keys as they change; `rows()` is what the store gets."""

    def __init__(self) -> None:
        self._keys: dict[str, dict[str, dict[str, Any]]] = {}  # account -> key -> view
        self._full: dict[str, str] = {}  # account -> its full-access key
        self._function_call: dict[str, str] = {}  # account -> its function-call key
        self._labels: dict[str, str] = {}  # public key -> the label of its key pair
        self._rows: dict[tuple[str, str, int], bytes | None] = {}

    def _write(self, account_id: str, public_key: str, height: int) -> None:
        view = self._keys.get(account_id, {}).get(public_key)
        self._rows[(account_id, public_key, height)] = None if view is None else orjson.dumps(view)

    def new_keys(self, account_id: str, *, is_validator: bool = False) -> dict[str, dict[str, Any]]:
        """The keys a new account gets, as AccessKeyViews with nonce 0 (what its AddKey
        actions carry); none for an ETH-implicit account."""
        full_label = _full_access_label(account_id, is_validator)
        if full_label is None:
            return {}
        call_label = f"function-call:{account_id}"
        full, function_call = crypto.public_key(full_label), crypto.public_key(call_label)
        self._labels[full], self._labels[function_call] = full_label, call_label
        return {
            full: {"nonce": 0, "permission": "FullAccess"},
            function_call: {
                "nonce": 0,
                "permission": {
                    "FunctionCall": {
                        "allowance": str(FUNCTION_CALL_ALLOWANCE),
                        "receiver_id": scenario.CONTRACT,
                        "method_names": list(FUNCTION_CALL_METHODS),
                    }
                },
            },
        }

    def open_account(self, account_id: str, height: int, *, is_validator: bool = False) -> None:
        keys = self.new_keys(account_id, is_validator=is_validator)
        if not keys:
            return
        # nearcore starts a key added after genesis at (height - 1) * 10^6.
        nonce = 0 if height == scenario.GENESIS_HEIGHT else (height - 1) * NONCE_RANGE_MULTIPLIER
        for view in keys.values():  # fresh dicts: new_keys builds them on each call
            view["nonce"] = nonce
        self._keys[account_id] = keys
        full, function_call = list(keys)
        self._full[account_id], self._function_call[account_id] = full, function_call
        for key in (full, function_call):
            self._write(account_id, key, height)

    def add_full_access_key(self, account_id: str, label: str, height: int) -> str:
        """A new full-access key (after the AddKey that adds it); it signs from now on."""
        key = crypto.public_key(label)
        self._labels[key] = label
        self._keys[account_id][key] = {"nonce": (height - 1) * NONCE_RANGE_MULTIPLIER, "permission": "FullAccess"}
        self._write(account_id, key, height)
        self._full[account_id] = key
        return key

    def delete_key(self, account_id: str, key: str, height: int) -> None:
        del self._keys[account_id][key]
        self._write(account_id, key, height)

    def full_access_key(self, account_id: str) -> str:
        return self._full[account_id]

    def close_account(self, account_id: str, height: int) -> None:
        for key in self._keys.pop(account_id, {}):
            self._write(account_id, key, height)

    def has_keys(self, account_id: str) -> bool:
        return account_id in self._keys

    def sign(self, account_id: str, height: int, *, function_call_fee: int | None = None) -> Signer:
        """A transaction signed by the account's full-access key, or by its function-call key
        when it pays `function_call_fee` from the allowance."""
        keys = self._keys.get(account_id)
        if keys is None:
            raise AssertionError(f"sample plan: {account_id} has no access key to sign with")
        if function_call_fee is None:
            key = self._full[account_id]
        else:
            key = self._function_call[account_id]
            permission = keys[key]["permission"]["FunctionCall"]
            permission["allowance"] = str(int(permission["allowance"]) - function_call_fee)
        keys[key]["nonce"] += 1
        self._write(account_id, key, height)
        return Signer(key, keys[key]["nonce"], self._labels[key])

    def rows(self) -> tuple[AccessKeyRow, ...]:
        return tuple(
            AccessKeyRow(account_id, key, height, view)
            for (account_id, key, height), view in sorted(self._rows.items(), key=lambda item: (item[0][2], item[0]))
        )
