"""A block's state changes, derived from the store's rows between the block and its parent:
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

What cannot be known from rows: each row is a block's last value, so a key written several times
in a block (a signer charged by its transaction, then refunded by a receipt) is one change with
the last cause, where nearcore lists each write; a contract redeployed with the same code (its
hash did not move) is no change here; and a cause the store does not know is
`not_writable_to_disk` (spec/DEVIATIONS.md). The genesis block has no changes (nearcore records
none for the genesis state). A block whose parent the store does not hold, or one off the
canonical chain (rows are kept per height of the canonical chain), is refused: its rows are not
known to be its changes.

Order, as nearcore's store iterates trie keys: `changes_in_block` lists accounts, then code,
then access keys (by key bytes: type, then data), then contract data (by key bytes), each by
account id; `changes` lists the asked accounts (or keys) in the order asked, each one's rows in
that order.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from nearrpc.methods.change_causes import Cause, ChangeCauses
from nearrpc.methods.queries import code_hash_of
from nearrpc.nearcore.public_key import PublicKeyError, canonical_public_key
from nearrpc.nearcore.views import ZERO_HASH
from nearrpc.store import ServingReader, StoredBlock
from nearrpc.store.base import access_key_order

Found = Iterator[tuple[str, str, dict[str, Any]]]  # (account, row key, change) of one kind


class ChangesNotKnown(Exception):
    """The store cannot tell this block's changes; the message says why."""


@dataclass(frozen=True, slots=True)
class BlockRows:
    """What the store wrote at one block, each kind in nearcore's trie order."""

    block_hash: str
    accounts: tuple[tuple[str, dict[str, Any] | None], ...]  # the view, None: deleted
    codes: tuple[tuple[str, bytes | None], ...]  # the code, None: deleted
    access_keys: tuple[tuple[str, str, bytes | None], ...]  # (account, canonical key, view or None)
    data: tuple[tuple[str, bytes, bytes | None], ...]  # (account, storage key, value or None)
    causes: ChangeCauses | None  # None: no rows at all (the genesis block)


def _no_changes(block: StoredBlock) -> BlockRows:
    return BlockRows(block.hash, (), (), (), (), None)


async def read_block_rows(reader: ServingReader, block: StoredBlock) -> BlockRows:
    """The rows written at `block` against its parent, or ChangesNotKnown."""
    if block.prev_hash == ZERO_HASH:
        return _no_changes(block)
    genesis = await reader.genesis_block()
    if genesis is not None and genesis.hash == block.hash:
        return _no_changes(block)
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
    height = block.height
    accounts = sorted(
        ((account_id, None if view is None else orjson.loads(view)) for account_id, view in
         await reader.account_changes(height)),
        key=lambda row: row[0],
    )  # fmt: skip
    codes = [row async for row in _code_changes(reader, accounts, parent.height)]
    keys = sorted(
        ((account_id, canonical_public_key(key), view) for account_id, key, view in
         await reader.access_key_changes(height)),
        key=lambda row: (row[0], access_key_order(row[1])),
    )  # fmt: skip
    data = sorted(await reader.contract_data_changes(height), key=lambda row: (row[0], row[1]))
    causes = ChangeCauses(
        await reader.transactions_at(height),
        await reader.receipts_executed_at(height),
        starts_epoch=parent.epoch_id != block.epoch_id,
    )
    return BlockRows(block.hash, tuple(accounts), tuple(codes), tuple(keys), tuple(data), causes)


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
    """The RpcStateChangesInBlockByTypeResponse: one entry per changed row, in trie order."""
    kinds = [
        *({"type": "account_touched", "account_id": account_id} for account_id, _ in rows.accounts),
        *({"type": "contract_code_touched", "account_id": account_id} for account_id, _ in rows.codes),
        *({"type": "access_key_touched", "account_id": row[0]} for row in rows.access_keys),
        *({"type": "data_touched", "account_id": row[0]} for row in rows.data),
    ]
    return orjson.dumps({"block_hash": rows.block_hash, "changes": kinds})


