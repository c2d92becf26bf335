"""The sample chain's access keys: every account's keys over the heights, as nearcore keeps them.

Each account holds a full-access key and a function-call key for the counter contract
(`increment`, `decrement`, with an allowance). Validators' full-access key is their validator
key; a NEAR-implicit account's is the key its id spells (the id is the key's hex); an
ETH-implicit account has no access key (nearcore gives it none: its wallet contract signs). A
key added after genesis starts at nonce (height - 1) * 10^6 (nearcore's
ACCESS_KEY_NONCE_RANGE_MULTIPLIER); each transaction a key signs raises its nonce by one, and
one signed by the function-call key spends its fee from the allowance. A deleted account's keys
are deleted with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import based58
import orjson

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


def _full_access_key(account_id: str, validator_key: str | None) -> str | None:
    if validator_key is not None:
        return validator_key
    if account_id.startswith("0x"):
        return None  # ETH-implicit: no access key
    if len(account_id) == 64 and all(c in "0123456789abcdef" for c in account_id):
        return "ed25519:" + based58.b58encode(bytes.fromhex(account_id)).decode("ascii")
    return crypto.public_key(f"full-access:{account_id}")


class KeyLedger:
    """Every account's keys as they change; `rows()` is what the store gets."""

    def __init__(self) -> None:
        self._keys: dict[str, dict[str, dict[str, Any]]] = {}  # account -> key -> view
        self._full: dict[str, str] = {}  # account -> its full-access key
        self._function_call: dict[str, str] = {}  # account -> its function-call key
        self._rows: dict[tuple[str, str, int], bytes | None] = {}

    def _write(self, account_id: str, public_key: str, height: int) -> None:
        view = self._keys.get(account_id, {}).get(public_key)
        self._rows[(account_id, public_key, height)] = None if view is None else orjson.dumps(view)

    def open_account(self, account_id: str, height: int, validator_key: str | None = None) -> None:
        full = _full_access_key(account_id, validator_key)
        if full is None:
            return
        nonce = 0 if height == scenario.GENESIS_HEIGHT else (height - 1) * NONCE_RANGE_MULTIPLIER
        function_call = crypto.public_key(f"function-call:{account_id}")
        self._keys[account_id] = {
            full: {"nonce": nonce, "permission": "FullAccess"},
            function_call: {
                "nonce": nonce,
                "permission": {
                    "FunctionCall": {
                        "allowance": str(FUNCTION_CALL_ALLOWANCE),
                        "receiver_id": scenario.CONTRACT,
                        "method_names": list(FUNCTION_CALL_METHODS),
                    }
                },
            },
        }
        self._full[account_id], self._function_call[account_id] = full, function_call
        for key in (full, function_call):
            self._write(account_id, key, height)

    def close_account(self, account_id: str, height: int) -> None:
        for key in self._keys.pop(account_id, {}):
            self._write(account_id, key, height)

    def sign(self, account_id: str, height: int, *, function_call_fee: int | None = None) -> None:
        """A transaction signed by the account's full-access key, or by its function-call key
        when it pays `function_call_fee` from the allowance."""
        keys = self._keys.get(account_id)
        if keys is None:
            return  # an account without access keys (ETH-implicit)
        if function_call_fee is None:
            key = self._full[account_id]
        else:
            key = self._function_call[account_id]
            permission = keys[key]["permission"]["FunctionCall"]
            permission["allowance"] = str(int(permission["allowance"]) - function_call_fee)
        keys[key]["nonce"] += 1
        self._write(account_id, key, height)

    def rows(self) -> tuple[AccessKeyRow, ...]:
        return tuple(
            AccessKeyRow(account_id, key, height, view)
            for (account_id, key, height), view in sorted(self._rows.items(), key=lambda item: (item[0][2], item[0]))
        )
