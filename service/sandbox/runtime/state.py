"""The runtime's writes over the parent block's state: what a block changed so far, and what the
receipt being executed changed on top of it.

nearcore's TrieUpdate keeps committed and prospective changes the same way (core/store
`TrieUpdate::commit` / `rollback`): a receipt's actions write to the prospective layer, which
joins the block's changes when the receipt succeeds and is dropped when one of its actions
fails (runtime lib.rs `apply_action_receipt`), while its charges, written before it ran, stay.
Each commit names its cause and is kept in order (`commits`): nearcore's state changes list every
commit of a key with its cause, not only the block's last value.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Protocol, TypeVar, runtime_checkable

from nearrpc.sandbox.runtime.model import AccessKey, Account, Committed, StateChanges, StateView
from nearrpc.sandbox.runtime.trie_nodes import ChunkAccounting, account_keys, touched_nodes, value_node

K = TypeVar("K")
V = TypeVar("V")

_MISSING = object()


def _lookup(layers: tuple[dict[K, V | None], ...], key: K) -> object:
    for layer in layers:
        if key in layer:
            return layer[key]
    return _MISSING


class Overlay:
    """Reads through the receipt's changes, then the block's, then the parent state."""

    def __init__(self, base: StateView) -> None:
        self.base = base
        self.block = StateChanges()
        self.pending = StateChanges()
        self.pending_codes: dict[str, bytes | None] = {}  # the ContractCode key, by account
        self.commits: list[Committed] = []
        # the trie nodes contract writes touched in this block (its chunk), and each account's
        # contract keys in the parent state, sorted as trie keys (trie_nodes.py)
        self.accounting = ChunkAccounting()
        self._parent_keys: dict[str, list[bytes]] = {}

    # --- reads -------------------------------------------------------------------------------------
    def account(self, account_id: str) -> Account | None:
        found = _lookup((self.pending.accounts, self.block.accounts), account_id)
        if found is _MISSING:
            return self.base.account(account_id)
        return found  # type: ignore[return-value]

    def access_key(self, account_id: str, public_key: str) -> AccessKey | None:
        key = (account_id, public_key)
        found = _lookup((self.pending.access_keys, self.block.access_keys), key)
        if found is _MISSING:
            return self.base.access_key(account_id, public_key)
        return found  # type: ignore[return-value]

    def access_keys(self, account_id: str) -> list[tuple[str, AccessKey]]:
        keys = dict(self.base.access_keys(account_id))
        for layer in (self.block.access_keys, self.pending.access_keys):
            for (owner, public_key), value in layer.items():
                if owner != account_id:
                    continue
                if value is None:
                    keys.pop(public_key, None)
                else:
                    keys[public_key] = value
        return sorted(keys.items())

    def code(self, code_hash: str) -> bytes | None:
        for layer in (self.pending.codes, self.block.codes):
            if code_hash in layer:
                return layer[code_hash]
        return self.base.code(code_hash)

    def storage_read(self, account_id: str, key: bytes) -> bytes | None:
        found = _lookup((self.pending.data, self.block.data), (account_id, key))
        if found is _MISSING:
            return self.base.storage_read(account_id, key)
        return found  # type: ignore[return-value]

    def storage_keys(self, account_id: str) -> Iterator[bytes]:
        keys = set(self.base.storage_keys(account_id))
        for layer in (self.block.data, self.pending.data):
            for (owner, key), value in layer.items():
                if owner != account_id:
                    continue
                if value is None:
                    keys.discard(key)
                else:
                    keys.add(key)
        return iter(sorted(keys))

    def trie_nodes(self, account_id: str, key: bytes) -> tuple[int, int]:
        """The trie nodes a contract's write or removal of `key` touches, first in the block and
        before (trie_nodes.py): none when the block changed the key already (nearcore's
        TrieUpdate serves it), else the parent state's path to it."""
        if (account_id, key) in self.pending.data or (account_id, key) in self.block.data:
            return 0, 0
        keys = self._parent_keys.get(account_id)
        if keys is None:
            keys = self._parent_keys[account_id] = account_keys(account_id, _held_keys(self.base, account_id))
        base = self.base

        def value_of(present: bytes) -> bytes:
            value = base.storage_read(account_id, present)
            assert value is not None, "a key of the parent state"
            return value

        return self.accounting.count(touched_nodes(account_id, keys, key, value_of))

    def value_read(self, account_id: str, key: bytes) -> None:
        """A contract read `key`'s value: read from the parent state (not a value the block
        wrote, which nearcore's TrieUpdate holds), its node is touched, uncharged (logic.rs
        `storage_read`: `deref(&mut FreeGasCounter)`), so a later write finds it cached."""
        if (account_id, key) in self.pending.data or (account_id, key) in self.block.data:
            return
        value = self.base.storage_read(account_id, key)
        if value is not None:
            self.accounting.seen.add(value_node(value))

    # --- writes (to the receipt's layer) -----------------------------------------------------------
    def set_account(self, account_id: str, account: Account | None) -> None:
        self.pending.accounts[account_id] = account

    def set_access_key(self, account_id: str, public_key: str, access_key: AccessKey | None) -> None:
        self.pending.access_keys[(account_id, public_key)] = access_key

    def set_code(self, account_id: str, code_hash: str, code: bytes) -> None:
        """`account_id` deploys `code` (kept once by its hash)."""
        self.pending.codes[code_hash] = code
        self.pending_codes[account_id] = code

    def remove_code(self, account_id: str) -> None:
        """The account's code key goes with it (core/store `remove_account`), code or none."""
        self.pending_codes[account_id] = None

    def set_data(self, account_id: str, key: bytes, value: bytes | None) -> None:
        self.pending.data[(account_id, key)] = value

    # --- the receipt's layer joins the block's, or is dropped ---------------------------------------
    def commit(self, cause: Mapping[str, str]) -> None:
        """The pending writes join the block's under `cause` (a StateChangeCauseView); a commit
        that wrote nothing records nothing (core/store `TrieUpdate::commit`)."""
        pending, block = self.pending, self.block
        block.accounts.update(pending.accounts)
        block.access_keys.update(pending.access_keys)
        block.codes.update(pending.codes)
        block.data.update(pending.data)
        if pending.accounts or pending.access_keys or self.pending_codes or pending.data:
            self.commits.append(
                Committed(dict(cause), pending.accounts, pending.access_keys, self.pending_codes, pending.data)
            )
        self.pending = StateChanges()
        self.pending_codes = {}

    def rollback(self) -> None:
        self.pending = StateChanges()
        self.pending_codes = {}


