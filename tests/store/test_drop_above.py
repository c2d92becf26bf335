"""`WriteBatch.drop_above` (the sandbox's revert), on both backends: every canonical block and
every row written above the height is gone, the rest is untouched, the named codes and epochs
go too, the stored counts still agree with the tables, and readers see another store."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

from nearrpc.sample import SampleChain, write_chain
from nearrpc.store import ANOTHER_STORE, ChainReader, StoreLocation, open_store
from tests.support.postgres import PostgresServer

CUT = 60  # the sample chain's head is 110; its third epoch starts near 50


def dump(reader: ChainReader) -> dict[str, Any]:
    """Every row of the store, each table sorted (a copy needs no order; a comparison does)."""
    return {
        "blocks": sorted((block.height, block.hash, canonical) for block, canonical in reader.iter_blocks()),
        "epochs": sorted(epoch.epoch_id for epoch in reader.iter_epochs()),
        "accounts": sorted(reader.iter_account_states(), key=repr),
        "keys": sorted(reader.iter_access_keys(), key=repr),
        "codes": sorted(code_hash for code_hash, _ in reader.iter_contract_codes()),
        "data": sorted(reader.iter_contract_data(), key=repr),
        "chunks": sorted((c.chunk_hash, c.height) for c in reader.iter_chunks()),
        "transactions": sorted((t.tx_hash, t.height) for t in reader.iter_transactions()),
        "receipts": sorted((r.receipt_id, r.height) for r in reader.iter_receipts()),
        "validators": sorted((v.epoch_id, v.height) for v in reader.iter_validators()),
    }


def _expected_after(before: dict[str, Any], code: str, epoch: str) -> dict[str, Any]:
    return {
        "blocks": [row for row in before["blocks"] if row[0] <= CUT],
        "epochs": [e for e in before["epochs"] if e != epoch],
        "accounts": [row for row in before["accounts"] if row[1] <= CUT],
        "keys": [row for row in before["keys"] if row[2] <= CUT],
        "codes": [c for c in before["codes"] if c != code],
        "data": [row for row in before["data"] if row[2] <= CUT],
        **{name: [row for row in before[name] if row[1] <= CUT] for name in ("chunks", "transactions", "receipts")},
        "validators": [row for row in before["validators"] if row[1] <= CUT],
    }


def _drop_and_check(location: StoreLocation) -> None:
    reader = open_store(location, "read")
    try:
        before = dump(reader)
        version = reader.version()
    finally:
        reader.close()
    code, epoch = before["codes"][0], before["epochs"][-1]
    with open_store(location, "write") as writer:
        with writer.batch() as batch:
            removed = batch.drop_above(CUT, code_hashes=[code, "unknown"], epoch_ids=[epoch])
        after = dump(writer.reader())
        assert after == _expected_after(before, code, epoch)
        every = sum(len(rows) for rows in before.values())
        assert removed == every - sum(len(rows) for rows in after.values()) > 0
        check = writer.reader().check(thorough=True)
        assert check.ok, check.problems
        assert writer.reader().head() is not None and writer.reader().head().height == CUT  # type: ignore[union-attr]
        changed = writer.reader().version().changed_since(version)
        assert ANOTHER_STORE in changed
        assert writer.reader().info().block_count == len(after["blocks"])

    async def served() -> int | None:
        serving = open_store(location, "serve")
        try:
            head = await serving.head()
            return None if head is None else head.height
        finally:
            await serving.close()

    assert asyncio.run(served()) == CUT


def test_drop_above_on_sqlite(sample_store: Path, tmp_path: Path) -> None:
    path = tmp_path / "copy.sqlite"
    shutil.copyfile(sample_store, path)
    _drop_and_check(path)


def test_drop_above_on_postgresql(postgres: PostgresServer, chain: SampleChain) -> None:
    url = postgres.create_database("drop")
    with open_store(url, "write") as writer:
        write_chain(writer, chain)
    _drop_and_check(url)


def test_a_second_drop_counts_again(sample_store: Path, tmp_path: Path) -> None:
    """Each batch that takes rows back is another store to a reader, even one that removes
    nothing (a revert to the head)."""
    path = tmp_path / "copy.sqlite"
    shutil.copyfile(sample_store, path)
    with open_store(path, "write") as writer:
        first = writer.reader().version()
        with writer.batch() as batch:
            assert batch.drop_above(10_000) == 0
        second = writer.reader().version()
        assert second.rewrites == first.rewrites + 1
        assert ANOTHER_STORE in second.changed_since(first)
