"""The runtime's `StateView` over the store: the chain's state as of one block, read through the
chain writer's own reader (on its thread), never written through.

Over a sandboxed fork (`serve --upstream URL --sandbox`) the chain starts at the fork's pinned
head, whose state the store holds only where something was fetched: each lookup first has the
fork make sure the store holds that item at the pin (`PinnedState`: fetched from the upstream
once, kept), then reads the store at the block asked, where the sandbox's own writes stand over
the pin's state. What the sandbox wrote is never fetched: the store answers it differently at
the block asked than at the pin (a row of the sandbox's between them); and a runtime reads an
account, a key or a storage value before it changes it, so what it changed was fetched before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Final, Protocol, TypeVar

from nearrpc.sandbox.chain.views import access_key_from_json, account_from_json
from nearrpc.sandbox.runtime.model import NO_CODE_HASH, AccessKey, Account
from nearrpc.store import ChainReader

# A limit no contract's state reaches (the scan stops at the account's last key).
_ALL_KEYS: Final = 1 << 62
T = TypeVar("T")


class PinnedFetches(Protocol):
    """One state view's fetches (one budget of upstream requests): each returns once the store
    holds the item at the pin, or raises a StoreError (the upstream failed, was too slow, or the
    budget is spent). Called on the chain writer's thread."""

    def account(self, account_id: str) -> None: ...

    def access_key(self, account_id: str, public_key: str) -> None: ...

    def access_keys(self, account_id: str) -> None: ...

    def code(self, code_hash: str, account_id: str | None) -> None:
        """`account_id`: an account this view saw with the code (None: none), to ask it at."""

    def storage(self, account_id: str, key: bytes) -> None: ...

    def storage_keys(self, account_id: str) -> None: ...


class PinnedState(Protocol):
    """A sandboxed fork's state below the chain: the pinned height, and fetches for one view."""

    @property
    def pin(self) -> int: ...

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """The event loop the fetches run on (the server's: the chain writer's `start`)."""

    def fetches(self) -> PinnedFetches: ...


class StoreStateView:
    def __init__(self, reader: ChainReader, height: int, pinned: PinnedState | None = None) -> None:
        self._reader = reader
        self._height = height
        # a sandboxed fork's fetches, for a view at or above its pin (below it, the store alone)
        self._fetch = pinned.fetches() if pinned is not None and height >= pinned.pin else None
        self._pin = height if pinned is None else pinned.pin
        self._code_owners: dict[str, str] = {}  # code hash -> an account read with it

    def _read(self, read: Callable[[int], T], fetch: Callable[[PinnedFetches], None]) -> T:
        """`read` at this view's height, once the store holds the item at the pin: fetched there
        unless the sandbox wrote it since (the store answers otherwise here than at the pin)."""
        found = read(self._height)
        if self._fetch is None or (self._height > self._pin and found != read(self._pin)):
            return found
        fetch(self._fetch)
        return read(self._height)

    def account(self, account_id: str) -> Account | None:
        found = self._read(
            lambda height: self._reader.account_json(account_id, height), lambda fetch: fetch.account(account_id)
        )
        if found is None:
            return None
        account = account_from_json(found)
        self._code_owners.setdefault(account.code_hash, account_id)
        return account

    def access_key(self, account_id: str, public_key: str) -> AccessKey | None:
        found = self._read(
            lambda height: self._reader.access_key_json(account_id, public_key, height),
            lambda fetch: fetch.access_key(account_id, public_key),
        )
        return None if found is None else access_key_from_json(found)

    def access_keys(self, account_id: str) -> list[tuple[str, AccessKey]]:
        if self._fetch is not None:  # the whole list, once (the store may hold some of its keys only)
            self._fetch.access_keys(account_id)
        return [
            (key, access_key_from_json(view)) for key, view in self._reader.access_keys_json(account_id, self._height)
        ]

    def prefetch(self, receiver_id: str) -> None:
        """Over a sandboxed fork, what a transaction's first receipt reads of its receiver for sure
        (its account, its code), fetched when the transaction is sent: a fetch that fails there
        refuses the send, where one that fails in a block leaves the transaction out of it."""
        if self._fetch is None:
            return
        account = self.account(receiver_id)
        if account is not None and account.code_hash != NO_CODE_HASH:
            self.code(account.code_hash)

    def code(self, code_hash: str) -> bytes | None:
        code = self._reader.contract_code(code_hash)
        if code is None and self._fetch is not None:
            self._fetch.code(code_hash, self._code_owners.get(code_hash))
            code = self._reader.contract_code(code_hash)
        return code

    def storage_read(self, account_id: str, key: bytes) -> bytes | None:
        return self._read(
            lambda height: self._reader.contract_value(account_id, key, height),
            lambda fetch: fetch.storage(account_id, key),
        )

    def storage_keys(self, account_id: str) -> Iterator[bytes]:
        if self._fetch is not None:  # the whole listing, once (DeleteAccount walks every key)
            self._fetch.storage_keys(account_id)
        return self.held_storage_keys(account_id)

    def held_storage_keys(self, account_id: str) -> Iterator[bytes]:
        """The keys the store holds, nothing fetched (a sandboxed fork's trie-node count is built
        over these: runtime/state.py `HeldKeys`); one range scan over the account's keys."""
        for key, _ in self._reader.contract_state(account_id, b"", self._height, _ALL_KEYS):
            yield key