class ContractStorage:
    """One account's contract storage as a call reads and writes it (contracts.call.CallState)."""

    def __init__(self, overlay: Overlay, account_id: str) -> None:
        self.overlay = overlay
        self.account_id = account_id

    def storage_read(self, key: bytes) -> bytes | None:
        return self.overlay.storage_read(self.account_id, key)

    def storage_write(self, key: bytes, value: bytes) -> None:
        self.overlay.set_data(self.account_id, key, value)

    def storage_remove(self, key: bytes) -> None:
        self.overlay.set_data(self.account_id, key, None)

    def trie_nodes(self, key: bytes) -> tuple[int, int]:
        """contracts.call.TrieNodes: the nodes a write's or removal's lookup touches."""
        return self.overlay.trie_nodes(self.account_id, key)

    def value_read(self, key: bytes) -> None:
        """contracts.call.TrieNodes: a value storage_read paid for."""
        self.overlay.value_read(self.account_id, key)


@runtime_checkable
class HeldKeys(Protocol):
    """A state view that can tell the keys it holds apart from those only an upstream could list
    (a sandboxed fork's: the keys fetched so far)."""

    def held_storage_keys(self, account_id: str) -> Iterator[bytes]: ...


def _held_keys(base: StateView, account_id: str) -> Iterator[bytes]:
    """The parent state's keys the trie-node count is built over: all of them, or for a sandboxed
    fork those it holds, never a whole listing fetched for a count (a large contract's listing is
    more than an upstream answers, and a write must not fail for it)."""
    if isinstance(base, HeldKeys):
        return base.held_storage_keys(account_id)
    return base.storage_keys(account_id)
