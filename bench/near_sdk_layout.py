"""near-sdk-rs 4's storage layout, written as its contracts write it: borsh values and the keys of
`near_sdk::collections` (near-sdk-rs at the parent of commit 1607d0d4, the build of the example
contracts in the shared reference folder: near-sdk/src/collections/{lookup_map,vector,
unordered_set,tree_map,lazy_option}.rs).

Every function returns the records a contract's own code would have left in its storage, so a
benchmark store can hold thousands of entries without running thousands of transactions; the
contracts' views read them back (tests/contracts/test_real_contracts.py)."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

Record = tuple[bytes, bytes]  # a storage key and its value


# borsh: integers little-endian, strings and byte vectors behind a u32 length, Option a 0/1 tag


def u64(value: int) -> bytes:
    return struct.pack("<Q", value)


def u128(value: int) -> bytes:
    return value.to_bytes(16, "little")


def vec(data: bytes) -> bytes:
    return struct.pack("<I", len(data)) + data


def string(text: str) -> bytes:
    return vec(text.encode())


def option(encoded: bytes | None) -> bytes:
    return b"\x00" if encoded is None else b"\x01" + encoded


def string_map(entries: dict[str, str]) -> bytes:
    """A `HashMap<String, String>` (or of AccountId): borsh writes its entries sorted by key."""
    return struct.pack("<I", len(entries)) + b"".join(string(k) + string(entries[k]) for k in sorted(entries))


# collections: a LookupMap's key is its prefix and the borsh key; a Vector's its prefix and the
# u64 index; a LazyOption's value sits under its own storage key. Their structs (in a parent's
# borsh) hold only those prefixes (and a Vector its length).


def lookup_key(prefix: bytes, borsh_key: bytes) -> bytes:
    return prefix + borsh_key


def vector_key(prefix: bytes, index: int) -> bytes:
    return prefix + u64(index)


def lookup_map_struct(prefix: bytes) -> bytes:
    return vec(prefix)


def vector_struct(length: int, prefix: bytes) -> bytes:
    return u64(length) + vec(prefix)


def unordered_set(prefix: bytes, elements: Sequence[bytes]) -> tuple[bytes, list[Record]]:
    """An UnorderedSet of borsh `elements` in insertion order: its struct and its records (prefix
    + "i" + element -> u64 index; prefix + "e" + u64 index -> element)."""
    index_prefix, elements_prefix = prefix + b"i", prefix + b"e"
    records: list[Record] = []
    for index, element in enumerate(elements):
        records.append((index_prefix + element, u64(index)))
        records.append((vector_key(elements_prefix, index), element))
    return vec(index_prefix) + vector_struct(len(elements), elements_prefix), records


@dataclass(frozen=True, slots=True)
class _Node:
    """A TreeMap node as stored: its id (its index in the tree's Vector), key, links and height."""

    id: int
    key: bytes  # the key's borsh bytes
    order: bytes  # what the contract compares (a String's UTF-8 bytes)
    lft: int | None = None
    rgt: int | None = None
    ht: int = 1

    def borsh(self) -> bytes:
        links = option(None if self.lft is None else u64(self.lft)) + option(
            None if self.rgt is None else u64(self.rgt)
        )
        return u64(self.id) + self.key + links + u64(self.ht)


class _AvlTree:
    """TreeMap's AVL insert, step for step as near-sdk's `insert_at` / `enforce_balance` does it
    (nodes read as copies and saved back), so the nodes and root are the ones the contract would
    have written after the same inserts. near-sdk calls the rotation that lifts the left child
    `rotate_left`; the names here say what moves."""

    def __init__(self) -> None:
        self.nodes: list[_Node] = []
        self.root = 0

    def _node(self, at: int | None) -> _Node | None:
        return self.nodes[at] if at is not None and at < len(self.nodes) else None

    def _save(self, node: _Node) -> _Node:
        if node.id < len(self.nodes):
            self.nodes[node.id] = node
        else:
            self.nodes.append(node)
        return node

    def _height(self, at: int | None) -> int:
        node = self._node(at)
        return 0 if node is None else node.ht

    def _update_height(self, node: _Node) -> _Node:
        return self._save(replace(node, ht=1 + max(self._height(node.lft), self._height(node.rgt))))

    def _balance(self, node: _Node) -> int:
        return self._height(node.lft) - self._height(node.rgt)

    def _lift_left(self, node: _Node) -> int:
        lft = self.nodes[node.lft] if node.lft is not None else None
        assert lft is not None
        node = self._update_height(replace(node, lft=lft.rgt))
        self._update_height(replace(lft, rgt=node.id))
        return lft.id

    def _lift_right(self, node: _Node) -> int:
        rgt = self.nodes[node.rgt] if node.rgt is not None else None
        assert rgt is not None
        node = self._update_height(replace(node, rgt=rgt.lft))
        self._update_height(replace(rgt, lft=node.id))
        return rgt.id

    def _enforce_balance(self, node: _Node) -> int:
        balance = self._balance(node)
        if balance > 1:
            lft = self.nodes[node.lft] if node.lft is not None else None
            assert lft is not None
            if self._balance(lft) < 0:
                node = replace(node, lft=self._lift_right(lft))
            return self._lift_left(node)
        if balance < -1:
            rgt = self.nodes[node.rgt] if node.rgt is not None else None
            assert rgt is not None
            if self._balance(rgt) > 0:
                node = replace(node, rgt=self._lift_left(rgt))
            return self._lift_right(node)
        return node.id

    def _insert_at(self, at: int, new: _Node) -> int:
        node = self._node(at)
        if node is None:
            self._save(new)
            return at
        if new.order == node.order:
            return at
        if new.order < node.order:
            node = replace(node, lft=self._insert_at(new.id if node.lft is None else node.lft, new))
        else:
            node = replace(node, rgt=self._insert_at(new.id if node.rgt is None else node.rgt, new))
        return self._enforce_balance(self._update_height(node))

    def insert(self, key: bytes, order: bytes) -> None:
        self.root = self._insert_at(self.root, _Node(len(self.nodes), key, order))


def tree_map(prefix: bytes, entries: Iterable[tuple[str, bytes]]) -> tuple[bytes, list[Record]]:
    """A `TreeMap<String, V>` after inserting `entries` (key, borsh value) in order, each key once:
    its struct (root, the values' LookupMap, the nodes' Vector) and its records (prefix + "v" +
    key -> value; prefix + "n" + u64 id -> node)."""
    values_prefix, nodes_prefix = prefix + b"v", prefix + b"n"
    tree = _AvlTree()
    records: list[Record] = []
    for key, value in entries:
        tree.insert(string(key), key.encode())
        records.append((lookup_key(values_prefix, string(key)), value))
    records += [(vector_key(nodes_prefix, node.id), node.borsh()) for node in tree.nodes]
    structure = u64(tree.root) + lookup_map_struct(values_prefix) + vector_struct(len(tree.nodes), nodes_prefix)
    return structure, records
