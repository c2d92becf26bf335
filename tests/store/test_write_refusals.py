"""Writes both backends refuse alike, leaving the store as it was: a stored block's hash at
another height (it would move the block and drop the one at that height), and heights a signed
64-bit integer cannot hold (SQLite failed with a traceback or stored a float)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from nearrpc.sample import SampleChain
from nearrpc.store import StoredBlock, StoreIntegrityError, WriteBatch, open_store
from tests.store.sqlite_files import dump as sqlite_dump
from tests.support.backends import BACKENDS
from tests.support.postgres import dump as postgres_dump


@pytest.fixture(params=BACKENDS)
def writable(request: pytest.FixtureRequest) -> Path | str:
    """A private copy of the sample chain's store on each backend."""
    fixture = "store_copy" if request.param == "sqlite" else "pg_copy"
    location: Path | str = request.getfixturevalue(fixture)
    return location


def _dump(location: Path | str) -> object:
    return sqlite_dump(location) if isinstance(location, Path) else postgres_dump(location)


def _at_height(block: StoredBlock, height: int) -> StoredBlock:
    """The same block (same hash) claiming another height."""
    view = orjson.loads(block.view_json)
    view["header"]["height"] = height
    return replace(block, height=height, view_json=json.dumps(view).encode())  # orjson stops at 2**64


def _refused(location: Path | str, put: Callable[[WriteBatch], None], match: str) -> None:
    before = _dump(location)
    for validate in (True, False):
        with open_store(location, "write") as writer:
            with pytest.raises(StoreIntegrityError, match=match), writer.batch(validate=validate) as batch:
                put(batch)
    assert _dump(location) == before


def test_a_stored_hash_at_another_height_is_refused(writable: Path | str, chain: SampleChain) -> None:
    block, head = chain.blocks[11], chain.blocks[-1]
    moved = _at_height(block, head.height)
    _refused(writable, lambda batch: batch.put_block(moved),
             rf"block {block.hash} is stored at height {block.height}; refusing it at height {head.height}")
    # within one batch too: the second put of the hash claims another height
    fresh = replace(_at_height(block, head.height + 5), hash="9" * 43)
    fresh = replace(fresh, view_json=fresh.view_json.replace(block.hash.encode(), b"9" * 43))
    def twice(batch: WriteBatch) -> None:
        batch.put_block(fresh)
        batch.put_block(_at_height(fresh, head.height + 6))

    _refused(writable, twice, rf"block {'9' * 43} is stored at height {head.height + 5}; refusing it at height")


def test_the_same_block_again_is_a_replacement(writable: Path | str, chain: SampleChain) -> None:
    with open_store(writable, "write") as writer, writer.batch() as batch:
        batch.put_block(chain.blocks[11])
    with contextlib.closing(open_store(writable, "read")) as reader:
        assert reader.block_by_height(chain.blocks[11].height) == chain.blocks[11]
        assert reader.info().block_count == len(chain.blocks)


@pytest.mark.parametrize("height", [2**63, 2**63 + 5, 2**64, 10**20])
def test_heights_past_64_bits_are_refused(writable: Path | str, chain: SampleChain, height: int) -> None:
    block = chain.blocks[-1]
    high = replace(_at_height(block, height), hash="8" * 43)
    high = replace(high, view_json=high.view_json.replace(block.hash.encode(), b"8" * 43))
    _refused(writable, lambda batch: batch.put_block(high), rf"block 8+: height {height} is out of range")
    account = next(row for row in chain.account_states if row.view_json is not None)
    _refused(writable, lambda batch: batch.put_account_state(account.account_id, height, account.view_json),
             rf"account {account.account_id}: height {height} is out of range")
