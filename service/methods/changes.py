"""A block's state changes, as a sandbox recorded them or derived from the store's rows between
the block and its parent:
`EXPERIMENTAL_changes_in_block` / `block_effects` (what was touched) and `EXPERIMENTAL_changes`
/ `changes` (the new values, with their causes).

nearcore keeps every write of a block under (block hash, trie key), one entry per cause
(chain/chain/src/store `get_state_changes_in_block`, `get_state_changes`); the store keeps rows of
accounts, access keys and contract data written at exactly a block's height. So here:

- an account, access key or contract data row written at the block's height is a change of the
  block (an update, or a deletion for a row that removes it);
- code is kept by hash, so a code change is an account whose `code_hash` moved since the parent
  block (the code read by its hash), and a deleted account's code is deleted (nearcore removes the
  code key of every deleted account, whether or not it had code);
- causes come from the block's transactions and executed receipts (`change_causes`).

A block the sandbox made has its changes recorded as its runtime committed them
(sandbox/chain/changes.py, under `store.recorded_changes(height)`, naming the block's hash): every
change of each key, in order, each with its cause, as nearcore lists them; those answer as
recorded. What cannot be known from rows alone: each row is a block's last value, so a key
written several times in a block (a signer charged by its transaction, then refunded by a
receipt) is one change with the last cause, where nearcore lists each write; a contract redeployed
with the same code (its hash did not move) is no change here; and a cause the store does not know
is `not_writable_to_disk` (spec/DEVIATIONS.md). The genesis block has no changes (nearcore records
none for the genesis state). A block whose parent the store does not hold, or one off the
canonical chain (rows are kept per height of the canonical chain), is refused: its rows are not
known to be its changes.

Order, as nearcore's store iterates trie keys: `changes_in_block` lists accounts, then code,
then access keys (by key bytes: type, then data), then contract data (by key bytes), each by
account id, one entry per key however often it changed; `changes` lists the asked accounts (or
keys) in the order asked, each one's keys in that order, each key's changes in the order made.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any, Final

import orjson

from nearrpc.methods.change_causes import Cause, ChangeCauses
from nearrpc.methods.queries import code_hash_of
from nearrpc.nearcore.public_key import PublicKeyError, canonical_public_key
from nearrpc.nearcore.views import ZERO_HASH
from nearrpc.store import ServingReader, StoredBlock, recorded_changes
from nearrpc.store.base import access_key_order

# A key's kinds in nearcore's trie-key order (core/primitives trie_key.rs columns: account 0,
# contract code 1, access key 2, contract data 9) and the kind each is touched as.
_KIND_RANK: Final = {"account": 0, "code": 1, "access_key": 2, "data": 3}
_TOUCHED: Final = {
    "account": "account_touched", "code": "contract_code_touched", "access_key": "access_key_touched",
    "data": "data_touched",
}  # fmt: skip
_KIND_OF_REQUEST: Final = {
    "account_changes": "account", "all_access_key_changes": "access_key", "contract_code_changes": "code",
    "data_changes": "data",
}  # fmt: skip


class ChangesNotKnown(Exception):
    """The store cannot tell this block's changes; the message says why."""


@dataclass(frozen=True, slots=True)
class KeyChanges:
    """Every change of one trie key in a block, in the order made."""

    kind: str  # account, code, access_key, data
    account_id: str
    key: str  # the canonical public key of an access key; "" otherwise
    data_key: bytes  # a contract data key; b"" otherwise
    changes: tuple[dict[str, Any], ...]  # StateChangeWithCauseView objects

    def order(self) -> tuple[int, str, Any]:
        """nearcore's store iterates a block's changes by trie key bytes."""
        inner: Any = access_key_order(self.key) if self.kind == "access_key" else self.data_key
        return _KIND_RANK[self.kind], self.account_id, inner


@dataclass(frozen=True, slots=True)
class BlockRows:
    """A block's changes, key by key in trie order."""

    block_hash: str
    keys: tuple[KeyChanges, ...]


