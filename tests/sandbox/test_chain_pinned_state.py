"""The runtime's state view over a sandboxed fork (sandbox/chain/state.py), on the sample store:
each item is fetched at the pin before it is read, except what the store answers otherwise at
the view's height than at the pin (a row of the sandbox's between: never fetched); one fetch
budget per view; a view below the pin fetches nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from nearrpc.sandbox.chain.state import StoreStateView
from nearrpc.sandbox.runtime.state import Overlay
from nearrpc.store import ChainReader, open_store

ALICE = "alice.localnet"


class Fetches:
    def __init__(self, log: list[tuple[str, ...]]) -> None:
        self.log = log

    def account(self, account_id: str) -> None:
        self.log.append(("account", account_id))

    def access_key(self, account_id: str, public_key: str) -> None:
        self.log.append(("access_key", account_id, public_key))

    def access_keys(self, account_id: str) -> None:
        self.log.append(("access_keys", account_id))

    def code(self, code_hash: str, account_id: str | None) -> None:
        self.log.append(("code", code_hash, str(account_id)))

    def storage(self, account_id: str, key: bytes) -> None:
        self.log.append(("storage", account_id, key.decode()))

    def storage_keys(self, account_id: str) -> None:
        self.log.append(("storage_keys", account_id))


class Pinned:
    def __init__(self, pin: int) -> None:
        self._pin = pin
        self.views = 0
        self.log: list[tuple[str, ...]] = []

    @property
    def pin(self) -> int:
        return self._pin

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        del loop

    def fetches(self) -> Fetches:
        self.views += 1
        return Fetches(self.log)


@pytest.fixture
def reader(sample_store: Path) -> Iterator[ChainReader]:
    store = open_store(sample_store, "read")
    yield store
    store.close()


def _changed_between(reader: ChainReader, account_id: str, low: int, high: int) -> bool:
    return reader.account_json(account_id, low) != reader.account_json(account_id, high)


def test_what_changed_above_the_pin_is_read_and_the_rest_fetched_first(reader: ChainReader) -> None:
    head = reader.head()
    assert head is not None
    pin = Pinned(head.height - 60)
    view = StoreStateView(reader, head.height, pin)
    assert _changed_between(reader, ALICE, pin.pin, head.height)  # alice sends in the sample's later blocks
    alice = view.account(ALICE)
    assert alice is not None and pin.log == []  # the store's above the pin: as the sandbox's, never fetched
    assert view.account("nobody.localnet") is None
    assert pin.log == [("account", "nobody.localnet")]  # the same at both heights: fetched at the pin first
    assert view.storage_read("nobody.localnet", b"STATE") is None
    list(view.storage_keys(ALICE))
    view.access_keys(ALICE)
    assert pin.log[1:] == [("storage", "nobody.localnet", "STATE"), ("storage_keys", ALICE), ("access_keys", ALICE)]
    assert pin.views == 1  # one budget for the view


def test_a_known_code_is_not_fetched_and_a_view_below_the_pin_fetches_nothing(reader: ChainReader) -> None:
    head = reader.head()
    assert head is not None
    pin = Pinned(head.height)
    view = StoreStateView(reader, head.height, pin)
    counter = view.account("counter.localnet")
    assert counter is not None and view.code(counter.code_hash)  # the store holds it
    assert pin.log == [("account", "counter.localnet")]
    below = StoreStateView(reader, head.height - 1, pin)
    assert below.account("counter.localnet") is not None and below.code("x" * 44) is None
    assert pin.log == [("account", "counter.localnet")] and pin.views == 1


def test_a_writes_trie_node_count_fetches_no_listing(reader: ChainReader) -> None:
    """A storage_write's trie nodes are counted over the keys the fork holds: a whole listing of a
    forked contract (more than an upstream answers for a large one) is fetched only by what needs
    every key (DeleteAccount), never to price a write."""
    head = reader.head()
    assert head is not None
    counter = "counter.localnet"
    pin = Pinned(head.height)
    overlay = Overlay(StoreStateView(reader, head.height, pin))
    touched, cached = overlay.trie_nodes(counter, b"STATE")
    assert touched > 0 and cached == 0
    assert ("storage_keys", counter) not in pin.log
    list(overlay.storage_keys(counter))  # a DeleteAccount's walk does list them
    assert ("storage_keys", counter) in pin.log
