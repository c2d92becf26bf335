"""`nearrpc import blocks`: block views (and account views, access key lists, contract code,
protocol configs, genesis and client configs) from files, in one batch.

Blocks are stored exactly as given (compact JSON, key order kept), so the service answers
`block` with the bytes the node answered. Epoch records: see `nearrpc.ingest.epochs`.
"""

from __future__ import annotations

import base64
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from nearrpc.ingest import jsonio
from nearrpc.ingest.epochs import EpochTracker, InferredEpoch, recorded_epoch
from nearrpc.ingest.errors import IngestError, located
from nearrpc.ingest.progress import Progress
from nearrpc.ingest.shapes import (
    AccessKeysItem,
    AccountItem,
    BlockItem,
    ClientConfigItem,
    ContractCodeItem,
    GenesisConfigItem,
    IgnoredItem,
    ProtocolConfigItem,
    ShapeError,
    classify,
)
from nearrpc.ingest.sources import SourceItem, input_files, read_items
from nearrpc.nearcore.public_key import canonical_public_key
from nearrpc.spec import SchemaViolation
from nearrpc.store import (
    ChainReader,
    StoredBlock,
    StoreError,
    StoreLocation,
    StoreOptions,
    WriteBatch,
    block_from_view,
    describe_location,
    open_store,
)

_REFUSALS = (SchemaViolation, StoreError, ShapeError, KeyError, TypeError, ValueError)


@dataclass
class BlocksSummary:
    items: int = 0
    blocks: int = 0
    lowest: int | None = None
    highest: int | None = None
    account_states: int = 0
    absences: int = 0  # UNKNOWN_ACCOUNT answers recorded as "no such account"
    access_keys: int = 0  # key states written from saved key lists (deletions included)
    contract_codes: int = 0
    genesis_config: bool = False
    client_config: bool = False
    recorded_epochs: int = 0  # from protocol config results
    kept_epochs: int = 0  # already stored, left as they were
    inferred: list[InferredEpoch] = field(default_factory=list)
    ignored: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0


def stored_block(view: dict[str, Any]) -> StoredBlock:
    """The index fields of a `block` result, with the result as compact JSON."""
    return block_from_view(view, jsonio.compact(view))


@dataclass(frozen=True)
class _SeenBlock:
    where: str
    height: int
    hash: str
    latest_protocol_version: int


class _ChainFit:
    """What a block file can tell of its chain. A block names no chain id, so belonging cannot
    be shown; what cannot belong is refused: a block below the genesis height, or one produced
    by a binary older than the chain's genesis protocol (a producer runs at least the current
    version, and versions never go below the genesis one)."""

    def __init__(self) -> None:
        self.lowest: _SeenBlock | None = None
        self.oldest: _SeenBlock | None = None

    def observe(self, where: str, view: dict[str, Any]) -> None:
        header = view["header"]
        seen = _SeenBlock(where, int(header["height"]), str(header["hash"]), int(header["latest_protocol_version"]))
        if self.lowest is None or seen.height < self.lowest.height:
            self.lowest = seen
        if self.oldest is None or seen.latest_protocol_version < self.oldest.latest_protocol_version:
            self.oldest = seen

    def check(self, genesis: dict[str, Any]) -> None:
        chain = f"chain {genesis['chain_id']!r}"
        if self.lowest is not None and self.lowest.height < int(genesis["genesis_height"]):
            raise located(
                self.lowest.where,
                f"block {self.lowest.hash} at height {self.lowest.height} is not of {chain}, whose genesis height "
                f"is {genesis['genesis_height']}",
            )
        if self.oldest is not None and self.oldest.latest_protocol_version < int(genesis["protocol_version"]):
            raise located(
                self.oldest.where,
                f"block {self.oldest.hash} at height {self.oldest.height} is not of {chain}: its producer runs "
                f"protocol version {self.oldest.latest_protocol_version}, older than the genesis protocol version "
                f"{genesis['protocol_version']}",
            )