async def read_block_rows(reader: ServingReader, block: StoredBlock) -> BlockRows:
    """The changes of `block`: as a sandbox recorded them, or derived from the rows written at it
    against its parent; or ChangesNotKnown."""
    if block.prev_hash == ZERO_HASH:
        return BlockRows(block.hash, ())
    genesis = await reader.genesis_block()
    if genesis is not None and genesis.hash == block.hash:
        return BlockRows(block.hash, ())
    canonical = await reader.block_by_height(block.height)
    if canonical is None or canonical.hash != block.hash:
        raise ChangesNotKnown(
            f"block {block.hash} is not on the canonical chain this store keeps state rows of, so its changes "
            "are not known"
        )
    parent = await reader.block_by_hash(block.prev_hash)
    if parent is None:
        raise ChangesNotKnown(
            f"this store does not hold block {block.prev_hash}, the parent of block {block.hash}, so the rows "
            f"at height {block.height} are not known to be that block's changes"
        )
    recorded = await reader.kept_answer(recorded_changes(block.height))
    if recorded is not None:
        record = orjson.loads(recorded)
        if record.get("block_hash") == block.hash:
            return BlockRows(block.hash, await _recorded_keys(reader, record["keys"]))
    height = block.height
    accounts = [
        (account_id, None if view is None else orjson.loads(view))
        for account_id, view in await reader.account_changes(height)
    ]
    codes = [row async for row in _code_changes(reader, accounts, parent.height)]
    keys = [(account_id, canonical_public_key(key), view) for account_id, key, view in
            await reader.access_key_changes(height)]  # fmt: skip
    data = await reader.contract_data_changes(height)
    causes = ChangeCauses(
        await reader.transactions_at(height),
        await reader.receipts_executed_at(height),
        starts_epoch=parent.epoch_id != block.epoch_id,
    )
    derived = [
        *_account_changes(accounts, causes),
        *_code_changes_of(codes, causes),
        *_access_key_changes(keys, causes),
        *_data_changes(data, causes),
    ]
    return BlockRows(block.hash, tuple(sorted(derived, key=KeyChanges.order)))


async def _recorded_keys(reader: ServingReader, keys: list[dict[str, Any]]) -> tuple[KeyChanges, ...]:
    """A sandbox's record (sandbox/chain/changes.py) read into each key's changes."""
    found = []
    for entry in keys:
        kind, account_id = str(entry["kind"]), str(entry["account_id"])
        public_key = str(entry.get("public_key", ""))
        data_key = base64.b64decode(entry.get("key_base64", ""))
        changes = []
        for change in entry["changes"]:
            cause, value = change["cause"], change["value"]
            if kind == "account":
                changes.append(_account_change(cause, account_id, value))
            elif kind == "access_key":
                key_view = None if value is None else orjson.dumps(value)
                changes.append(_access_key_change(cause, account_id, public_key, key_view))
            elif kind == "code":
                changes.append(_code_change(cause, account_id, await _recorded_code(reader, account_id, value)))
            else:
                data_value = None if value is None else base64.b64decode(value)
                changes.append(_data_change(cause, account_id, data_key, data_value))
        found.append(KeyChanges(kind, account_id, public_key, data_key, tuple(changes)))
    return tuple(sorted(found, key=KeyChanges.order))


async def _recorded_code(reader: ServingReader, account_id: str, code_hash: str | None) -> bytes | None:
    """The code a record names by its hash (None: deleted)."""
    if code_hash is None:
        return None
    code = await reader.contract_code(code_hash)
    if code is None:
        raise ChangesNotKnown(f"the store holds no contract code with hash {code_hash} (of {account_id})")
    return code


Found = Iterator[KeyChanges]


async def _code_changes(
    reader: ServingReader, accounts: list[tuple[str, dict[str, Any] | None]], parent_height: int
) -> AsyncIterator[tuple[str, bytes | None]]:
    """Code changes of the changed accounts: a deleted account's code, a code_hash that moved."""
    for account_id, view in accounts:
        if view is None:
            yield account_id, None
            continue
        before = await reader.account_json(account_id, parent_height)
        old_hash = None if before is None else code_hash_of(orjson.loads(before))
        new_hash = code_hash_of(view)
        if new_hash == old_hash:
            continue
        if new_hash is None:
            yield account_id, None
            continue
        code = await reader.contract_code(new_hash)
        if code is None:
            raise ChangesNotKnown(f"the store holds no contract code with hash {new_hash} (of {account_id})")
        yield account_id, code


def kinds_result(rows: BlockRows) -> bytes:
    """The RpcStateChangesInBlockByTypeResponse: one entry per changed key (however many times it
    changed: chain/chain store `get_state_changes_in_block`), in trie order."""
    kinds = [{"type": _TOUCHED[key.kind], "account_id": key.account_id} for key in rows.keys]
    return orjson.dumps({"block_hash": rows.block_hash, "changes": kinds})


