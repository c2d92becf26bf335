"""The trie nodes a contract's storage_write / storage_remove pays for (sandbox trie_nodes.py),
counted by hand over nearcore's trie shapes: a leaf for a lone key, an extension over the nibbles
keys share, a branch where they part (with a value where a key ends), the value when present,
plus the two root levels above the account's keys; none for a key the block changed already; a
node touched again in the block paid as `read_cached_trie_node` (ext.rs `AccountingState`)."""

from __future__ import annotations

import hashlib

import pytest
import wasmtime

from nearrpc.contracts.call import CallContext, run_call
from nearrpc.contracts.gas import GasCosts
from nearrpc.contracts.host import ViewContext
from nearrpc.sandbox.runtime.state import ContractStorage, Overlay
from nearrpc.sandbox.runtime.trie_nodes import account_keys, touched_nodes
from tests.sandbox.runtime_support import RUNTIME_CONFIG, MemoryState

COSTS = GasCosts.from_protocol_config({"runtime_config": RUNTIME_CONFIG})
ABOVE = 2


def nodes(stored: list[bytes], key: bytes) -> list[bytes]:
    keys = account_keys("a", stored)
    return touched_nodes("a", keys, key, lambda present: b"v:" + present)


@pytest.mark.parametrize(
    ("stored", "key", "count"),
    [
        ([], b"k1", 0),  # an empty account: only the levels above
        ([b"k1"], b"k1", 2),  # a leaf, the value
        ([b"k1"], b"zz", 1),  # the leaf, which holds another key
        ([b"k1", b"k2"], b"k1", 4),  # extension over "a,k" and a nibble, branch, leaf, value
        ([b"k1", b"k2"], b"k3", 2),  # extension, branch without a child at 3
        ([b"k1", b"k2"], b"x", 1),  # the extension, which "x" leaves
        ([b"k", b"kk"], b"k", 3),  # extension, the branch holding "k"'s value, the value
        ([b"k", b"kk"], b"kk", 4),  # extension, branch, leaf, value
    ],
)
def test_a_lookup_touches_the_nodes_of_its_path(stored: list[bytes], key: bytes, count: int) -> None:
    assert len(nodes(stored, key)) == ABOVE + count


def test_the_same_value_at_two_keys_is_one_node() -> None:
    # nearcore's nodes and values are by hash: equal values are one value node
    keys = account_keys("a", [b"k1", b"k2"])
    first = touched_nodes("a", keys, b"k1", lambda _: b"same")
    second = touched_nodes("a", keys, b"k2", lambda _: b"same")
    assert first[-1] == second[-1]


WRITER = bytes(
    wasmtime.wat2wasm("""(module
 (import "env" "storage_write" (func $w (param i64 i64 i64 i64 i64) (result i64)))
 (import "env" "storage_remove" (func $r (param i64 i64 i64) (result i64)))
 (import "env" "storage_read" (func $g (param i64 i64 i64) (result i64)))
 (memory 1) (data (i32.const 0) "k1new")
 (func (export "write") (drop (call $w (i64.const 2) (i64.const 0) (i64.const 3) (i64.const 2) (i64.const 0))))
 (func (export "remove") (drop (call $r (i64.const 2) (i64.const 0) (i64.const 0))))
 (func (export "read_then_write") (drop (call $g (i64.const 2) (i64.const 0) (i64.const 1)))
   (drop (call $w (i64.const 2) (i64.const 0) (i64.const 3) (i64.const 2) (i64.const 0)))))""")
)


def ttn(overlay: Overlay, method: str) -> tuple[int, int]:
    """The call's (touching_trie_node, read_cached_trie_node) gas."""
    view = ViewContext("a", 1, 1, 1, 10**24, 0, 1000, bytes(32))
    call = CallContext(view, "s", b"\x00" + bytes(32), "s", 0, 10**14, 40)
    done = run_call(WRITER, hashlib.sha256(WRITER).hexdigest(), method, b"", call, ContractStorage(overlay, "a"), COSTS)
    return done.profile.get("touching_trie_node", 0), done.profile.get("read_cached_trie_node", 0)


def test_a_write_pays_the_parent_state_path_once_per_block() -> None:
    state = MemoryState()
    state.data[("a", b"k1")] = b"old"
    state.data[("a", b"k2")] = b"other"
    overlay = Overlay(state)
    node = COSTS.ext["touching_trie_node"]
    cached = COSTS.ext["read_cached_trie_node"]
    # the first write of k1: above (2), extension, branch, leaf, value: six first touches
    assert ttn(overlay, "write") == (6 * node, 0)
    # again in the same receipt: the block's TrieUpdate has the key, no node touched
    assert ttn(overlay, "write") == (0, 0)
    overlay.commit({"type": "receipt_processing", "receipt_hash": "x"})
    assert ttn(overlay, "remove") == (0, 0)
    # a new block: the parent state's path again
    fresh = Overlay(state)
    assert ttn(fresh, "remove") == (6 * node, 0)
    # then another key in the same block: above, extension and branch touched before, its leaf
    # and value new
    state.data[("a", b"k1")] = b"v"
    other = Overlay(state)
    assert ttn(other, "write") == (6 * node, 0)
    assert overlay_nodes(other, b"k2") == (2, 4)
    assert cached == node  # equal since protocol 82 (82.yaml): only the profile's split differs


def overlay_nodes(overlay: Overlay, key: bytes) -> tuple[int, int]:
    return overlay.trie_nodes("a", key)


def test_a_value_read_first_is_cached_for_the_write() -> None:
    # storage_read touches no path node (flat storage) but dereferences the value, uncharged:
    # the write then pays the path as first touches and the value as a cached one
    state = MemoryState()
    state.data[("a", b"k1")] = b"old"
    state.data[("a", b"k2")] = b"other"
    overlay = Overlay(state)
    node = COSTS.ext["touching_trie_node"]
    assert ttn(overlay, "read_then_write") == (5 * node, COSTS.ext["read_cached_trie_node"])