class _Run:
    def __init__(self, batch: WriteBatch, reader: ChainReader, summary: BlocksSummary) -> None:
        self._batch = batch
        self._reader = reader
        self._summary = summary
        self._epochs = EpochTracker()
        self._chain_fit = _ChainFit()
        self._protocol_configs: list[tuple[str, ProtocolConfigItem]] = []

    def add(self, source: SourceItem) -> None:
        try:
            item = classify(source.value)
            if isinstance(item, ProtocolConfigItem):  # tied to its epoch once all blocks are in
                self._protocol_configs.append((source.where, item))
            else:
                if isinstance(item, BlockItem):
                    self._chain_fit.observe(source.where, item.view)
                self._write(item)
        except (*_REFUSALS, IngestError) as exc:
            raise located(source.where, exc) from None
        self._summary.items += 1

    def _write(self, item: Any) -> None:
        summary = self._summary
        if isinstance(item, BlockItem):
            block = stored_block(item.view)
            self._batch.put_block(block)
            self._epochs.observe(item.view["header"])
            summary.blocks += 1
            summary.lowest = block.height if summary.lowest is None else min(summary.lowest, block.height)
            summary.highest = block.height if summary.highest is None else max(summary.highest, block.height)
        elif isinstance(item, AccountItem):
            self._check_block(item)
            view = None if item.view is None else jsonio.compact(item.view)
            self._batch.put_account_state(item.account_id, item.height, view)
            summary.account_states += 1
            summary.absences += item.view is None
        elif isinstance(item, AccessKeysItem):
            summary.access_keys += self._write_keys(item)
        elif isinstance(item, ContractCodeItem):
            self._batch.put_contract_code(item.code_hash, base64.b64decode(item.code_base64, validate=True))
            summary.contract_codes += 1
        elif isinstance(item, GenesisConfigItem):
            self._batch.put_genesis_config(jsonio.compact(item.config))
            summary.genesis_config = True
        elif isinstance(item, ClientConfigItem):
            self._batch.put_client_config(jsonio.compact(item.config))
            summary.client_config = True
        elif isinstance(item, IgnoredItem):
            summary.ignored[item.reason] += 1

    def _write_keys(self, item: AccessKeysItem) -> int:
        """The list is the account's every key at that block: keys stored before and missing from
        it were deleted by then."""
        self._check_block(item)
        listed = {canonical_public_key(key) for key, _ in item.keys}
        gone = [key for key, _ in self._reader.access_keys_json(item.account_id, item.height) if key not in listed]
        for key, view in item.keys:
            self._batch.put_access_key(item.account_id, key, item.height, jsonio.compact(view))
        for key in gone:
            self._batch.put_access_key(item.account_id, key, item.height, None)
        return len(item.keys) + len(gone)

    def _check_block(self, item: AccountItem | AccessKeysItem) -> None:
        block = self._reader.block_by_height(item.height)
        if block is not None and block.hash != item.block_hash:
            raise IngestError(
                f"account {item.account_id} was read at block {item.block_hash}, but the block at height "
                f"{item.height} is {block.hash}"
            )

    def finish(self, source: Path) -> None:
        genesis_json = self._reader.genesis_config_json()
        if genesis_json is None:
            raise IngestError(
                f"{source}: the store holds no genesis config and the input has none; import the genesis "
                "first (nearrpc import genesis) or add a genesis_config result to the input"
            )
        genesis = orjson.loads(genesis_json)
        self._chain_fit.check(genesis)
        recorded = self._recorded_epochs(str(genesis["chain_id"]))
        genesis_block = self._reader.genesis_block()
        genesis_hash = None if genesis_block is None else genesis_block.hash
        for epoch_id in self._epochs.epoch_ids():
            if epoch_id in recorded:
                continue
            if self._reader.epoch(epoch_id) is not None:
                self._summary.kept_epochs += 1
                continue
            inferred = self._epochs.infer(epoch_id, int(genesis["protocol_version"]), genesis_hash)
            self._batch.put_epoch(inferred.epoch)
            self._summary.inferred.append(inferred)

    def _recorded_epochs(self, chain_id: str) -> set[str]:
        done: set[str] = set()
        for where, item in self._protocol_configs:
            try:
                if item.config.get("chain_id", chain_id) != chain_id:
                    raise IngestError(f"a protocol config of chain {item.config.get('chain_id')!r}, not {chain_id!r}")
                epoch_id = self._epoch_of(item)
                self._batch.put_epoch(recorded_epoch(epoch_id, item.config))
            except (*_REFUSALS, IngestError) as exc:
                raise located(where, exc) from None
            done.add(epoch_id)
            self._summary.recorded_epochs += 1
        return done

    def _epoch_of(self, item: ProtocolConfigItem) -> str:
        context = item.context
        if context.epoch_id is not None:
            return context.epoch_id
        if context.block_ref is None:
            raise IngestError(
                'a protocol config does not say at which block it was read: add "block_hash" (or '
                '"block_height", "epoch_id") beside "result", or save it as {"request": ..., "response": ...}'
            )
        ref = context.block_ref
        block = self._reader.block_by_height(ref) if isinstance(ref, int) else self._reader.block_by_hash(ref)
        if block is None:
            raise IngestError(f"the protocol config was read at block {ref}, which is neither stored nor imported")
        return block.epoch_id


def import_blocks(
    path: Path, store: StoreLocation, *, progress: Progress | None = None, options: StoreOptions | None = None
) -> BlocksSummary:
    """Import everything under `path` into `store` in one batch: all of it lands or nothing."""
    started = time.monotonic()
    input_files(path)  # fail early on a missing path or an empty folder
    summary = BlocksSummary()
    with open_store(store, "write", options) as writer:
        with writer.batch() as batch:
            run = _Run(batch, writer.reader(), summary)
            for item in read_items(path):
                run.add(item)
                if progress is not None:
                    progress.update(advance=1)
            run.finish(path)
    if progress is not None:
        progress.close()
    summary.seconds = time.monotonic() - started
    return summary


def describe(summary: BlocksSummary, store: str) -> list[str]:
    """The lines `nearrpc import blocks` prints."""
    span = "" if summary.lowest is None else f" (heights {summary.lowest}..{summary.highest})"
    lines = [
        f"imported {summary.items} items into {describe_location(store)} in {summary.seconds:.1f} s: "
        f"{summary.blocks} blocks{span}, "
        f"{summary.account_states} account states ({summary.absences} of them 'no such account'), "
        f"{summary.access_keys} access key states, {summary.contract_codes} contract codes, "
        f"{summary.recorded_epochs} protocol configs",
    ]
    configs = [
        name
        for name, present in (("genesis_config", summary.genesis_config), ("client_config", summary.client_config))
        if present
    ]
    if configs:
        lines.append(f"  configs: {', '.join(configs)}")
    if summary.kept_epochs:
        lines.append(f"  epochs already stored and kept: {summary.kept_epochs}")
    for inferred in summary.inferred:
        lines.append(
            f"  note: epoch {inferred.epoch.epoch_id} (heights {inferred.first_height}..{inferred.last_height}) "
            f"has no protocol config in the input; protocol version {inferred.epoch.protocol_version} inferred "
            f"({inferred.reason}), epoch values from the genesis config"
        )
    for reason, count in sorted(summary.ignored.items()):
        lines.append(f"  ignored: {count} x {reason}")
    return lines
