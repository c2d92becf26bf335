"""A sandbox block's state changes with their causes, recorded as the runtime committed them, for
the changes methods (`methods.changes` reads the record).

nearcore stores, per block and trie key, every commit that wrote the key, each with its cause
(core/store trie/update.rs `TrieUpdate::commit`; chain/chain store `get_state_changes`): a
transaction to its own signer changes the signer's account twice in one block (the charge under
`transaction_processing`, then the receipt's writes under `receipt_processing`), which the store's
rows (one value per key and height) cannot tell. The record keeps each change of each key in
order: JSON `{"block_hash", "keys": [{"kind", "account_id", ["public_key" | "key_base64"],
"changes": [{"cause", "value"}]}]}`, the values as the rows hold them (an account's view, an access
key's view, a code hash, base64 contract data; null for a deletion). The order of the keys is the
reader's to make.

A sandbox_patch_state's records come last, under `migration` (runtime lib.rs
`apply_state_patch`, committed after the receipts).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from typing import Any, Final

import orjson

from nearrpc.sandbox.chain.patch import Patch
from nearrpc.sandbox.chain.views import access_key_json, account_json
from nearrpc.sandbox.runtime.actions import code_hash_of
from nearrpc.sandbox.runtime.model import Account, Committed

MIGRATION: Final = {"type": "migration"}
# What a block whose changes the runtime did not tell records over a stale record at its height:
# no block has this hash, so its changes come from the rows.
NO_RECORD: Final = orjson.dumps({"block_hash": None})

_Key = tuple[str, str, str]  # (kind, account id, key within the account)


class ChangesRecord:
    """The changes of one block, gathered commit by commit."""

    def __init__(self, earlier_account: Callable[[str], bytes | None]) -> None:
        """`earlier_account`: an account's view as of the parent block (members the runtime's
        model does not carry are kept from it, as the rows keep them)."""
        self._earlier = earlier_account
        self._earlier_views: dict[str, bytes | None] = {}
        self._keys: dict[_Key, list[dict[str, Any]]] = {}

    def _account_view(self, account_id: str, account: Account) -> orjson.Fragment:
        if account_id not in self._earlier_views:
            self._earlier_views[account_id] = self._earlier(account_id)
        return orjson.Fragment(account_json(account, self._earlier_views[account_id]))

    def _add(self, key: _Key, cause: Any, value: Any) -> None:
        self._keys.setdefault(key, []).append({"cause": cause, "value": value})

    def add_commits(self, commits: Iterable[Committed]) -> None:
        for commit in commits:
            cause = dict(commit.cause)
            for account_id, account in commit.accounts.items():
                view = None if account is None else self._account_view(account_id, account)
                self._add(("account", account_id, ""), cause, view)
            for (account_id, public_key), access_key in commit.access_keys.items():
                key_view = None if access_key is None else orjson.Fragment(access_key_json(access_key))
                self._add(("access_key", account_id, public_key), cause, key_view)
            for account_id, code in commit.codes.items():
                self._add(("code", account_id, ""), cause, None if code is None else code_hash_of(code))
            for (account_id, data_key), value in commit.data.items():
                encoded = None if value is None else base64.b64encode(value).decode("ascii")
                self._add(("data", account_id, base64.b64encode(data_key).decode("ascii")), cause, encoded)

    def add_patch(self, patch: Patch, account_views: dict[str, bytes]) -> None:
        """A patch's records as the block writes them (`account_views`: each patched account's
        view as written)."""
        for account_id, view in account_views.items():
            self._add(("account", account_id, ""), MIGRATION, orjson.Fragment(view))
        for (account_id, public_key), key_view in patch.access_keys.items():
            self._add(("access_key", account_id, public_key), MIGRATION, orjson.Fragment(key_view))
        for account_id, code_hash in patch.code_of.items():
            self._add(("code", account_id, ""), MIGRATION, code_hash)
        for (account_id, data_key), value in patch.data.items():
            key_base64 = base64.b64encode(data_key).decode("ascii")
            self._add(("data", account_id, key_base64), MIGRATION, base64.b64encode(value).decode("ascii"))

    def __bool__(self) -> bool:
        return bool(self._keys)

    def encoded(self, block_hash: str) -> bytes:
        keys = []
        for (kind, account_id, inner), changes in self._keys.items():
            entry: dict[str, Any] = {"kind": kind, "account_id": account_id}
            if kind == "access_key":
                entry["public_key"] = inner
            elif kind == "data":
                entry["key_base64"] = inner
            entry["changes"] = changes
            keys.append(entry)
        return orjson.dumps({"block_hash": block_hash, "keys": keys})
