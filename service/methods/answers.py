"""Answers kept in memory across requests, and which stored data each one depends on.

An answer is the result bytes or the RpcError a method gave for one exact params value. It
stays valid until a write changes a kind of data it was computed from (StoreVersion's kinds:
configs, blocks, epochs, accounts, access keys, code, contract data), so a change drops exactly the answers it
invalidates; a store file replaced while served drops them all. The cache is an LRU bounded by the
bytes it holds, with an admission rule for when it is full: an answer that would evict others gets
in only at its second request (a "doorkeeper", TinyLFU's first stage). Under real traffic most keys
are asked once; plain LRU let each of them evict a hot answer, and paid an eviction and a copy for a
key that never comes back.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Final

from nearrpc.methods.blocks import BlockReference
from nearrpc.methods.errors import Cause, RpcError
from nearrpc.store import ANOTHER_STORE

Answer = bytes | RpcError

# What a method's answer is computed from, by the kind of reference it was asked with.
_CONFIGS: Final = frozenset({"configs"})
_AT_BLOCK: Final = {
    "block": frozenset({"blocks"}),
    "EXPERIMENTAL_protocol_config": frozenset({"blocks", "epochs", "configs"}),
    "EXPERIMENTAL_view_account": frozenset({"blocks", "accounts"}),
    "gas_price": frozenset({"blocks"}),
    # the shard of an account comes from the epoch's (or the genesis) shard layout
    "query": frozenset({"blocks", "accounts", "epochs", "configs", "access_keys", "codes", "contract_data"}),
    "EXPERIMENTAL_view_code": frozenset({"blocks", "accounts", "codes"}),
    "EXPERIMENTAL_view_access_key": frozenset({"blocks", "access_keys"}),
    "EXPERIMENTAL_view_access_key_list": frozenset({"blocks", "access_keys"}),
    # a call runs the code on the contract's state with its epoch's gas costs (protocol config)
    "EXPERIMENTAL_call_function": frozenset({"blocks", "accounts", "codes", "contract_data", "epochs", "configs"}),
    "EXPERIMENTAL_view_state": frozenset({"blocks", "accounts", "codes", "contract_data", "configs", "epochs"}),
    # a block's rows against its parent's (a block's canonical place too), causes from its
    # transactions and receipts (methods.changes)
    **dict.fromkeys(
        ("EXPERIMENTAL_changes_in_block", "block_effects", "EXPERIMENTAL_changes", "changes"),
        frozenset({"blocks", "accounts", "access_keys", "codes", "contract_data", "transactions", "receipts"}),
    ),
}
# Asked by hash, a found block is the same block forever; what was read at it may still change.
_AT_HASH: Final = {
    "block": frozenset[str](),
    "EXPERIMENTAL_protocol_config": frozenset({"epochs", "configs"}),
    "EXPERIMENTAL_view_account": frozenset({"accounts"}),
    "gas_price": frozenset[str](),
    "query": frozenset({"accounts", "epochs", "configs", "access_keys", "codes", "contract_data"}),
    "EXPERIMENTAL_view_code": frozenset({"accounts", "codes"}),
    "EXPERIMENTAL_view_access_key": frozenset({"access_keys"}),
    "EXPERIMENTAL_view_access_key_list": frozenset({"access_keys"}),
    "EXPERIMENTAL_call_function": frozenset({"accounts", "codes", "contract_data", "epochs", "configs"}),
    "EXPERIMENTAL_view_state": frozenset({"accounts", "codes", "contract_data", "configs", "epochs"}),
    # whether the block is canonical and its parent stored may change with a write of blocks
    **dict.fromkeys(
        ("EXPERIMENTAL_changes_in_block", "block_effects", "EXPERIMENTAL_changes", "changes"),
        frozenset({"blocks", "accounts", "access_keys", "codes", "contract_data", "transactions", "receipts"}),
    ),
}
# Issue 30's reads, asked by hash or id rather than at a block (their params hold no block
# reference, or a block id only as one member of another): what their answers are read from.
# The chain's final block decides a transaction's status; a block's chunk header its chunk.
BY_ID: Final = {
    "chunk": frozenset({"blocks", "chunks"}),
    "tx": frozenset({"blocks", "transactions"}),
    "EXPERIMENTAL_tx_status": frozenset({"blocks", "transactions"}),
    "EXPERIMENTAL_receipt": frozenset({"receipts"}),
    "validators": frozenset({"blocks", "validators"}),
    "EXPERIMENTAL_validators_ordered": frozenset({"blocks", "validators"}),
}
# Of those, the answers that follow the head (a transaction's status, the latest epoch): where
# heads move with no write here (a fork), they are not kept.
FOLLOW_THE_HEAD: Final = frozenset({"tx", "EXPERIMENTAL_tx_status", "validators", "EXPERIMENTAL_validators_ordered"})
# Answers that change with every request: `status` carries the service's uptime; `health` says
# whether the store can be read now, which no write announces; the writing methods act.
_NEVER_KEPT: Final = frozenset({
    "status", "health", "send_tx", "broadcast_tx_commit", "broadcast_tx_async",
    "sandbox_patch_state", "sandbox_fast_forward", "sandbox_snapshot", "sandbox_revert",
})  # fmt: skip
_ERROR_SIZE: Final = 512  # an RpcError with its texts, roughly


def depends_on(method: str, reference: BlockReference | None, answer: Answer) -> frozenset[str] | None:
    """The kinds of stored data `answer` was computed from; None: do not keep it (a store
    failure may be gone at the next request)."""
    if method in _NEVER_KEPT:
        return None
    if isinstance(answer, RpcError):
        if answer.kind.cause is Cause.INTERNAL_ERROR:
            return None
        if answer.kind.cause is Cause.PARSE_ERROR:
            return frozenset()  # decided by the params alone
    by_id = BY_ID.get(method)
    if by_id is not None:
        return by_id  # an unknown hash or id may be written later, as a found one may change status
    if isinstance(answer, RpcError):
        # unknown blocks and accounts may be written later; the 422 rule reads the head
        return _AT_BLOCK.get(method, frozenset()) | {"blocks"}
    if reference is None:
        return _CONFIGS
    by_hash = reference.kind == "block_id" and isinstance(reference.value, str)
    return (_AT_HASH if by_hash else _AT_BLOCK)[method]


# What an entry holds beyond its answer's bytes: key, tuples, the LRU's dicts and order (measured
# with tracemalloc: about 620 bytes)
_ENTRY_OVERHEAD: Final = 640


def _size(answer: Answer) -> int:
    return len(answer) + _ENTRY_OVERHEAD if isinstance(answer, bytes) else _ERROR_SIZE


# How many keys the doorkeeper remembers at most before it starts afresh (its ageing): about 60
# bytes each. A key must come back within this many refused keys (or one cache's worth, if more).
_DOORKEEPER_KEYS: Final = 100_000


class AnswerCache:
    """Answers by (method, params) key, each with the kinds of data it depends on.

    The LRU is an OrderedDict kept here, not a cache library's: a miss's put (with the eviction
    it makes room by) and a hit's get are then a few C calls each, where cachetools' layers of
    Python methods cost microseconds on every request (bench.lookup_profile)."""

    def __init__(self, max_bytes: int) -> None:
        # key -> (kinds, answer, size), least recently used first
        self._entries: OrderedDict[Hashable, tuple[frozenset[str], Answer, int]] = OrderedDict()
        self._max_bytes = max(max_bytes, 1)
        self._bytes = 0
        self._enabled = max_bytes > 0
        self._seen_once: set[int] = set()  # hashes of keys refused once while the cache was full

    def get(self, key: Hashable) -> Answer | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        return entry[1]

    def put(self, key: Hashable, answer: Answer, kinds: frozenset[str]) -> None:
        size = _size(answer)
        if not self._enabled or size > self._max_bytes:
            return
        entries = self._entries
        replaced = entries.pop(key, None)
        if replaced is not None:
            self._bytes -= replaced[2]
        elif self._bytes + size > self._max_bytes and not self._admit(hash(key)):
            return
        if isinstance(answer, bytes):
            # a copy of exactly its size: bytes from orjson keep their larger output buffer
            answer = bytes(memoryview(answer))
        while self._bytes + size > self._max_bytes:  # the least recently used make room
            self._bytes -= entries.popitem(last=False)[1][2]
        entries[key] = (kinds, answer, size)
        self._bytes += size

    def _admit(self, token: int) -> bool:
        """Whether a key whose answer would evict others gets in: at its second time."""
        if token in self._seen_once:
            self._seen_once.discard(token)
            return True
        if len(self._seen_once) >= max(_DOORKEEPER_KEYS, len(self._entries)):
            self._seen_once.clear()
        self._seen_once.add(token)
        return False

    def forget(self, changed: frozenset[str]) -> None:
        """Drop every answer computed from a kind of data that has changed (all of them when the
        store is another one: a block found by hash there may not be stored here)."""
        if ANOTHER_STORE in changed:
            self._entries.clear()
            self._bytes = 0
        elif changed:
            stale = [key for key, (kinds, _, _) in self._entries.items() if kinds & changed]
            for key in stale:
                self._bytes -= self._entries.pop(key)[2]