def changes_result(rows: BlockRows, request: dict[str, Any]) -> bytes:
    """The RpcStateChangesInBlockResponse for one StateChangesRequestView (plain JSON params:
    `changes_type` with `account_ids`, `keys` or `key_prefix_base64`)."""
    changes_type = request["changes_type"]
    if rows.causes is None:  # nothing changed (the genesis block)
        changes: list[dict[str, Any]] = []
    elif changes_type == "single_access_key_changes":
        by_account = _grouped(_access_key_changes(rows.access_keys, rows.causes))
        changes = [
            change
            for asked in request["keys"]
            for key in (_canonical_or_none(asked["public_key"]),)
            for public_key, change in by_account.get(asked["account_id"], ())
            if public_key == key
        ]
    else:
        changes = _changes_of_accounts(rows, rows.causes, changes_type, request)
    return orjson.dumps({"block_hash": rows.block_hash, "changes": changes})


def _changes_of_accounts(
    rows: BlockRows, causes: ChangeCauses, changes_type: str, request: dict[str, Any]
) -> list[dict[str, Any]]:
    """The changes of each account in `account_ids`, in the order asked (repeats repeated)."""
    if changes_type == "account_changes":
        found = _account_changes(rows.accounts, causes)
    elif changes_type == "all_access_key_changes":
        found = _access_key_changes(rows.access_keys, causes)
    elif changes_type == "contract_code_changes":
        found = _code_changes_of(rows.codes, causes)
    else:  # data_changes
        prefix = base64.b64decode(request["key_prefix_base64"])
        found = _data_changes(rows.data, causes, prefix)
    by_account = _grouped(found)
    return [change for account_id in request["account_ids"] for _, change in by_account.get(account_id, ())]


def _grouped(changes: Found) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """(account, row key, change) grouped by account, each group in row order."""
    grouped: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for account_id, key, change in changes:
        grouped.setdefault(account_id, []).append((key, change))
    return grouped


def _canonical_or_none(public_key: str) -> str | None:
    try:
        return canonical_public_key(public_key)
    except PublicKeyError:  # the params model has checked it; no row can match anyway
        return None


def _with_cause(cause: Cause, change_type: str, change: dict[str, Any]) -> dict[str, Any]:
    return {"cause": cause, "type": change_type, "change": change}


def _account_changes(accounts: tuple[tuple[str, dict[str, Any] | None], ...], causes: ChangeCauses) -> Found:
    for account_id, view in accounts:
        cause = causes.account(account_id)
        if view is None:
            yield account_id, "", _with_cause(cause, "account_deletion", {"account_id": account_id})
        else:
            yield account_id, "", _with_cause(cause, "account_update", {"account_id": account_id, **view})


def _access_key_changes(keys: tuple[tuple[str, str, bytes | None], ...], causes: ChangeCauses) -> Found:
    for account_id, key, view in keys:
        cause = causes.access_key(account_id, key)
        if view is None:
            change = _with_cause(cause, "access_key_deletion", {"account_id": account_id, "public_key": key})
        else:
            updated = {"account_id": account_id, "public_key": key, "access_key": orjson.Fragment(view)}
            change = _with_cause(cause, "access_key_update", updated)
        yield account_id, key, change


def _code_changes_of(codes: tuple[tuple[str, bytes | None], ...], causes: ChangeCauses) -> Found:
    for account_id, code in codes:
        cause = causes.code(account_id)
        if code is None:
            yield account_id, "", _with_cause(cause, "contract_code_deletion", {"account_id": account_id})
        else:
            updated = {"account_id": account_id, "code_base64": base64.b64encode(code).decode("ascii")}
            yield account_id, "", _with_cause(cause, "contract_code_update", updated)


def _data_changes(data: tuple[tuple[str, bytes, bytes | None], ...], causes: ChangeCauses, prefix: bytes) -> Found:
    for account_id, key, value in data:
        if not key.startswith(prefix):
            continue
        cause = causes.data(account_id)
        key_base64 = base64.b64encode(key).decode("ascii")
        if value is None:
            change = _with_cause(cause, "data_deletion", {"account_id": account_id, "key_base64": key_base64})
        else:
            value_base64 = base64.b64encode(value).decode("ascii")
            updated = {"account_id": account_id, "key_base64": key_base64, "value_base64": value_base64}
            change = _with_cause(cause, "data_update", updated)
        yield account_id, key_base64, change
