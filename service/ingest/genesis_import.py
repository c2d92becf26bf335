"""`nearrpc import genesis`: nearcore's genesis.json into a store, in one batch.

The config becomes the `genesis_config` result (projected onto GenesisConfig), every Account
record an account state at the genesis height, every AccessKey record an access key state
there, every Contract record its code (by hash), every Data record one storage key of the
account's contract state there; other record kinds (receipts) have no place in this interface
and are counted. No block is
written: the genesis block's hash depends on the state root, which only a node computes.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import based58

from nearrpc.ingest import jsonio
from nearrpc.ingest.config_files import read_client_config
from nearrpc.ingest.errors import ImportRequestError, IngestError, located
from nearrpc.ingest.genesis_config import (
    ProjectionError,
    RecordError,
    access_key_record,
    account_state,
    contract_record,
    data_record,
    project_genesis_config,
    record_kind,
)
from nearrpc.ingest.genesis_file import read_genesis, read_records
from nearrpc.ingest.progress import Progress
from nearrpc.spec import SchemaViolation
from nearrpc.store import StoreError, StoreLocation, StoreOptions, WriteBatch, describe_location, open_store

_STORE_REFUSALS = (SchemaViolation, StoreError, ValueError)


@dataclass
class GenesisSummary:
    chain_id: str = ""
    genesis_height: int = 0
    protocol_version: int = 0
    records: int = 0
    accounts: int = 0
    access_keys: int = 0
    contracts: int = 0
    contract_data: int = 0  # Data records: storage keys of contracts
    skipped: Counter[str] = field(default_factory=Counter)  # record kind -> count
    dropped_keys: tuple[str, ...] = ()
    defaulted_keys: tuple[str, ...] = ()
    client_config: bool = False  # whether the store holds a client config afterwards
    seconds: float = 0.0


class _RecordWriter:
    """Writes Account, AccessKey, Contract and Data records; counts the other kinds."""

    def __init__(self, batch: WriteBatch, source: Path, prefix: str, summary: GenesisSummary) -> None:
        self._batch = batch
        self._source = source
        self._prefix = prefix
        self._summary = summary
        self.last_index = -1

    def __call__(self, height: int, index: int, record: Any) -> None:
        where = f"{self._source}: {self._prefix}[{index}]"
        try:
            kind, body = record_kind(record)
            if kind == "Account":
                account_id, view = account_state(body)
                where = f"{where} (Account {account_id})"
                self._batch.put_account_state(account_id, height, jsonio.compact(view))
                self._summary.accounts += 1
            elif kind == "AccessKey":
                account_id, public_key, key = access_key_record(body)
                where = f"{where} (AccessKey {public_key} of {account_id})"
                self._batch.put_access_key(account_id, public_key, height, jsonio.compact(key))
                self._summary.access_keys += 1
            elif kind == "Contract":
                account_id, code = contract_record(body)
                where = f"{where} (Contract of {account_id})"
                self._batch.put_contract_code(code_hash(code), code)
                self._summary.contracts += 1
            elif kind == "Data":
                account_id, data_key, value = data_record(body)
                where = f"{where} (Data of {account_id})"
                self._batch.put_contract_data(account_id, data_key, height, value)
                self._summary.contract_data += 1
            else:
                self._summary.skipped[kind] += 1
        except (RecordError, *_STORE_REFUSALS) as exc:
            raise located(where, exc) from None
        self._summary.records += 1
        self.last_index = index


def code_hash(code: bytes) -> str:
    """nearcore's name of contract code: base58(sha256(code))."""
    return based58.b58encode(hashlib.sha256(code).digest()).decode("ascii")


def _after(writer: _RecordWriter, prefix: str) -> str:
    return f"after {prefix}[{writer.last_index}]" if writer.last_index >= 0 else f"before the first of {prefix}"


