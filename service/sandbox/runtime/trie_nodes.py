"""The trie nodes a contract's `storage_write` or `storage_remove` lookup touches, as nearcore
charges them (`touching_trie_node` for a node first touched in the chunk, `read_cached_trie_node`
for one touched before).

From nearcore: the lookup (runtime/runtime/src/ext.rs `storage_set` / `storage_remove`, a
`MemOrTrie` `get_optimized_ref`) is served by the chunk's `TrieUpdate` when the key was written or
removed earlier in the chunk (no node touched), else walks the parent state's trie from its root
(core/store trie/mod.rs `lookup_from_memory` / `lookup_from_state_column`): every node on the
path, the last one included when the key is absent, then the value when the key is present. A
node's first touch in the chunk is a `db_read`, a later one a `mem_read` (ext.rs
`AccountingState`, one per chunk, never rolled back). The trie is nearcore's Merkle-Patricia trie:
a leaf holds a key's remaining nibbles, an extension a run of nibbles all keys below share, a
branch sixteen children (and a value when a key ends there); a contract's key is the trie key
`0x09 | account id | ',' | key` (core/primitives trie_key.rs `ContractData`).

What nearrpc does instead of the whole trie, which it does not hold (other accounts, access keys,
code, the runtime's own queues): it builds the path over the account's own contract keys as they
stood in the parent state, exactly as nearcore's trie would shape them among themselves, and adds
ABOVE_ACCOUNT_NODES for the nodes above them: the root's two levels that every state with a
contract has (its keys start with nibbles 0 then 0, 1, 2 and 9 for accounts, code, access keys and
contract data, so an extension or branch then a branch), the nodes where other accounts' keys
branch off being left out. Where other accounts share the path (another contract with data whose
account id shares a prefix) nearcore touches more nodes than counted here. A value a contract
read is touched then too, uncharged (logic.rs `storage_read` dereferences it with a
`FreeGasCounter`), so a write of it later in the chunk pays its value as cached.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Callable, Iterable

ABOVE_ACCOUNT_NODES = 2
_CONTRACT_DATA = 9  # trie_key.rs `col::CONTRACT_DATA`


def trie_key(account_id: str, key: bytes) -> bytes:
    return bytes([_CONTRACT_DATA]) + account_id.encode() + b"," + key


def _nibble(key: bytes, at: int) -> int:
    byte = key[at >> 1]
    return byte >> 4 if at % 2 == 0 else byte & 0x0F


def path(keys: list[bytes], target: bytes, value_of: Callable[[bytes], bytes]) -> list[bytes]:
    """The identities of the nodes the lookup of `target` touches among the sorted trie `keys`
    (the path's nibble prefix and kind per node, a value by its content's hash, as nearcore's
    nodes are by hash), `value_of` giving a present key's value."""
    touched: list[bytes] = []
    low, high = 0, len(keys)  # the keys below the current node: keys[low:high]
    depth = 0  # nibbles consumed
    target_nibbles = len(target) * 2
    while low < high:
        prefix = _position(target, depth)
        if high - low == 1:  # a leaf
            touched.append(b"L" + prefix)
            if keys[low] == target:
                touched.append(value_node(value_of(target)))
            return touched
        common = _common_nibbles(keys[low], keys[high - 1], depth)
        if common > depth:  # an extension over the nibbles all these keys share
            touched.append(b"E" + prefix)
            if common > target_nibbles or any(
                _nibble(target, at) != _nibble(keys[low], at) for at in range(depth, common)
            ):
                return touched
            depth = common
            prefix = _position(target, depth)
        touched.append(b"B" + prefix)  # a branch
        ends_here = len(keys[low]) * 2 == depth  # sorted: a key ending here comes first
        if depth == target_nibbles:
            if ends_here:
                touched.append(value_node(value_of(keys[low])))
            return touched
        if ends_here:
            low += 1
        wanted = _nibble(target, depth)
        low, high = _child(keys, low, high, depth, wanted)
        depth += 1
    return touched


def value_node(value: bytes) -> bytes:
    """A value's node: by its content's hash, as nearcore's."""
    return b"V" + hashlib.sha256(value).digest()


def _position(target: bytes, depth: int) -> bytes:
    """A node's place: the first `depth` nibbles of the path to it."""
    half = target[depth // 2] & 0xF0 if depth % 2 else 0
    return depth.to_bytes(4, "big") + target[: depth // 2] + bytes([half])


def _common_nibbles(first: bytes, last: bytes, depth: int) -> int:
    """How many leading nibbles the sorted range's first and last keys share (all share them)."""
    limit = min(len(first), len(last)) * 2
    at = depth
    while at < limit and _nibble(first, at) == _nibble(last, at):
        at += 1
    return at


def _child(keys: list[bytes], low: int, high: int, depth: int, nibble: int) -> tuple[int, int]:
    """The keys of keys[low:high] (all at least depth + 1 nibbles long) whose nibble at `depth`
    is `nibble`."""
    start = low + bisect_left(range(low, high), nibble, key=lambda i: _nibble(keys[i], depth))
    stop = low + bisect_left(range(low, high), nibble + 1, key=lambda i: _nibble(keys[i], depth))
    return start, stop


def account_keys(account_id: str, keys: Iterable[bytes]) -> list[bytes]:
    """The sorted trie keys of an account's contract keys."""
    return sorted(trie_key(account_id, key) for key in keys)


def touched_nodes(account_id: str, keys: list[bytes], key: bytes, value_of: Callable[[bytes], bytes]) -> list[bytes]:
    """The nodes a write's or removal's lookup of the account's `key` touches in the parent
    state whose account keys are `keys` (account_keys), the nodes above them counted as
    ABOVE_ACCOUNT_NODES (the module's docstring)."""
    prefix = len(trie_key(account_id, b""))
    above = [b"A" + bytes([level]) for level in range(ABOVE_ACCOUNT_NODES)]
    return above + path(keys, trie_key(account_id, key), lambda full: value_of(full[prefix:]))


class ChunkAccounting:
    """The chunk's accounting state (ext.rs `AccountingState`): the nodes touched so far."""

    def __init__(self) -> None:
        self.seen: set[bytes] = set()

    def count(self, nodes: Iterable[bytes]) -> tuple[int, int]:
        """(first touches, repeated touches) of `nodes`, which are touched now."""
        first = repeated = 0
        for node in nodes:
            if node in self.seen:
                repeated += 1
            else:
                self.seen.add(node)
                first += 1
        return first, repeated
