"""The fork answers chunks, transactions, receipts, validators and the rows of one height from
its store (an upstream where nothing listens is never asked for what the store holds), the same
records the store's own serving reader gives. A miss asks the upstream: one that does not
answer is the fork's failure (INTERNAL_ERROR to a client), never the store's "not found"."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from nearrpc.fork.reader import ForkReader
from nearrpc.fork.upstream import Upstream, UpstreamError, UpstreamSettings
from nearrpc.fork.writer import ForkWriter
from nearrpc.ingest.rpc_client import RetryPolicy
from nearrpc.sample import sample_chain, write_chain
from nearrpc.store import open_store
from tests.store.chain_records import made_up_hash, sample_records
from tests.support.live_server import free_port


def test_the_fork_reads_the_new_records_from_its_store(tmp_path: Path) -> None:
    chain = sample_chain()
    records = sample_records(chain)
    path = tmp_path / "fork.db"
    with open_store(path, "write") as writer:
        write_chain(writer, chain)
        with writer.batch() as batch:
            records.put(batch)
    settings = UpstreamSettings(f"http://127.0.0.1:{free_port()}", 1, 0, RetryPolicy(retries=0, backoff=0.01,
                                                                                        timeout=1.0))  # fmt: skip
    transaction, receipt = records.transactions[0], records.receipts[0]
    busiest = max(row.height for row in chain.access_keys)  # the last height that wrote keys

    async def read() -> None:
        fork = ForkReader(open_store(path, "serve"), Upstream(settings), ForkWriter(path, None), fork_height=None,
                          miss_timeout=1.0)  # fmt: skip
        try:
            assert await fork.chunk(records.chunks[0].chunk_hash) == records.chunks[0]
            assert await fork.transaction(transaction.tx_hash, transaction.signer_id) == transaction
            assert await fork.receipt(receipt.receipt_id) == receipt
            assert await fork.validators(records.validators[0].epoch_id) == records.validators[0]
            assert await fork.transactions_at(transaction.height) == await fork.local.transactions_at(
                transaction.height
            )
            assert receipt in await fork.receipts_executed_at(receipt.height)
            assert await fork.account_changes(busiest) == await fork.local.account_changes(busiest)
            assert await fork.access_key_changes(busiest) == await fork.local.access_key_changes(busiest) != []
            assert await fork.contract_data_changes(busiest) == await fork.local.contract_data_changes(busiest)
            with pytest.raises(UpstreamError):
                await fork.chunk(made_up_hash("never stored"))
        finally:
            await fork.close()

    asyncio.run(read())
