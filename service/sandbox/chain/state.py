"""The runtime's `StateView` over the store: the chain's state as of one block, read through the
chain writer's own reader (on its thread), never written through."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from nearrpc.sandbox.chain.views import access_key_from_json, account_from_json
from nearrpc.sandbox.runtime.model import AccessKey, Account
from nearrpc.store import ChainReader

# A limit no contract's state reaches (the scan stops at the account's last key).
_ALL_KEYS: Final = 1 << 62


class StoreStateView:
    def __init__(self, reader: ChainReader, height: int) -> None:
        self._reader = reader
        self._height = height

    def account(self, account_id: str) -> Account | None:
        found = self._reader.account_json(account_id, self._height)
        return None if found is None else account_from_json(found)

    def access_key(self, account_id: str, public_key: str) -> AccessKey | None:
        found = self._reader.access_key_json(account_id, public_key, self._height)
        return None if found is None else access_key_from_json(found)

    def access_keys(self, account_id: str) -> list[tuple[str, AccessKey]]:
        return [
            (key, access_key_from_json(view)) for key, view in self._reader.access_keys_json(account_id, self._height)
        ]

    def code(self, code_hash: str) -> bytes | None:
        return self._reader.contract_code(code_hash)

    def storage_read(self, account_id: str, key: bytes) -> bytes | None:
        return self._reader.contract_value(account_id, key, self._height)

    def storage_keys(self, account_id: str) -> Iterator[bytes]:
        # one range scan over the account's keys (DeleteAccount walks them all)
        for key, _ in self._reader.contract_state(account_id, b"", self._height, _ALL_KEYS):
            yield key
