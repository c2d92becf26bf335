"""A block kept under another block's hash, on both backends: the full check finds the block
whose parent it contradicts, and `drop_block` (a fork's repair) removes it, its count with it,
after which the real block is kept and the check passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nearrpc.ingest.blocks_import import stored_block
from nearrpc.store import StoreIntegrityError, StoreLocation, open_store
from tests.support.postgres import PostgresServer


def _lie(location: StoreLocation) -> tuple[str, int]:
    """Replace block h (its hash dropped) by block h's view under the hash of block h+1, and
    drop block h+1: what a fork kept from an upstream that answered block h with h+1's hash.
    Returns block h+1's hash and h."""
    reader = open_store(location, "read")
    try:
        head = reader.head()
        assert head is not None
        h = head.height - 3
        real, after = reader.block_by_height(h), reader.block_by_height(h + 1)
        assert real is not None and after is not None and after.prev_hash == real.hash
        assert reader.block_by_height(h + 2) is not None
    finally:
        reader.close()
    view = json.loads(real.view_json)
    view["header"]["hash"] = after.hash
    with open_store(location, "write") as writer, writer.batch() as batch:
        batch.drop_block(after.hash)
        batch.drop_block(real.hash)
        batch.put_block(stored_block(view))
    return after.hash, h


def _links_of(location: StoreLocation) -> list[str]:
    reader = open_store(location, "read")
    try:
        check = reader.check(thorough=True)
        assert reader.check(thorough=False).ok  # the quick check reads no blocks' JSON
        return list(check.problems)
    finally:
        reader.close()


def _check_and_repair(location: StoreLocation, filled: StoreLocation) -> None:
    assert _links_of(location) == []
    after_hash, h = _lie(location)
    problems = _links_of(location)
    assert len(problems) == 1, problems
    assert f"at height {h + 2} names as its parent (prev_height {h + 1}) block {after_hash}" in problems[0]
    assert f"stored at height {h}" in problems[0]
    source = open_store(filled, "read")
    try:
        real_after, real = source.block_by_height(h + 1), source.block_by_height(h)
    finally:
        source.close()
    assert real_after is not None and real is not None
    with open_store(location, "write") as writer:
        with pytest.raises(StoreIntegrityError, match="a block's hash fixes its height"), writer.batch() as batch:
            batch.put_block(real_after)  # what blocked the real block for good before
        with writer.batch() as batch:
            batch.drop_block(after_hash)
            batch.drop_block("11111111111111111111111111111111")  # none such: nothing happens
            batch.put_block(real_after)
            batch.put_block(real)
    assert _links_of(location) == []  # the counts agree too: a drop counts
    reader = open_store(location, "read")
    try:
        kept = reader.block_by_height(h + 1)
        assert kept is not None and kept.hash == after_hash
    finally:
        reader.close()


def test_sqlite(store_copy: Path, filled_store_file: Path) -> None:
    _check_and_repair(store_copy, filled_store_file)


def test_postgres(pg_copy: str, filled: str, postgres: PostgresServer) -> None:
    _check_and_repair(pg_copy, filled)


def _drops_are_changes(location: StoreLocation) -> None:
    """A batch that only drops a block bumps the blocks' change counter (what readers' answer
    caches are dropped by); a block put and then dropped in one batch is gone at its end."""
    reader = open_store(location, "read")
    try:
        head = reader.head()
        assert head is not None
        block = reader.block_by_height(head.height - 1)
        assert block is not None
        before = reader.version().blocks
    finally:
        reader.close()
    with open_store(location, "write") as writer:
        with writer.batch() as batch:
            batch.drop_block(block.hash)
        reader = open_store(location, "read")
        try:
            assert reader.block_by_hash(block.hash) is None
            assert reader.version().blocks > before
        finally:
            reader.close()
        with writer.batch() as batch:
            batch.put_block(block)
            batch.drop_block(block.hash)
    reader = open_store(location, "read")
    try:
        assert reader.block_by_hash(block.hash) is None
        assert reader.check(thorough=False).ok  # the counts agree
    finally:
        reader.close()


def test_drops_are_changes_sqlite(store_copy: Path) -> None:
    _drops_are_changes(store_copy)


def test_drops_are_changes_postgres(pg_copy: str) -> None:
    _drops_are_changes(pg_copy)
