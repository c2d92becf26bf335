"""What the sample chain stores, and the block reference forms the client tests go through.

Everything is read off `nearrpc.sample` and `tests.support.sample_facts`, never copied.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import near_jsonrpc_models as m
import orjson

from nearrpc.sample import sample_chain
from nearrpc.store.base import access_key_order
from tests.support.sample_facts import sample_facts


@cache
def hash_at(height: int) -> str:
    return next(block.hash for block in sample_chain().blocks if block.height == height)


@cache
def stored_block(height: int) -> dict[str, Any]:
    view: dict[str, Any] = orjson.loads(next(b.view_json for b in sample_chain().blocks if b.height == height))
    return view


def stored_account(account_id: str, height: int) -> dict[str, Any] | None:
    """The account's stored view as of `height` (its last state row at or below it); None when
    it did not exist then or had been deleted."""
    rows = [row for row in sample_chain().account_states if row.account_id == account_id and row.height <= height]
    if not rows or rows[-1].view_json is None:
        return None
    view: dict[str, Any] = orjson.loads(rows[-1].view_json)
    return view


def stored_access_keys(account_id: str, height: int) -> list[dict[str, Any]]:
    """The account's access keys as of `height` in nearcore's listing order, each as
    view_access_key_list lists it: {"public_key": ..., "access_key": the stored view}."""
    latest: dict[str, bytes | None] = {}
    for row in sample_chain().access_keys:
        if row.account_id == account_id and row.height <= height:
            latest[row.public_key] = row.view_json
    views = {key: view for key, view in latest.items() if view is not None}  # None: deleted by then
    return [{"public_key": key, "access_key": orjson.loads(views[key])} for key in sorted(views, key=access_key_order)]


@dataclass(frozen=True)
class Ref:
    """One block reference form and the height of the block it must resolve to."""

    name: str
    kind: str  # "block_id", "finality" or "sync_checkpoint"
    value: int | str
    height: int

    def block_id(self) -> m.BlockId:
        if isinstance(self.value, int):
            return m.BlockId(m.BlockIdBlockHeight(self.value))
        return m.BlockId(m.BlockIdCryptoHash(self.value))


def reference_forms() -> list[Ref]:
    """Every form: heights and hashes on both sides of the protocol upgrade, each finality and
    each sync checkpoint."""
    facts = sample_facts()
    upgraded = facts.first_upgraded_height
    before_upgrade = max(h for h in facts.block_heights if h < upgraded)
    return [
        Ref("height-genesis", "block_id", facts.genesis_height, facts.genesis_height),
        Ref("height-before-upgrade", "block_id", before_upgrade, before_upgrade),
        Ref("height-first-upgraded", "block_id", upgraded, upgraded),
        Ref("height-head", "block_id", facts.head_height, facts.head_height),
        Ref("hash-before-upgrade", "block_id", hash_at(before_upgrade), before_upgrade),
        Ref("hash-first-upgraded", "block_id", hash_at(upgraded), upgraded),
        Ref("hash-genesis", "block_id", facts.genesis_hash, facts.genesis_height),
        Ref("finality-optimistic", "finality", "optimistic", facts.head_height),
        Ref("finality-near-final", "finality", "near-final", facts.near_final_height),
        Ref("finality-final", "finality", "final", facts.final_height),
        Ref("sync-genesis", "sync_checkpoint", "genesis", facts.genesis_height),
        Ref("sync-earliest-available", "sync_checkpoint", "earliest_available", facts.block_heights[0]),
    ]


REFS = reference_forms()
REF_IDS = [ref.name for ref in REFS]


def block_request(ref: Ref) -> m.RpcBlockRequest:
    if ref.kind == "block_id":
        return m.RpcBlockRequest(m.RpcBlockRequestBlockId(block_id=ref.block_id()))
    if ref.kind == "finality":
        return m.RpcBlockRequest(m.RpcBlockRequestFinality(finality=m.Finality(ref.value)))
    return m.RpcBlockRequest(m.RpcBlockRequestSyncCheckpoint(sync_checkpoint=m.SyncCheckpoint(ref.value)))


def protocol_config_request(ref: Ref) -> m.RpcProtocolConfigRequest:
    if ref.kind == "block_id":
        return m.RpcProtocolConfigRequest(m.RpcProtocolConfigRequestBlockId(block_id=ref.block_id()))
    if ref.kind == "finality":
        return m.RpcProtocolConfigRequest(m.RpcProtocolConfigRequestFinality(finality=m.Finality(ref.value)))
    return m.RpcProtocolConfigRequest(
        m.RpcProtocolConfigRequestSyncCheckpoint(sync_checkpoint=m.SyncCheckpoint(ref.value))
    )


def view_account_request(ref: Ref, account_id: str) -> m.RpcViewAccountRequest:
    account = m.AccountId(account_id)
    if ref.kind == "block_id":
        return m.RpcViewAccountRequest(m.RpcViewAccountRequestBlockId(block_id=ref.block_id(), account_id=account))
    if ref.kind == "finality":
        return m.RpcViewAccountRequest(
            m.RpcViewAccountRequestFinality(finality=m.Finality(ref.value), account_id=account)
        )
    return m.RpcViewAccountRequest(
        m.RpcViewAccountRequestSyncCheckpoint(sync_checkpoint=m.SyncCheckpoint(ref.value), account_id=account)
    )


def error_cause(error: Any) -> Any:
    """The `cause` variant inside a client RpcError's pydantic error model."""
    return error.error.root.cause.root