def changes_result(rows: BlockRows, request: dict[str, Any]) -> bytes:
    """The RpcStateChangesInBlockResponse for one StateChangesRequestView (plain JSON params:
    `changes_type` with `account_ids`, `keys` or `key_prefix_base64`): each asked key's changes,
    every one with its cause, in the order made (chain/chain store `get_state_changes`)."""
    changes_type = request["changes_type"]
    grouped: dict[tuple[str, str], list[KeyChanges]] = {}
    for key in rows.keys:
        grouped.setdefault((key.kind, key.account_id), []).append(key)
    changes: list[dict[str, Any]] = []
    if changes_type == "single_access_key_changes":
        for asked in request["keys"]:
            public_key = _canonical_or_none(asked["public_key"])
            for key in grouped.get(("access_key", asked["account_id"]), ()):
                if key.key == public_key:
                    changes.extend(key.changes)
    else:
        kind = _KIND_OF_REQUEST[changes_type]
        prefix = base64.b64decode(request["key_prefix_base64"]) if kind == "data" else b""
        for account_id in request["account_ids"]:  # in the order asked, repeats repeated
            for key in grouped.get((kind, account_id), ()):
                if key.data_key.startswith(prefix):
                    changes.extend(key.changes)
    return orjson.dumps({"block_hash": rows.block_hash, "changes": changes})


def _canonical_or_none(public_key: str) -> str | None:
    try:
        return canonical_public_key(public_key)
    except PublicKeyError:  # the params model has checked it; no row can match anyway
        return None


def _with_cause(cause: Cause, change_type: str, change: dict[str, Any]) -> dict[str, Any]:
    return {"cause": cause, "type": change_type, "change": change}


def _account_change(cause: Cause, account_id: str, view: dict[str, Any] | None) -> dict[str, Any]:
    if view is None:
        return _with_cause(cause, "account_deletion", {"account_id": account_id})
    return _with_cause(cause, "account_update", {"account_id": account_id, **view})


def _access_key_change(cause: Cause, account_id: str, key: str, view: bytes | None) -> dict[str, Any]:
    if view is None:
        return _with_cause(cause, "access_key_deletion", {"account_id": account_id, "public_key": key})
    updated = {"account_id": account_id, "public_key": key, "access_key": orjson.Fragment(view)}
    return _with_cause(cause, "access_key_update", updated)


def _code_change(cause: Cause, account_id: str, code: bytes | None) -> dict[str, Any]:
    if code is None:
        return _with_cause(cause, "contract_code_deletion", {"account_id": account_id})
    updated = {"account_id": account_id, "code_base64": base64.b64encode(code).decode("ascii")}
    return _with_cause(cause, "contract_code_update", updated)


def _data_change(cause: Cause, account_id: str, key: bytes, value: bytes | None) -> dict[str, Any]:
    key_base64 = base64.b64encode(key).decode("ascii")
    if value is None:
        return _with_cause(cause, "data_deletion", {"account_id": account_id, "key_base64": key_base64})
    value_base64 = base64.b64encode(value).decode("ascii")
    return _with_cause(
        cause, "data_update", {"account_id": account_id, "key_base64": key_base64, "value_base64": value_base64}
    )


# -- derived from the rows: one change per key, its cause told by `change_causes`


def _account_changes(accounts: list[tuple[str, dict[str, Any] | None]], causes: ChangeCauses) -> Found:
    for account_id, view in accounts:
        yield KeyChanges(
            "account", account_id, "", b"", (_account_change(causes.account(account_id), account_id, view),)
        )


def _access_key_changes(keys: list[tuple[str, str, bytes | None]], causes: ChangeCauses) -> Found:
    for account_id, key, view in keys:
        change = _access_key_change(causes.access_key(account_id, key), account_id, key, view)
        yield KeyChanges("access_key", account_id, key, b"", (change,))


def _code_changes_of(codes: list[tuple[str, bytes | None]], causes: ChangeCauses) -> Found:
    for account_id, code in codes:
        yield KeyChanges("code", account_id, "", b"", (_code_change(causes.code(account_id), account_id, code),))


def _data_changes(data: list[tuple[str, bytes, bytes | None]], causes: ChangeCauses) -> Found:
    for account_id, key, value in data:
        yield KeyChanges("data", account_id, "", key, (_data_change(causes.data(account_id), account_id, key, value),))