def _write_config(batch: WriteBatch, path: Path, members: dict[str, Any], summary: GenesisSummary) -> None:
    try:
        projected = project_genesis_config(members)
        batch.put_genesis_config(jsonio.compact(projected.config))
    except (ProjectionError, *_STORE_REFUSALS) as exc:
        raise located(f"{path}: genesis config", exc) from None
    summary.chain_id = str(projected.config["chain_id"])
    summary.genesis_height = int(projected.config["genesis_height"])
    summary.protocol_version = int(projected.config["protocol_version"])
    summary.dropped_keys = projected.dropped
    summary.defaulted_keys = projected.defaulted


def import_genesis(
    path: Path,
    store: StoreLocation,
    *,
    records_path: Path | None = None,
    client_config_path: Path | None = None,
    progress: Progress | None = None,
    options: StoreOptions | None = None,
) -> GenesisSummary:
    """Import `path` (and a separate records file, and a client config) into `store` in one
    batch: all of it lands or nothing does."""
    started = time.monotonic()
    summary = GenesisSummary()
    client_config = None if client_config_path is None else read_client_config(client_config_path)
    sources = [path] if records_path is None else [path, records_path]
    total = sum(source.stat().st_size for source in sources)
    read_before = 0

    def on_progress(position: int) -> None:
        if progress is not None:
            progress.update(read_before + position, records=summary.records)

    with open_store(store, "write", options) as writer:

        def same_chain(members: dict[str, Any]) -> None:
            # refuse another chain's file before streaming its records, not after
            stored = writer.reader().chain_id()
            if stored is not None and "chain_id" in members and members["chain_id"] != stored:
                raise IngestError(
                    f"{path}: the store holds chain {stored!r}; refusing a genesis config of chain "
                    f"{members['chain_id']!r}"
                )

        with writer.batch() as batch:
            records = _RecordWriter(batch, path, "records", summary)
            try:
                members, _ = read_genesis(path, records, on_progress, same_chain)
            except jsonio.JsonInputError as exc:
                raise located(f"{path}", f"{exc} ({_after(records, 'records')})") from None
            _write_config(batch, path, members, summary)
            if records_path is not None:
                read_before = path.stat().st_size
                extra = _RecordWriter(batch, records_path, "", summary)
                try:
                    read_records(records_path, "item", summary.genesis_height, extra, on_progress)
                except jsonio.JsonInputError as exc:
                    raise located(f"{records_path}", f"{exc} ({_after(extra, '')})") from None
            if client_config is not None:
                try:
                    batch.put_client_config(client_config)
                except _STORE_REFUSALS as exc:
                    raise located(f"{client_config_path}: client config", exc) from None
        summary.client_config = writer.reader().client_config_json() is not None
    if progress is not None:
        progress.update(total, records=summary.records)
        progress.close()
    summary.seconds = time.monotonic() - started
    return summary



def describe(summary: GenesisSummary, store: str) -> list[str]:
    """The lines `nearrpc import genesis` prints."""
    skipped = ", ".join(f"{count} {kind}" for kind, count in sorted(summary.skipped.items())) or "none"
    lines = [
        f"imported the genesis of chain {summary.chain_id!r} (height {summary.genesis_height}, protocol "
        f"{summary.protocol_version}) into {describe_location(store)} in {summary.seconds:.1f} s",
        f"  records: {summary.records}; account states written: {summary.accounts}; access keys: "
        f"{summary.access_keys}; contract codes: {summary.contracts}; contract state keys: "
        f"{summary.contract_data}; other records (not served by this "
        f"interface): {skipped}",
        "  blocks: none (a genesis block's hash needs the state root; import blocks or record them from a node)",
    ]
    if summary.dropped_keys:
        lines.append(f"  dropped members that are not GenesisConfig fields: {', '.join(summary.dropped_keys)}")
    if summary.defaulted_keys:
        lines.append(f"  filled with nearcore's defaults: {', '.join(summary.defaulted_keys)}")
    if not summary.client_config:
        lines.append(
            "  note: the store holds no client_config yet, so the service answers client_config with "
            "INTERNAL_ERROR; add one with --client-config FILE (a saved client_config result)"
        )
    return lines


def ensure_readable(path: Path) -> None:
    """Fail with a one-line error when an input file is missing."""
    if not path.is_file():
        raise ImportRequestError(f"{path}: no such file")
