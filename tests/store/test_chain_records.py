"""Schema 5 on both backends: chunks, transactions and receipts by hash and by height, an epoch's
validators (replaced as the epoch goes on), the rows written at exactly one height, the same
answers through the serving readers, refusals of records whose index fields contradict their
JSON, and the change counters and row counts of each kind."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from nearrpc.sample import SampleChain
from nearrpc.spec import SchemaViolation
from nearrpc.store import ChainReader, StoreIntegrityError, StoreVersion, open_store
from nearrpc.store.base import access_key_order
from tests.store.chain_records import Records, made_up_hash, sample_records, validators_of

BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(params=BACKENDS)
def location(request: pytest.FixtureRequest) -> str | Path:
    """A private, writable copy of the sample store on each backend."""
    fixture = "store_copy" if request.param == "sqlite" else "pg_copy"
    found: str | Path = request.getfixturevalue(fixture)
    return found


@pytest.fixture
def records(chain: SampleChain) -> Records:
    return sample_records(chain)


@pytest.fixture
def written(location: str | Path, records: Records) -> Iterator[ChainReader]:
    """A reader of the store after the records were put in one batch."""
    with open_store(location, "write") as writer, writer.batch() as batch:
        records.put(batch)
    reader = open_store(location, "read")
    yield reader
    reader.close()


def test_each_record_reads_back_by_its_key(written: ChainReader, records: Records) -> None:
    for chunk in records.chunks:
        assert written.chunk(chunk.chunk_hash) == chunk
    for transaction in records.transactions:
        # a local store finds a transaction by hash alone, whatever signer is asked with
        assert written.transaction(transaction.tx_hash, transaction.signer_id) == transaction
        assert written.transaction(transaction.tx_hash, "someone.else") == transaction
    for receipt in records.receipts:
        assert written.receipt(receipt.receipt_id) == receipt
    assert any(receipt.outcome_json is None for receipt in records.receipts)  # an unknown outcome stays None
    for validators in records.validators:
        assert written.validators(validators.epoch_id) == validators
    unknown = made_up_hash("nothing")
    assert (written.chunk(unknown), written.transaction(unknown, "a.localnet"), written.receipt(unknown),
            written.validators(unknown)) == (None, None, None, None)  # fmt: skip


def test_a_heights_transactions_and_receipts_in_shard_order(written: ChainReader, records: Records) -> None:
    for height in {t.height for t in records.transactions} | {r.height for r in records.receipts}:
        transactions = sorted((t for t in records.transactions if t.height == height),
                              key=lambda t: (t.shard_id, t.tx_hash))  # fmt: skip
        receipts = sorted((r for r in records.receipts if r.height == height), key=lambda r: (r.shard_id, r.receipt_id))
        assert written.transactions_at(height) == transactions
        assert written.receipts_executed_at(height) == receipts
    assert len(written.transactions_at(5)) == 2 and len(written.receipts_executed_at(6)) == 2
    for nowhere in (4, 10**6, -1, 1 << 64):
        assert written.transactions_at(nowhere) == [] and written.receipts_executed_at(nowhere) == []


def test_the_rows_written_at_one_height(written: ChainReader, chain: SampleChain) -> None:
    """Exactly the rows of that height (not the latest state below it), by account, then key
    (access keys in nearcore's listing order)."""
    heights = {row.height for rows in (chain.account_states, chain.access_keys, chain.contract_data) for row in rows}
    assert len(heights) > 10
    for height in sorted(heights):
        assert written.account_changes(height) == sorted(
            (row.account_id, row.view_json) for row in chain.account_states if row.height == height
        )
        assert written.access_key_changes(height) == sorted(
            ((row.account_id, row.public_key, row.view_json) for row in chain.access_keys if row.height == height),
            key=lambda row: (row[0], access_key_order(row[1])),
        )
        assert written.contract_data_changes(height) == sorted(
            (row.account_id, row.key, row.value) for row in chain.contract_data if row.height == height
        )
    between = next(h for h in range(1, 200) if h not in heights)
    assert written.account_changes(between) == []  # not the state as of that height
    assert written.access_key_changes(between) == [] and written.contract_data_changes(between) == []
    keyed = max(heights, key=lambda h: sum(row.height == h for row in chain.access_keys))
    assert len(written.access_key_changes(keyed)) > 3


def test_the_serving_readers_answer_alike(written: ChainReader, location: str | Path, records: Records) -> None:
    async def serve() -> None:
        serving = open_store(location, "serve")
        try:
            for chunk in records.chunks:
                assert await serving.chunk(chunk.chunk_hash) == chunk
            for transaction in records.transactions:
                assert await serving.transaction(transaction.tx_hash, transaction.signer_id) == transaction
            for receipt in records.receipts:
                assert await serving.receipt(receipt.receipt_id) == receipt
            for validators in records.validators:
                assert await serving.validators(validators.epoch_id) == validators
            for height in (5, 6, 66, 10**6):
                assert await serving.transactions_at(height) == written.transactions_at(height)
                assert await serving.receipts_executed_at(height) == written.receipts_executed_at(height)
                assert await serving.account_changes(height) == written.account_changes(height)
                assert await serving.access_key_changes(height) == written.access_key_changes(height)
                assert await serving.contract_data_changes(height) == written.contract_data_changes(height)
        finally:
            await serving.close()

    asyncio.run(serve())


def _version(location: str | Path) -> StoreVersion:
    reader = open_store(location, "read")
    try:
        return reader.version()
    finally:
        reader.close()


def test_counts_and_change_counters_follow_each_kind(location: str | Path, records: Records) -> None:
    reader = open_store(location, "read")
    try:
        before_info, before = reader.info(), reader.version()
    finally:
        reader.close()
    for kind, put in (("chunks", "put_chunk"), ("transactions", "put_transaction"), ("receipts", "put_receipt"),
                      ("validators", "put_validators")):  # fmt: skip
        earlier = _version(location)
        with open_store(location, "write") as writer, writer.batch() as batch:
            for record in getattr(records, kind):
                getattr(batch, put)(record)
        assert _version(location).changed_since(earlier) == {kind}
    with open_store(location, "write") as writer, writer.batch() as batch:  # again: replacements, not new rows
        records.put(batch)
    reader = open_store(location, "read")
    try:
        info = reader.info()
        assert reader.check(thorough=True).ok
        assert reader.version().changed_since(before) == {"chunks", "transactions", "receipts", "validators"}
    finally:
        reader.close()
    assert (info.chunk_count, info.transaction_count, info.receipt_count, info.validators_count) == (
        before_info.chunk_count + len(records.chunks), before_info.transaction_count + len(records.transactions),
        before_info.receipt_count + len(records.receipts), before_info.validators_count + len(records.validators),
    )  # fmt: skip


def test_an_epochs_validators_are_replaced(written: ChainReader, location: str | Path, records: Records) -> None:
    first = records.validators[0]
    start = orjson.loads(first.view_json)["epoch_start_height"]
    later = validators_of(first.epoch_id, start, first.height + 2, stake="2000")
    count = written.info().validators_count
    with open_store(location, "write") as writer, writer.batch() as batch:
        batch.put_validators(later)
    reader = open_store(location, "read")
    try:
        assert reader.validators(first.epoch_id) == later
        assert reader.info().validators_count == count
    finally:
        reader.close()


def _refusals(records: Records) -> list[tuple[str, object, str]]:
    chunk, transaction, receipt, validators = (
        records.chunks[0], records.transactions[0], records.receipts[0], records.validators[0],
    )  # fmt: skip
    other = made_up_hash("other")
    return [
        ("put_chunk", dataclasses.replace(chunk, chunk_hash=other), "chunk_hash=.* but header.chunk_hash="),
        ("put_chunk", dataclasses.replace(chunk, height=chunk.height + 1), "height=.* but header.height_included="),
        ("put_chunk", dataclasses.replace(chunk, shard_id=chunk.shard_id + 1), "shard_id=.* but header.shard_id="),
        ("put_chunk", dataclasses.replace(chunk, view_json=b"[1]"), "expected a JSON object, got list"),
        ("put_chunk", dataclasses.replace(chunk, block_hash="nope"), "'nope' is not a block hash"),
        ("put_chunk", dataclasses.replace(chunk, view_json=b'{"header": {}}'), "the JSON has no header.chunk_hash"),
        ("put_transaction", dataclasses.replace(transaction, tx_hash=other), "tx_hash=.* but transaction.hash="),
        ("put_transaction", dataclasses.replace(transaction, signer_id="carol.localnet"),
         "signer_id=.* but transaction.signer_id="),
        ("put_transaction", dataclasses.replace(transaction, block_hash=other),
         "block_hash=.* but transaction_outcome.block_hash="),
        ("put_transaction", dataclasses.replace(transaction, signer_id="Not Valid"), "not a valid account id"),
        ("put_transaction", dataclasses.replace(transaction, view_json=b'"x"'), "expected a JSON object, got str"),
        ("put_transaction", dataclasses.replace(transaction, shard_id=-1), "shard id -1 is out of range"),
        ("put_receipt", dataclasses.replace(receipt, receipt_id=other), "receipt_id=.* but receipt_id="),
        ("put_receipt", dataclasses.replace(receipt, block_hash=other), "outcome: block_hash=.* but block_hash="),
        ("put_receipt", dataclasses.replace(receipt, outcome_json=b"[]"), "expected a JSON object, got list"),
        ("put_receipt", dataclasses.replace(receipt, height=-3), "height -3 is out of range"),
        ("put_validators", dataclasses.replace(validators, height=-1), "height -1 is out of range"),
        ("put_validators", dataclasses.replace(validators, epoch_id="x"), "'x' is not a epoch id"),
        ("put_validators", validators_of(validators.epoch_id, validators.height + 1, validators.height),
         "but epoch_start_height="),
        ("put_validators", dataclasses.replace(validators, view_json=b"{"), "not valid JSON"),
    ]  # fmt: skip


def test_records_that_contradict_their_json_are_refused(location: str | Path, records: Records) -> None:
    """Index fields against the JSON, ids and ranges: checked in a batch without spec validation too."""
    for put, record, why in _refusals(records):
        with open_store(location, "write") as writer:
            with pytest.raises(StoreIntegrityError, match=why), writer.batch(validate=False) as batch:
                getattr(batch, put)(record)
    reader = open_store(location, "read")
    try:
        info = reader.info()
        assert (info.chunk_count, info.transaction_count, info.receipt_count, info.validators_count) == (0, 0, 0, 0)
    finally:
        reader.close()


def _without(view_json: bytes, member: str) -> bytes:
    view = orjson.loads(view_json)
    del view[member]
    return orjson.dumps(view)


def test_records_the_spec_refuses_are_refused(location: str | Path, records: Records) -> None:
    """Each record is validated against upstream 1.2.13's component for its answer (a transaction
    also as the form with receipts EXPERIMENTAL_tx_status gives); a batch without validation
    (`store copy`, of what its first store validated) takes them."""
    chunk, transaction, receipt, validators = (
        records.chunks[0], records.transactions[0], records.receipts[0], records.validators[0],
    )  # fmt: skip
    assert receipt.outcome_json is not None
    refused = [
        ("put_chunk", dataclasses.replace(chunk, view_json=_without(chunk.view_json, "author")),
         "RpcChunkResponse at .*'author' is a required property"),
        ("put_transaction", dataclasses.replace(transaction, view_json=_without(transaction.view_json, "receipts")),
         "FinalExecutionOutcomeWithReceiptView at .*'receipts' is a required property"),
        ("put_transaction", dataclasses.replace(
            transaction, view_json=_without(transaction.view_json, "final_execution_status")),
         "RpcTransactionResponse at .*'final_execution_status' is a required property"),
        ("put_receipt", dataclasses.replace(receipt, view_json=_without(receipt.view_json, "predecessor_id")),
         "RpcReceiptResponse at .*'predecessor_id' is a required property"),
        ("put_receipt", dataclasses.replace(receipt, outcome_json=_without(receipt.outcome_json, "proof")),
         "ExecutionOutcomeWithIdView at .*'proof' is a required property"),
        ("put_validators", dataclasses.replace(validators, view_json=_without(validators.view_json, "next_validators")),
         "RpcValidatorResponse at .*'next_validators' is a required property"),
    ]  # fmt: skip
    for put, record, why in refused:
        with open_store(location, "write") as writer:
            with pytest.raises(SchemaViolation, match=why), writer.batch() as batch:
                getattr(batch, put)(record)
    with open_store(location, "write") as writer, writer.batch(validate=False) as batch:
        for put, record, _ in refused:
            getattr(batch, put)(record)
    reader = open_store(location, "read")
    try:
        assert reader.chunk(chunk.chunk_hash) == refused[0][1]
    finally:
        reader.close()
