"""The whole sample chain on both backends: its real chunks, transactions, receipts and
validators records are taken by the puts (index fields checked against the JSON), read back by
hash, by height and by epoch, pass the full check, and survive a copy to the other backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from nearrpc.sample import SampleChain, write_chain
from nearrpc.store import ChainReader, open_store
from nearrpc.store.copy import copy_store
from tests.support.postgres import PostgresServer


def _reads_back(reader: ChainReader, chain: SampleChain) -> None:
    info = reader.info()
    assert (info.chunk_count, info.transaction_count, info.receipt_count, info.validators_count) == (
        len(chain.chunks),
        len(chain.transactions),
        len(chain.receipts),
        len(chain.validators),
    )
    for chunk in chain.chunks[::7]:
        assert reader.chunk(chunk.chunk_hash) == chunk
    for tx in chain.transactions:
        assert reader.transaction(tx.tx_hash, tx.signer_id) == tx
    for receipt in chain.receipts[::5]:
        assert reader.receipt(receipt.receipt_id) == receipt
    for record in chain.validators:
        assert reader.validators(record.epoch_id) == record
    busiest = max({t.height for t in chain.transactions}, key=lambda h: sum(t.height == h for t in chain.transactions))
    expected = sorted((t for t in chain.transactions if t.height == busiest), key=lambda t: (t.shard_id, t.tx_hash))
    assert reader.transactions_at(busiest) == expected
    executed = sorted((r for r in chain.receipts if r.height == busiest), key=lambda r: (r.shard_id, r.receipt_id))
    assert reader.receipts_executed_at(busiest) == executed
    assert reader.check(thorough=True).ok


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_whole_sample_chain_is_stored_and_read_back(
    backend: str, chain: SampleChain, tmp_path: Path, postgres: PostgresServer
) -> None:
    location: str | Path = tmp_path / "sample.db" if backend == "sqlite" else postgres.create_database("sample")
    with open_store(location, "write") as writer:
        write_chain(writer, chain)
    reader = open_store(location, "read")
    try:
        _reads_back(reader, chain)
    finally:
        reader.close()
    # and copied to the other backend, every record kept
    target: str | Path = postgres.create_database("copied") if backend == "sqlite" else tmp_path / "copied.db"
    copy_store(location, target)
    copied = open_store(target, "read")
    try:
        _reads_back(copied, chain)
    finally:
        copied.close()
