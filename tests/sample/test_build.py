"""Building the sample store: determinism and atomic replacement."""

from __future__ import annotations

from pathlib import Path

import pytest

from nearrpc.sample import SampleChain, build_sample_store, sample_chain
from nearrpc.sample import build as build_module
from nearrpc.sample.generator import generate_sample_chain
from nearrpc.store import open_store
from tests.store.sqlite_files import dump
from tests.support.sample_facts import SampleFacts


def test_generation_is_deterministic() -> None:
    assert generate_sample_chain() == generate_sample_chain() == sample_chain()


def test_build_twice_gives_identical_stores(tmp_path: Path, built_store: Path) -> None:
    again = tmp_path / "again.db"
    build_sample_store(again)
    assert dump(again) == dump(built_store)
    assert again.read_bytes() == built_store.read_bytes()


def test_built_store_is_complete_and_self_contained(built_store: Path, facts: SampleFacts) -> None:
    # Rollback journal (header bytes 18-19 are 1), no side files: opens from read-only media.
    assert built_store.read_bytes()[18:20] == b"\x01\x01"
    assert sorted(p.name for p in built_store.parent.iterdir()) == [built_store.name]
    reader = open_store(built_store, "read")
    try:
        head = reader.head()
        assert head is not None and head.height == facts.head_height and head.hash == facts.head_hash
        genesis = reader.genesis_block()
        assert genesis is not None and genesis.hash == facts.genesis_hash
        assert reader.chain_id() == facts.chain_id
        assert reader.info().epoch_count == len(facts.epochs)
    finally:
        reader.close()


def test_build_replaces_an_existing_file(tmp_path: Path, built_store: Path) -> None:
    target = tmp_path / "sample.db"
    target.write_bytes(b"old")
    build_sample_store(target)
    assert target.read_bytes() == built_store.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sample.db"]


def test_failed_build_keeps_the_old_file_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "sample.db"
    target.write_bytes(b"previous store")

    def explode(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(build_module, "write_chain", explode)
    with pytest.raises(OSError, match="disk full"):
        build_sample_store(target)
    assert target.read_bytes() == b"previous store"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sample.db"]


def test_built_store_serves_every_chunk_transaction_receipt_and_validators_record(
    built_store: Path, chain: SampleChain, facts: SampleFacts
) -> None:
    reader = open_store(built_store, "read")
    try:
        for chunk in chain.chunks:
            assert reader.chunk(chunk.chunk_hash) == chunk
        for tx in chain.transactions:
            assert reader.transaction(tx.tx_hash, tx.signer_id) == tx
        for receipt in chain.receipts:
            assert reader.receipt(receipt.receipt_id) == receipt
        for (epoch_id, height), record in zip(facts.validator_epochs, chain.validators, strict=True):
            assert reader.validators(epoch_id) == record and record.height == height
        for height in facts.block_heights:
            at = {t.tx_hash for t in chain.transactions if t.height == height}
            assert {t.tx_hash for t in reader.transactions_at(height)} == at
            executed = {r.receipt_id for r in chain.receipts if r.height == height}
            assert {r.receipt_id for r in reader.receipts_executed_at(height)} == executed
        assert reader.chunk(facts.genesis_hash) is None
    finally:
        reader.close()
