"""`block_json_by_height` / `block_json_by_hash`, what `block` by id reads: exactly the stored
view of the block the full lookups find, on both serving backends, and None wherever they find none."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from nearrpc.sample import SampleChain
from nearrpc.store import StoredBlock, open_store

UNKNOWN_HASH = "11111111111111111111111111111111"


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_block_json_lookup_reads_the_view_of_the_block_the_full_lookup_finds(
    backend: str, request: pytest.FixtureRequest, filled_store_file: Path, base_chain: SampleChain
) -> None:
    location = str(filled_store_file) if backend == "sqlite" else request.getfixturevalue("filled")
    expected = open_store(filled_store_file, "read")
    stored = {block.height for block in base_chain.blocks}
    skipped = [height for height in range(max(stored)) if height not in stored][:3]
    # the stored heights and hashes, heights the chain skipped, and heights no block can have
    heights = sorted(stored) + skipped + [max(stored) + 1, -1, 2**63, 2**64]
    hashes = [block.hash for block in base_chain.blocks] + [UNKNOWN_HASH]
    try:
        views_by_height = [_view(expected.block_by_height(height)) for height in heights]
        views_by_hash = [_view(expected.block_by_hash(value)) for value in hashes]
    finally:
        expected.close()
    served = open_store(location, "serve")

    async def ask() -> tuple[list[bytes | None], list[bytes | None]]:
        try:
            by_height = [await served.block_json_by_height(height) for height in heights]
            by_hash = [await served.block_json_by_hash(value) for value in hashes]
            return by_height, by_hash
        finally:
            await served.close()

    by_height, by_hash = asyncio.run(ask())
    assert by_height == views_by_height
    assert by_hash == views_by_hash
    assert views_by_height.count(None) >= 4 and views_by_hash[-1] is None  # the misses were asked
    assert all(view is not None for view in views_by_hash[:-1])


def _view(block: StoredBlock | None) -> bytes | None:
    return None if block is None else block.view_json
