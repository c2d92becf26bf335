"""Schema 5's tables in `nearrpc store copy` (SQLite -> PostgreSQL -> SQLite, every row) and in
`nearrpc store check` (a record whose block is not stored, or stored at another height, and a
record whose index fields contradict its JSON, on both backends, in the check's own voice)."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from nearrpc.sample import SampleChain
from nearrpc.store import open_store
from nearrpc.store.copy import copy_store
from tests.store.chain_records import Records, made_up_hash, sample_records
from tests.store.sqlite_files import contents, without_counters
from tests.support.cli import nearrpc
from tests.support.postgres import PostgresServer, dump

_NEW_TABLES = ("chunks", "transactions", "receipts", "validators")


def test_copy_both_ways_keeps_the_new_tables(
    postgres: PostgresServer, filled_store_file: Path, chain: SampleChain, tmp_path: Path
) -> None:
    source = tmp_path / "source.sqlite"
    shutil.copyfile(filled_store_file, source)
    records = sample_records(chain)
    with open_store(source, "write") as writer, writer.batch() as batch:
        records.put(batch)
    url = postgres.create_database()
    there = copy_store(source, url)
    assert (there.chunks, there.transactions, there.receipts, there.validators) == (
        len(records.chunks), len(records.transactions), len(records.receipts), len(records.validators)
    )  # fmt: skip
    assert there.destination == there.source
    back = tmp_path / "back.sqlite"
    done = nearrpc("store", "copy", url, back)
    assert done.returncode == 0, done.stderr
    assert (f"{len(records.chunks)} chunks, {len(records.transactions)} transactions, {len(records.receipts)} "
            f"receipts, {len(records.validators)} epoch validator records") in done.stdout  # fmt: skip
    assert all(contents(source)[table] for table in _NEW_TABLES)
    assert contents(back) == contents(source)
    assert without_counters(dump(url)) == contents(source)
    reader = open_store(back, "read")
    try:
        assert reader.receipt(records.receipts[1].receipt_id) == records.receipts[1]  # no outcome, still none
        assert reader.check(thorough=True).ok
    finally:
        reader.close()


def _plant(store: str | Path, statements: list[str]) -> None:
    """Damage the rows behind the store's back (a writer never lets these in)."""
    if isinstance(store, Path):
        with sqlite3.connect(store) as conn:
            for statement in statements:
                conn.execute(statement)
    else:
        with psycopg.connect(store, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)


@pytest.fixture(params=["sqlite", "postgresql"])
def with_records(request: pytest.FixtureRequest, chain: SampleChain) -> tuple[str | Path, Records]:
    store: str | Path = request.getfixturevalue("store_copy" if request.param == "sqlite" else "pg_copy")
    records = sample_records(chain)
    with open_store(store, "write") as writer, writer.batch() as batch:
        records.put(batch)
    return store, records


def test_a_sound_store_with_records_passes(with_records: tuple[str | Path, Records]) -> None:
    store, records = with_records
    done = nearrpc("store", "check", "--store", store)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert f"{len(records.chunks)} chunks, {len(records.transactions)} transactions" in done.stdout


Plant = Callable[[Records], tuple[list[str], str]]


def _orphan_chunk(records: Records) -> tuple[list[str], str]:
    chunk = records.chunks[0]
    missing = made_up_hash("a block never stored")
    return ([f"UPDATE chunks SET block_hash = '{missing}' WHERE chunk_hash = '{chunk.chunk_hash}'"],
            f"chunk {chunk.chunk_hash} at height {chunk.height} names block {missing}, which is not "
            "stored")  # fmt: skip


def _transaction_at_another_height(records: Records) -> tuple[list[str], str]:
    transaction = records.transactions[0]
    return ([f"UPDATE transactions SET height = height + 1 WHERE tx_hash = '{transaction.tx_hash}'"],
            f"transaction {transaction.tx_hash} at height {transaction.height + 1} names block "
            f"{transaction.block_hash}, which is stored at height {transaction.height}")  # fmt: skip


def _receipt_of_a_missing_block(records: Records) -> tuple[list[str], str]:
    receipt = records.receipts[1]  # the one without an outcome: nothing else names its block
    assert receipt.outcome_json is None
    missing = made_up_hash("a block never stored")
    return ([f"UPDATE receipts SET block_hash = '{missing}' WHERE receipt_id = '{receipt.receipt_id}'"],
            f"receipt {receipt.receipt_id} at height {receipt.height} names block {missing}, which is not "
            "stored")  # fmt: skip


def _signer_against_its_json(records: Records) -> tuple[list[str], str]:
    transaction = records.transactions[0]
    return ([f"UPDATE transactions SET signer_id = 'carol.localnet' WHERE tx_hash = '{transaction.tx_hash}'"],
            f"stored transaction {transaction.tx_hash}: signer_id='carol.localnet' but "
            f"transaction.signer_id='{transaction.signer_id}'")  # fmt: skip


def _shard_against_its_json(records: Records) -> tuple[list[str], str]:
    chunk = records.chunks[1]
    return ([f"UPDATE chunks SET shard_id = 7 WHERE chunk_hash = '{chunk.chunk_hash}'"],
            f"stored chunk {chunk.chunk_hash}: shard_id=7 but header.shard_id={chunk.shard_id}")  # fmt: skip


@pytest.mark.parametrize(
    "plant",
    [_orphan_chunk, _transaction_at_another_height, _receipt_of_a_missing_block, _signer_against_its_json,
     _shard_against_its_json],
)  # fmt: skip
def test_the_check_finds_a_planted_inconsistency(with_records: tuple[str | Path, Records], plant: Plant) -> None:
    store, records = with_records
    statements, problem = plant(records)
    _plant(store, statements)
    reader = open_store(store, "read")
    try:
        assert reader.check(thorough=True).problems == (problem,)
        assert reader.check(thorough=False).ok  # the quick check reads pages, not records
    finally:
        reader.close()
    done = nearrpc("store", "check", "--store", store)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"nearrpc store check: {problem}"]


def test_postgresql_writes_big_records_in_chunks_bounded_by_bytes(
    pg_copy: str, chain: SampleChain, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A busy chunk's JSON runs to megabytes: staged chunks, transactions and receipts are also
    written out by bytes (here a bound of 1 KB: every row or two), and land all the same."""
    from nearrpc.store import postgres as backend

    monkeypatch.setattr(backend, "_CHUNK_BYTES", 1024)
    flushed: dict[str, list[int]] = {table: [] for table in ("chunks", "transactions", "receipts")}
    original = backend.PostgresWriteBatch._flush

    def counting(batch: backend.PostgresWriteBatch, staged: Any) -> None:
        if staged.table in flushed and staged.rows:
            flushed[staged.table].append(len(staged.rows))
        original(batch, staged)

    monkeypatch.setattr(backend.PostgresWriteBatch, "_flush", counting)
    records = sample_records(chain)
    with open_store(pg_copy, "write") as writer, writer.batch() as batch:
        records.put(batch)
    assert {table: sum(counts) for table, counts in flushed.items()} == {
        "chunks": len(records.chunks), "transactions": len(records.transactions), "receipts": len(records.receipts),
    }  # fmt: skip
    assert all(max(counts) <= 2 for counts in flushed.values()), flushed
    reader = open_store(pg_copy, "read")
    try:
        assert sorted(reader.iter_chunks(), key=repr) == sorted(records.chunks, key=repr)
        assert reader.info().receipt_count == len(records.receipts)
    finally:
        reader.close()
