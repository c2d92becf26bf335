"""`nearrpc import rpc` records the execution of its heights (issue 30 item 3): every new chunk,
every transaction in them with its outcome and receipts, and the validators of each epoch met;
a server over the recording answers them with the bytes the node answered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from nearrpc.store import open_store
from tests.ingest.conftest import call, result
from tests.support.cli import nearrpc
from tests.support.live_server import LiveServer, running_server
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.live

FROM, TO = 20, 60  # crosses the epoch boundaries at 25 and 52


def _new_chunks(url: str) -> list[tuple[int, str, int]]:
    """(height, chunk hash, shard id) of every chunk new in the range, read off the node."""
    found = []
    for height in range(FROM, TO + 1):
        if height in sample_facts().skipped_heights:
            continue
        for chunk in result(url, "block", {"block_id": height})["chunks"]:
            if chunk["height_included"] == height:
                found.append((height, chunk["chunk_hash"], chunk["shard_id"]))
    return found


def test_a_recording_holds_and_serves_the_chunks_transactions_and_validators_of_its_heights(
    server_a: LiveServer, tmp_path: Path
) -> None:
    store = tmp_path / "recorded.sqlite"
    done = nearrpc("import", "rpc", "--url", server_a.url, "--from-height", str(FROM), "--to-height", str(TO),
                   "--accounts", "alice.localnet", "--store", store)  # fmt: skip
    assert done.returncode == 0, done.stderr
    chunks = _new_chunks(server_a.url)
    transactions = [
        (tx["hash"], tx["signer_id"], height)
        for height, chunk_hash, _ in chunks
        for tx in result(server_a.url, "chunk", {"chunk_id": chunk_hash})["transactions"]
    ]
    assert transactions, "the range holds no transactions to record"
    assert f"  chunks: {len(chunks)}; transactions: {len(transactions)} " in done.stdout, done.stdout
    reader = open_store(store, "read")
    try:
        assert {chunk.chunk_hash for chunk in reader.iter_chunks()} == {h for _, h, _ in chunks}
        assert {(tx.tx_hash, tx.signer_id, tx.height) for tx in reader.iter_transactions()} == set(transactions)
        receipts = {receipt.receipt_id for receipt in reader.iter_receipts()}
        epochs = {record.epoch_id for record in reader.iter_validators()}
    finally:
        reader.close()
    assert epochs == {e.epoch_id for e in sample_facts().epochs if e.first_height <= TO and e.last_height >= FROM}
    requests: list[tuple[str, Any]] = []
    for height, chunk_hash, shard_id in chunks:
        requests += [("chunk", {"chunk_id": chunk_hash}), ("chunk", {"block_id": height, "shard_id": shard_id})]
    # a status is measured by the final block: the recording's is below the node's, so only the
    # transactions of blocks the recording holds final answer FINAL on both
    final_height = result(server_a.url, "block", {"block_id": TO})["header"]["last_final_block"]
    recorded_final = result(server_a.url, "block", {"block_id": final_height})["header"]["height"]
    for tx_hash, signer, height in transactions:
        if height <= recorded_final:  # the sample executes a transaction and its receipts in one block
            status = {"tx_hash": tx_hash, "sender_account_id": signer}
            requests += [("tx", [tx_hash, signer]), ("EXPERIMENTAL_tx_status", status)]
    requests += [("EXPERIMENTAL_receipt", {"receipt_id": receipt_id}) for receipt_id in sorted(receipts)]
    ended = [e.epoch_id for e in sample_facts().epochs if FROM <= e.last_height < TO]
    requests += [("validators", {"epoch_id": epoch_id}) for epoch_id in ended]
    assert receipts and ended
    with running_server(store, tmp_path / "b.log") as server_b:
        for method, params in requests:
            expected = call(server_a.url, method, params)
            assert orjson.loads(expected[1]).get("result") is not None, (method, params, expected)
            assert call(server_b.url, method, params) == expected, (method, params)


def test_a_rerun_of_the_recording_changes_nothing_of_it(server_a: LiveServer, tmp_path: Path) -> None:
    store = tmp_path / "recorded.sqlite"
    args = ("import", "rpc", "--url", server_a.url, "--from-height", str(FROM), "--to-height", str(FROM + 8),
                   "--accounts", "alice.localnet", "--store", store)  # fmt: skip
    assert nearrpc(*args).returncode == 0

    def held() -> tuple[list[Any], ...]:
        reader = open_store(store, "read")
        try:
            return (sorted(map(repr, reader.iter_chunks())), sorted(map(repr, reader.iter_transactions())),
                    sorted(map(repr, reader.iter_receipts())), sorted(map(repr, reader.iter_validators())))  # fmt: skip
        finally:
            reader.close()

    first = held()
    assert nearrpc(*args).returncode == 0
    assert held() == first
