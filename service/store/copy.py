"""Copy one store into another, between any two backends (`nearrpc store copy SRC DST`).

The destination is written in ONE batch, so it holds the whole copy or, after any failure or a
kill, exactly what it held before. Rows are streamed from the source (bounded memory, whatever
the size) and written without repeating the spec validation their first store did (see
`ChainWriter.batch(validate=False)`; parsing and index checks still run). A destination that
holds another chain is refused before anything is written. At the end the rows read are
checked against the source's own counts, and the destination's counts against the source's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nearrpc.store.base import ChainReader, StoreError, StoreInfo, StoreNotFoundError, StoreOptions
from nearrpc.store.locations import StoreLocation, describe_location, open_store, same_store


@dataclass(frozen=True, slots=True)
class CopySummary:
    blocks: int
    epochs: int
    account_states: int
    configs: int
    source: StoreInfo
    destination: StoreInfo
    access_keys: int = 0
    contract_codes: int = 0
    contract_data: int = 0
    chunks: int = 0
    transactions: int = 0
    receipts: int = 0
    validators: int = 0


# Called with the number of rows written since the last call (for a progress bar).
Advance = Callable[[int], None]
_REPORT_EVERY = 1000


def _destination_chain(location: StoreLocation, options: StoreOptions | None) -> str | None:
    """The chain id the destination holds (None: no store there, or an empty one)."""
    try:
        reader = open_store(location, "read", options)
    except StoreNotFoundError:
        return None
    try:
        return reader.chain_id()
    finally:
        reader.close()


def _counts(info: StoreInfo) -> dict[str, int]:
    """The rows of each copied table a store says it holds."""
    return {
        "blocks": info.block_count, "epochs": info.epoch_count, "account_states": info.account_state_count,
        "access_keys": info.access_key_count, "contract_codes": info.contract_code_count,
        "contract_data": info.contract_data_count, "chunks": info.chunk_count,
        "transactions": info.transaction_count, "receipts": info.receipt_count,
        "validators": info.validators_count,
    }  # fmt: skip


def total_rows(info: StoreInfo) -> int:
    return sum(_counts(info).values())


def copy_store(
    source: StoreLocation,
    destination: StoreLocation,
    *,
    options: StoreOptions | None = None,
    advance: Advance | None = None,
) -> CopySummary:
    if same_store(source, destination):
        raise StoreError(f"{describe_location(destination)} is the source itself: copy into another store")
    reader: ChainReader = open_store(source, "read", options)
    try:
        source_info = reader.info()
        genesis = reader.genesis_config_json()
        client = reader.client_config_json()
        theirs = _destination_chain(destination, options)
        if theirs is not None and theirs != source_info.chain_id:
            raise StoreError(
                f"{describe_location(destination)} holds chain {theirs!r}, the source chain "
                f"{source_info.chain_id!r}: copy into an empty store"
            )
        counts = dict.fromkeys(_counts(source_info), 0)
        pending = 0

        def written(table: str) -> None:
            nonlocal pending
            counts[table] += 1
            pending += 1
            if advance is not None and pending >= _REPORT_EVERY:
                advance(pending)
                pending = 0

        with open_store(destination, "write", options) as writer:
            with writer.batch(validate=False) as batch:
                if genesis is not None:
                    batch.put_genesis_config(genesis)
                if client is not None:
                    batch.put_client_config(client)
                for epoch in reader.iter_epochs():
                    batch.put_epoch(epoch)
                    written("epochs")
                for block, canonical in reader.iter_blocks():
                    batch.put_block(block, canonical=canonical)
                    written("blocks")
                for account_id, height, view in reader.iter_account_states():
                    batch.put_account_state(account_id, height, view)
                    written("account_states")
                for account_id, public_key, height, view in reader.iter_access_keys():
                    batch.put_access_key(account_id, public_key, height, view)
                    written("access_keys")
                for code_hash, code in reader.iter_contract_codes():
                    batch.put_contract_code(code_hash, code)
                    written("contract_codes")
                for account_id, storage_key, height, value in reader.iter_contract_data():
                    batch.put_contract_data(account_id, storage_key, height, value)
                    written("contract_data")
                for chunk in reader.iter_chunks():
                    batch.put_chunk(chunk)
                    written("chunks")
                for transaction in reader.iter_transactions():
                    batch.put_transaction(transaction)
                    written("transactions")
                for receipt in reader.iter_receipts():
                    batch.put_receipt(receipt)
                    written("receipts")
                for validators in reader.iter_validators():
                    batch.put_validators(validators)
                    written("validators")
                genesis_hash = reader.genesis_hash()
                if genesis_hash is not None:
                    batch.put_genesis_hash(genesis_hash)
                for key in reader.iter_fetched():  # a fork's marks (not counted: no counter keeps them)
                    batch.put_fetched(key)
                for key, answer in reader.iter_kept_answers():  # a fork's kept upstream answers
                    batch.put_kept_answer(key, answer)
                _check_read_all(counts, source_info)
            destination_info = writer.reader().info()
        if advance is not None and pending:
            advance(pending)
    finally:
        reader.close()
    _check_destination(destination_info, source_info, destination, was_empty=theirs is None)
    configs = (genesis is not None) + (client is not None)
    return CopySummary(counts["blocks"], counts["epochs"], counts["account_states"], configs, source_info,
                       destination_info, counts["access_keys"], counts["contract_codes"], counts["contract_data"],
                       counts["chunks"], counts["transactions"], counts["receipts"], counts["validators"])


def _check_read_all(counts: dict[str, int], info: StoreInfo) -> None:
    """Inside the batch, before it commits: the source gave as many rows as it says it holds."""
    expected = _counts(info)
    if counts != expected:
        raise StoreError(
            f"the source changed or miscounts while it was read: read {counts}, its counts say {expected}; "
            "nothing was written"
        )


def _check_destination(after: StoreInfo, source: StoreInfo, destination: StoreLocation, *, was_empty: bool) -> None:
    """An empty destination now holds exactly the source's rows; one that held part of the same
    chain holds at least as many of each."""
    ours = tuple(_counts(after).values())
    theirs = tuple(_counts(source).values())
    if was_empty:
        expected = ours == theirs and (after.earliest_height, after.latest_height) == (
            source.earliest_height,
            source.latest_height,
        )
    else:
        expected = all(mine >= its for mine, its in zip(ours, theirs, strict=True))
    if after.chain_id != source.chain_id or not expected:
        raise StoreError(
            f"{describe_location(destination)} does not hold the copy as expected after it committed "
            f"(another writer at work?): source {source}, destination {after}"
        )
