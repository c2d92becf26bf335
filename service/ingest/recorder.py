"""`nearrpc import rpc`: record a height range from a live NEAR RPC node.

What is recorded: the genesis and client configs; every block of the range (a height the node
answers UNKNOWN_BLOCK for, inside its final and available range, is a skipped height and is
simply absent from the store, which is how the service answers for it too); the protocol config
of every epoch met, read at one of its blocks and kept verbatim; and the state of each chosen
account at every block (an UNKNOWN_ACCOUNT answer is stored as "no such account" at that
height, so replay answers UNKNOWN_ACCOUNT there as well); each chosen account's access keys at
every block, written only where a key changed (`recorded_keys`); the code of every contract
a recorded state names, once, by its hash; and the contract state (`view_state`, no prefix) of
each chosen account that has code, at every block, written only where a storage key changed
(`recorded_state`). A state the node refuses to give (too large for its view_state limit, or a
shard it does not track) is recorded as not held at that height (`contract_state_not_held`).
And the execution of every block (`recorded_chain`): its new chunks, their final transactions
with outcomes and receipts, and the validators of its epoch.

The range is written in batches of consecutive heights. Each batch holds the blocks of its
heights with their epochs, account states, key changes and new contract codes, and a progress
note (the recording and the next height), and lands whole or not at all; a re-run of the same
recording continues after the last committed batch. Every batch is idempotent (writes replace
rows with the same values, and a key row is written only where the store answers otherwise), so
an overlapping run changes nothing.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import orjson

from nearrpc.ingest import jsonio, recorded_state
from nearrpc.ingest.blocks_import import stored_block
from nearrpc.ingest.epochs import recorded_epoch
from nearrpc.ingest.errors import ImportRequestError, IngestError, located
from nearrpc.ingest.progress import Progress
from nearrpc.ingest.recorded_chain import Executed, ExecutionRecorder
from nearrpc.ingest.recorded_keys import KeyList, KeyRow, changed_rows, restoring
from nearrpc.ingest.rpc_client import RetryPolicy, RpcClient, RpcReply
from nearrpc.nearcore.public_key import canonical_public_key
from nearrpc.nearcore.views import ACCOUNT_VIEW_BLOCK_MEMBERS, ZERO_HASH
from nearrpc.spec import SchemaViolation, validate_component
from nearrpc.store import (
    ACCOUNTS_CHOSEN,
    ChainReader,
    ChainWriter,
    StoreError,
    StoreLocation,
    StoreOptions,
    WriteBatch,
    contract_state_not_held,
    describe_location,
    held_account,
    open_store,
)
from nearrpc.urls import public_url

_REFUSALS = (SchemaViolation, StoreError, KeyError, TypeError, ValueError, binascii.Error)
# the views asked for, by their `query` request type: nodes before interface 1.2.3 lack the
# EXPERIMENTAL_ methods and answer the same views (and errors) through `query`
_VIEW_METHODS = {
    "view_account": "EXPERIMENTAL_view_account",
    "view_access_key_list": "EXPERIMENTAL_view_access_key_list",
    "view_code": "EXPERIMENTAL_view_code",
}
# What a node answers when it will not give a contract's state: more than its view_state
# limit (nearcore's TooLargeContractState), or a shard it does not track.
_STATE_NOT_GIVEN = ("TOO_LARGE_CONTRACT_STATE", "UNAVAILABLE_SHARD")
_NO_CODE_HASH = ZERO_HASH  # an account without a contract of its own: the all-zero hash


@dataclass(frozen=True, slots=True)
class Recording:
    url: str
    store: StoreLocation
    from_height: int
    to_height: int
    accounts: tuple[str, ...]
    concurrency: int
    batch_heights: int
    policy: RetryPolicy
    store_options: StoreOptions | None = None  # connecting to, and waiting on, a database server


@dataclass(frozen=True, slots=True)
class _Job:
    """What a progress note is valid for: a re-run of another recording starts afresh."""

    chain_id: str
    from_height: int
    to_height: int
    accounts: tuple[str, ...]

    def note(self, next_height: int) -> bytes | None:
        """The progress note stored with a batch; None once the range is done."""
        if next_height > self.to_height:
            return None
        return orjson.dumps({"job": {**asdict(self), "accounts": list(self.accounts)}, "next_height": next_height})

    def resume_height(self, note: bytes | None) -> int | None:
        """The next height to record when `note` was left by this very recording."""
        try:
            stored = orjson.loads(note) if note is not None else None
        except orjson.JSONDecodeError:
            return None
        if not isinstance(stored, dict) or not isinstance(stored.get("next_height"), int):
            return None
        if stored.get("job") != {**asdict(self), "accounts": list(self.accounts)}:
            return None
        next_height: int = stored["next_height"]
        return next_height if self.from_height <= next_height <= self.to_height else None


@dataclass
class RecordSummary:
    chain_id: str = ""
    resumed_at: int | None = None
    heights: int = 0  # heights visited by this run
    blocks: int = 0
    skipped: list[int] = field(default_factory=list)
    epochs: int = 0
    account_states: int = 0
    absences: int = 0
    access_keys: int = 0  # key rows written (changes and deletions)
    contract_codes: int = 0
    contract_state_rows: int = 0  # storage-key rows written (changes and removals)
    states_not_held: list[str] = field(default_factory=list)  # "account at height": state not given
    chunks: int = 0
    transactions: int = 0
    receipts: int = 0
    validators: int = 0  # epoch validator records written (an epoch's later batches replace it)
    not_final: list[str] = field(default_factory=list)  # "tx at height": transactions left out, not final yet
    unserved: list[str] = field(default_factory=list)  # chunk, tx or validators methods the node does not serve
    batches: int = 0
    requests: int = 0
    retries: int = 0
    seconds: float = 0.0


# the genesis and client configs, and the genesis block's hash when the node names it
_Configs = tuple[bytes, bytes, str | None]


@dataclass
class _Batch:
    heights: range
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    epochs: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)  # id -> (height read at, config)
    states: list[tuple[str, int, dict[str, Any] | None]] = field(default_factory=list)
    keys: list[tuple[str, int, KeyList]] = field(default_factory=list)  # (account, height, listing)
    codes: dict[str, tuple[str, int, bytes]] = field(default_factory=dict)  # hash -> (account, height, code)
    # (account, height, whole contract state or None: not given) of accounts with code
    contract_states: list[tuple[str, int, recorded_state.ContractState | None]] = field(default_factory=list)
    executed: Executed = field(default_factory=Executed)  # chunks, transactions, receipts, validators


class _Recorder:
    def __init__(self, recording: Recording, rpc: RpcClient, target: ChainWriter) -> None:
        self._job = recording
        self._rpc = rpc
        self._target = target
        # A store of chosen accounts says which it holds (`store.held`): any store but one that
        # holds a genesis import's records (every account), which a recording does not narrow.
        # So a recording made before the marks gets them from a re-run.
        reader = target.reader()
        self._marks_accounts = reader.fetched(ACCOUNTS_CHOSEN) or not _holds_genesis_records(reader)
        self._exact_epochs: set[str] = set()
        self._stored_codes: set[str] = set()
        self._through_query: set[str] = set()  # request types the node answers only through `query`
        self._execution = ExecutionRecorder(rpc)

    # -- reading from the node

    async def _block(self, height: int) -> dict[str, Any] | None:
        reply = await self._rpc.call("block", {"block_id": height})
        if reply.cause == "UNKNOWN_BLOCK":
            return None
        if reply.error is not None:
            raise IngestError(f"height {height}: block: the node answered {reply.describe()}")
        view: dict[str, Any] = reply.result
        if block_header(view, f"height {height}: block")["height"] != height:
            raise IngestError(f"height {height}: block: the node answered a block of another height")
        return view

    async def _protocol_config(self, epoch_id: str, height: int, block_hash: str) -> tuple[str, dict[str, Any]]:
        reply = await self._rpc.call("EXPERIMENTAL_protocol_config", {"block_id": block_hash})
        if reply.error is not None or not isinstance(reply.result, dict):
            raise IngestError(f"height {height}: EXPERIMENTAL_protocol_config: the node answered {reply.describe()}")
        return epoch_id, reply.result

    async def _ask_view(self, request_type: str, account_id: str, block_hash: str, **extra: Any) -> RpcReply:
        params: dict[str, Any] = {"block_id": block_hash, "account_id": account_id, **extra}
        if request_type not in self._through_query:
            reply = await self._rpc.call(_VIEW_METHODS[request_type], params)
            if reply.cause != "METHOD_NOT_FOUND":
                return reply
            self._through_query.add(request_type)
        return await self._rpc.call("query", {"request_type": request_type, **params})

    async def _view(self, account_id: str, height: int, block_hash: str) -> dict[str, Any] | None:
        reply = await self._ask_view("view_account", account_id, block_hash)
        if reply.cause == "UNKNOWN_ACCOUNT":
            return None
        view = reply.result
        if reply.error is not None or not isinstance(view, dict):
            raise IngestError(f"height {height}: view_account {account_id}: the node answered {reply.describe()}")
        if view.get("block_hash") != block_hash or view.get("block_height") != height:
            raise IngestError(f"height {height}: view_account {account_id}: the view is of another block")
        return {key: value for key, value in view.items() if key not in ACCOUNT_VIEW_BLOCK_MEMBERS}

    async def _key_list(self, account_id: str, height: int, block_hash: str) -> KeyList:
        where = f"height {height}: view_access_key_list {account_id}"
        reply = await self._ask_view("view_access_key_list", account_id, block_hash)
        if reply.cause == "UNKNOWN_ACCOUNT":  # nodes that refuse to list an absent account's keys
            return ()
        listing = reply.result
        if reply.error is not None or not isinstance(listing, dict):
            raise IngestError(f"{where}: the node answered {reply.describe()}")
        if listing.get("block_hash") != block_hash or listing.get("block_height") != height:
            raise IngestError(f"{where}: the list is of another block")
        try:
            return key_list(listing)
        except _REFUSALS as exc:
            raise located(where, exc) from None

    async def _code(self, account_id: str, height: int, block_hash: str, code_hash: str) -> tuple[str, int, bytes]:
        where = f"height {height}: view_code {account_id}"
        reply = await self._ask_view("view_code", account_id, block_hash)
        view = reply.result
        if reply.error is not None or not isinstance(view, dict):
            raise IngestError(f"{where}: the node answered {reply.describe()}")
        if view.get("hash") != code_hash or not isinstance(view.get("code_base64"), str):
            raise IngestError(f"{where}: not the code {code_hash} of the account's state (hash {view.get('hash')!r})")
        try:
            return account_id, height, base64.b64decode(view["code_base64"], validate=True)
        except binascii.Error as exc:
            raise located(where, exc) from None

    async def _contract_state(
        self, account_id: str, height: int, block_hash: str
    ) -> recorded_state.ContractState | None:
        """The account's whole contract state at the block; None when the node will not give it."""
        where = f"height {height}: view_state {account_id}"
        # Through `query`, never EXPERIMENTAL_view_state: nearcore's EXPERIMENTAL methods fold "does not
        # track the shard" into INTERNAL_ERROR (HTTP 500), which reads like an overloaded node and
        # is retried; `query` answers it as UNAVAILABLE_SHARD (HTTP 200), the state not given.
        params = {"request_type": "view_state", "block_id": block_hash, "account_id": account_id, "prefix_base64": ""}
        reply = await self._rpc.call("query", params)
        if reply.cause in _STATE_NOT_GIVEN:
            return None
        answer = reply.result
        if reply.error is not None or not isinstance(answer, dict):
            raise IngestError(f"{where}: the node answered {reply.describe()}")
        if answer.get("block_hash") != block_hash or answer.get("block_height") != height:
            raise IngestError(f"{where}: the state is of another block")
        try:
            validate_component("ViewStateResult", answer)
            if answer.get("last_key") is not None:
                raise ValueError("the node answered one page of the state (last_key), not all of it")
            state = {
                base64.b64decode(item["key"], validate=True): base64.b64decode(item["value"], validate=True)
                for item in answer["values"]
            }
        except _REFUSALS as exc:
            raise located(where, exc) from None
        if len(state) != len(answer["values"]):
            raise IngestError(f"{where}: a storage key is listed twice")
        return state

    def _missing_codes(self, states: list[tuple[str, int, dict[str, Any] | None]]) -> dict[str, tuple[str, int]]:
        """The contracts the states name that the store lacks: hash -> (account, first height)."""
        wanted: dict[str, tuple[str, int]] = {}
        reader = self._target.reader()
        for account_id, height, state in states:
            code_hash = None if state is None else state.get("code_hash")
            if not isinstance(code_hash, str) or code_hash == _NO_CODE_HASH or code_hash in wanted:
                continue
            if code_hash in self._stored_codes or reader.contract_code(code_hash) is not None:
                self._stored_codes.add(code_hash)
                continue
            wanted[code_hash] = (account_id, height)
        return wanted

    def _needs_epoch(self, epoch_id: str) -> bool:
        if epoch_id in self._exact_epochs:
            return False
        stored = self._target.reader().epoch(epoch_id)
        if stored is not None and stored.protocol_config_json is not None:
            self._exact_epochs.add(epoch_id)
            return False
        return True

    async def fetch(self, heights: range) -> _Batch:
        batch = _Batch(heights)
        views = await asyncio.gather(*(self._block(height) for height in heights))
        batch.blocks = {height: view for height, view in zip(heights, views, strict=True) if view is not None}
        wanted: dict[str, tuple[int, str]] = {}
        for height, view in batch.blocks.items():
            epoch_id = view["header"]["epoch_id"]
            if epoch_id not in wanted and self._needs_epoch(epoch_id):
                wanted[epoch_id] = (height, view["header"]["hash"])
        configs = asyncio.gather(*(self._protocol_config(e, h, b) for e, (h, b) in wanted.items()))
        pairs = [(account, height, view["header"]["hash"])
                 for height, view in batch.blocks.items() for account in self._job.accounts]
        states = asyncio.gather(*(self._view(account, height, block_hash) for account, height, block_hash in pairs))
        keys = asyncio.gather(*(self._key_list(account, height, block_hash) for account, height, block_hash in pairs))
        fetched_configs, fetched_states, fetched_keys = await asyncio.gather(configs, states, keys)
        batch.epochs = {epoch_id: (wanted[epoch_id][0], config) for epoch_id, config in fetched_configs}
        for epoch_id, config in fetched_configs:
            self._execution.learn_layout(epoch_id, config)
        batch.executed = await self._execution.fetch(batch.blocks, self._target.reader())
        batch.states = [
            (account, height, view) for (account, height, _), view in zip(pairs, fetched_states, strict=True)
        ]
        batch.keys = [
            (account, height, listing) for (account, height, _), listing in zip(pairs, fetched_keys, strict=True)
        ]
        # a contract is known only from a state, so its code is asked for once the states are in
        missing = self._missing_codes(batch.states)
        codes = await asyncio.gather(*(
            self._code(account, height, batch.blocks[height]["header"]["hash"], code_hash)
            for code_hash, (account, height) in missing.items()
        ))  # fmt: skip
        batch.codes = dict(zip(missing, codes, strict=True))
        with_code = [(account, height) for account, height, state in batch.states if _has_code(state)]
        contract_states = await asyncio.gather(*(
            self._contract_state(account, height, batch.blocks[height]["header"]["hash"])
            for account, height in with_code
        ))  # fmt: skip
        batch.contract_states = [
            (account, height, state) for (account, height), state in zip(with_code, contract_states, strict=True)
        ]
        return batch

    # -- writing to the store

    def write(
        self, fetched: _Batch, configs: _Configs | None, progress_note: bytes | None, summary: RecordSummary
    ) -> None:
        with self._target.batch() as batch:
            batch.put_import_progress(progress_note)
            if configs is not None:
                genesis, client, genesis_hash = configs
                try:
                    batch.put_genesis_config(genesis)
                    batch.put_client_config(client)
                    if genesis_hash is not None:
                        batch.put_genesis_hash(genesis_hash)
                except _REFUSALS as exc:
                    raise located(f"{public_url(self._job.url)}: genesis/client config", exc) from None
            if self._marks_accounts:
                batch.put_fetched(ACCOUNTS_CHOSEN)
                for account_id in self._job.accounts:
                    batch.put_fetched(held_account(account_id))
            for epoch_id, (height, config) in fetched.epochs.items():
                try:
                    batch.put_epoch(recorded_epoch(epoch_id, config))
                except _REFUSALS as exc:
                    raise located(f"height {height}: protocol config of epoch {epoch_id}", exc) from None
            for height, view in sorted(fetched.blocks.items()):
                try:
                    batch.put_block(stored_block(view))
                except _REFUSALS as exc:
                    raise located(f"height {height}: block", exc) from None
            fetched.executed.write(batch)
            for account_id, height, state in fetched.states:
                try:
                    batch.put_account_state(account_id, height, None if state is None else jsonio.compact(state))
                except _REFUSALS as exc:
                    raise located(f"height {height}: account {account_id}", exc) from None
            summary.access_keys += self._write_keys(batch, fetched)
            summary.contract_state_rows += self._write_contract_states(batch, fetched)
            for code_hash, (account_id, height, code) in fetched.codes.items():
                try:
                    batch.put_contract_code(code_hash, code)
                except _REFUSALS as exc:
                    raise located(f"height {height}: code {code_hash} of {account_id}", exc) from None
        self._exact_epochs.update(fetched.epochs)
        self._stored_codes.update(fetched.codes)
        summary.contract_codes += len(fetched.codes)
        summary.batches += 1
        summary.heights += len(fetched.heights)
        summary.blocks += len(fetched.blocks)
        summary.skipped.extend(h for h in fetched.heights if h not in fetched.blocks)
        summary.epochs += len(fetched.epochs)
        summary.account_states += len(fetched.states)
        summary.absences += sum(1 for _, _, state in fetched.states if state is None)
        summary.states_not_held += [f"{a} at {h}" for a, h, state in fetched.contract_states if state is None]
        summary.chunks += len(fetched.executed.chunks)
        summary.transactions += len(fetched.executed.transactions)
        summary.receipts += len(fetched.executed.receipts)
        summary.validators += len(fetched.executed.validators)
        summary.not_final += fetched.executed.not_final
        summary.unserved = sorted(self._execution.unserved)

    def _write_keys(self, batch: WriteBatch, fetched: _Batch) -> int:
        """Write the batch's key changes; how many rows that took."""
        reader = self._target.reader()
        by_account: dict[str, list[tuple[int, KeyList]]] = {}
        for account_id, height, listing in sorted(fetched.keys, key=lambda entry: (entry[0], entry[1])):
            by_account.setdefault(account_id, []).append((height, listing))
        rows = [row for account, listings in by_account.items() for row in changed_rows(reader, account, listings)]
        head = reader.head()
        if rows and head is not None and head.height > fetched.heights[-1]:
            rows.extend(restoring(reader, rows, fetched.heights[-1] + 1))
        for row in rows:
            _put_key(batch, row)
        return len(rows)

    def _write_contract_states(self, batch: WriteBatch, fetched: _Batch) -> int:
        """Write the batch's storage-key changes and not-held marks; how many rows that took."""
        reader = self._target.reader()
        by_account: dict[str, list[tuple[int, recorded_state.ContractState | None]]] = {}
        for account_id, height, state in sorted(fetched.contract_states, key=lambda entry: (entry[0], entry[1])):
            by_account.setdefault(account_id, []).append((height, state))
        rows = [row for account, states in by_account.items()
                for row in recorded_state.changed_rows(reader, account, states)]  # fmt: skip
        head = reader.head()
        if rows and head is not None and head.height > fetched.heights[-1]:
            rows.extend(recorded_state.restoring(reader, rows, fetched.heights[-1] + 1))
        for row in rows:
            try:
                batch.put_contract_data(row.account_id, row.key, row.height, row.value)
            except _REFUSALS as exc:
                raise located(f"height {row.height}: contract state of {row.account_id}", exc) from None
        for account_id, height, state in fetched.contract_states:
            if state is None:
                batch.put_fetched(contract_state_not_held(account_id, height))
        return len(rows)


async def _check_range(rpc: RpcClient, recording: Recording, genesis_height: int) -> None:
    if recording.from_height < genesis_height:
        raise IngestError(f"--from-height {recording.from_height} is below the chain's genesis height {genesis_height}")
    final_height = block_header(await rpc.result("block", {"finality": "final"}), "block final")["height"]
    if recording.to_height > final_height:
        raise IngestError(
            f"--to-height {recording.to_height} is above the node's final block {final_height}: above it, "
            "blocks may still change and a missing height may still be filled; record up to it"
        )
    earliest = await rpc.call("block", {"sync_checkpoint": "earliest_available"})
    if earliest.error is None and isinstance(earliest.result, dict):
        earliest_height = block_header(earliest.result, "block earliest_available")["height"]
        if recording.from_height < earliest_height:
            raise IngestError(
                f"the node keeps blocks from height {earliest_height} on (it is not an archival node for "
                f"--from-height {recording.from_height}); every lower height would look skipped"
            )


def _accounts_to_record(recording: Recording, reader: ChainReader) -> tuple[str, ...]:
    """The accounts a run records: its own, then those the store already holds (`store.held`).

    A held account's mark says the store holds its state at every stored block, so absence
    there means "no such account": a run that adds blocks records every held account at them
    too, and a run may add an account only where it records every block the store holds (else
    the blocks recorded without it would answer UNKNOWN_ACCOUNT for it). A store without the
    marks says nothing of what it holds: a store of genesis records (every account) is not
    narrowed, and a recording made before the marks gets them from this run as it names them."""
    if not reader.fetched(ACCOUNTS_CHOSEN):
        return recording.accounts
    prefix = held_account("")
    held = sorted(mark.removeprefix(prefix) for mark in reader.iter_fetched() if mark.startswith(prefix))
    added = [account for account in recording.accounts if account not in held]
    info = reader.info()
    if added and info.earliest_height is not None and info.latest_height is not None:
        first, last = info.earliest_height, info.latest_height
        if recording.from_height > first or recording.to_height < last:
            where = describe_location(recording.store)
            raise IngestError(
                f"--accounts {','.join(added)}: {where} holds blocks {first} to {last} recorded without "
                f"{'it' if len(added) == 1 else 'them'}, and a recording holds its accounts at every block it "
                f"stores: record from --from-height {first} to at least --to-height {last}, or into a new store"
            )
    return tuple(dict.fromkeys((*recording.accounts, *held)))


def _holds_genesis_records(reader: ChainReader) -> bool:
    """Whether the store holds the accounts of genesis records (a genesis import, the sample):
    the genesis validators' states at the genesis height."""
    genesis = reader.genesis_config_json()
    if genesis is None:
        return False
    config = orjson.loads(genesis)
    validators = config.get("validators")
    if not isinstance(validators, list):
        return False
    height = int(config["genesis_height"])
    return any(
        isinstance(v, dict) and isinstance(v.get("account_id"), str) and reader.account_json(v["account_id"], height)
        for v in validators
    )


async def _genesis_hash(rpc: RpcClient) -> str | None:
    """The node's genesis block hash (its `status` names it), which a recording of later heights
    keeps for its own `status`; None from a node that does not say."""
    reply = await rpc.call("status", None)
    found = reply.result.get("genesis_hash") if reply.error is None and isinstance(reply.result, dict) else None
    return found if isinstance(found, str) else None


async def _record(recording: Recording, target: ChainWriter, progress: Progress | None) -> RecordSummary:
    summary = RecordSummary()

    def counted() -> None:
        if progress is not None:
            progress.count("requests")

    def retrying(message: str) -> None:
        if progress is not None:
            progress.count("retries")
            progress.note(f"{public_url(recording.url)}: {message}")

    async with RpcClient(recording.url, recording.policy, concurrency=recording.concurrency,
                         on_request=counted, on_retry=retrying) as rpc:
        genesis = await rpc.result("genesis_config", None)
        client = await rpc.result("client_config", None)
        if not isinstance(genesis, dict) or not isinstance(client, dict) or "chain_id" not in genesis:
            where = public_url(recording.url)
            raise IngestError(f"{where}: genesis_config/client_config answers are not config objects")
        summary.chain_id = str(genesis["chain_id"])
        stored_chain = target.reader().chain_id()
        if stored_chain not in (None, summary.chain_id):
            where = describe_location(recording.store)
            raise IngestError(f"{where} holds chain {stored_chain!r}; the node serves {summary.chain_id!r}")
        await _check_range(rpc, recording, int(genesis["genesis_height"]))
        recording = replace(recording, accounts=_accounts_to_record(recording, target.reader()))

        job = _Job(summary.chain_id, recording.from_height, recording.to_height, recording.accounts)
        start = job.resume_height(target.reader().import_progress())
        summary.resumed_at = start
        start = recording.from_height if start is None else start
        if progress is not None:
            progress.update(start - recording.from_height)
        recorder = _Recorder(recording, rpc, target)
        configs: _Configs | None = (jsonio.compact(genesis), jsonio.compact(client), await _genesis_hash(rpc))
        for first in range(start, recording.to_height + 1, recording.batch_heights):
            heights = range(first, min(first + recording.batch_heights, recording.to_height + 1))
            fetched = await recorder.fetch(heights)
            recorder.write(fetched, configs, job.note(heights.stop), summary)
            configs = None
            if progress is not None:
                progress.update(advance=len(heights))
        if configs is not None:  # nothing left to record: still refresh the configs
            recorder.write(_Batch(range(0)), configs, None, summary)
        summary.requests, summary.retries = rpc.requests, rpc.retries
    return summary


def record(recording: Recording, progress: Progress | None = None) -> RecordSummary:
    """Record `recording.from_height..to_height` (inclusive) into `recording.store`."""
    if recording.from_height > recording.to_height:
        raise ImportRequestError(f"--from-height {recording.from_height} is above --to-height {recording.to_height}")
    started = time.monotonic()
    try:
        with open_store(recording.store, "write", recording.store_options) as target:
            summary = asyncio.run(_record(recording, target, progress))
    finally:
        if progress is not None:
            progress.close()
    summary.seconds = time.monotonic() - started
    return summary


def _put_key(batch: WriteBatch, row: KeyRow) -> None:
    try:
        batch.put_access_key(row.account_id, row.public_key, row.height, row.view_json())
    except _REFUSALS as exc:
        raise located(f"height {row.height}: access key {row.public_key} of {row.account_id}", exc) from None


def key_list(listing: dict[str, Any]) -> KeyList:
    """The keys of an AccessKeyList answer, each under its canonical spelling (the store's)."""
    entries = listing.get("keys")
    if not isinstance(entries, list):
        raise ValueError("an access key list needs a keys array")
    if listing.get("last_key") is not None:
        # newer nodes page the list (last_key is the cursor); a page is not the account's every
        # key, and reading it as one would delete the keys of the pages after it
        raise ValueError(f"the list is one page (last_key {listing['last_key']!r}); paged lists are not read")
    keys: list[tuple[str, dict[str, Any]]] = []
    for entry in entries:
        key, view = (entry.get("public_key"), entry.get("access_key")) if isinstance(entry, dict) else (None, None)
        if not isinstance(key, str) or not isinstance(view, dict):
            raise ValueError("an access key list entry needs public_key and access_key")
        keys.append((canonical_public_key(key), view))
    return tuple(keys)


def block_header(view: object, what: str) -> dict[str, Any]:
    """The header of a `block` answer, checked enough to index it (the store validates the rest)."""
    header = view.get("header") if isinstance(view, dict) else None
    if (
        not isinstance(header, dict)
        or isinstance(header.get("height"), bool)
        or not isinstance(header.get("height"), int)
        or not all(isinstance(header.get(key), str) for key in ("hash", "epoch_id"))
    ):
        raise IngestError(f"{what}: the node's answer is not a block (no header with height, hash and epoch_id)")
    return header


def describe(summary: RecordSummary, recording: Recording) -> list[str]:
    """The lines `nearrpc import rpc` prints."""
    shown = ", ".join(str(h) for h in summary.skipped[:20]) + (", ..." if len(summary.skipped) > 20 else "")
    resumed = "" if summary.resumed_at is None else f" (resumed at height {summary.resumed_at})"
    rate = summary.requests / summary.seconds if summary.seconds else 0.0
    return [
        f"recorded heights {recording.from_height}..{recording.to_height} of chain {summary.chain_id!r} from "
        f"{public_url(recording.url)} into {describe_location(recording.store)}{resumed} in {summary.seconds:.1f} s",
        f"  blocks: {summary.blocks}; skipped heights: {len(summary.skipped)}" + (f" ({shown})" if shown else ""),
        f"  epochs with their protocol config: {summary.epochs}; account states: {summary.account_states} "
        f"({summary.absences} of them 'no such account') for {len(recording.accounts)} accounts",
        f"  access key states: {summary.access_keys} (where a key changed); contract codes: {summary.contract_codes}",
        f"  contract state rows: {summary.contract_state_rows} (where a storage key changed); states not held: "
        f"{len(summary.states_not_held)}" + _not_held(summary.states_not_held),
        f"  chunks: {summary.chunks}; transactions: {summary.transactions} (with their outcomes; "
        f"{len(summary.not_final)} not final yet, left out); receipts: {summary.receipts}; epoch validator "
        f"records: {summary.validators}" + (f" (the node does not serve {', '.join(summary.unserved)})"
                                            if summary.unserved else ""),
        f"  batches: {summary.batches}; requests: {summary.requests} ({rate:.0f}/s), retried: {summary.retries}",
    ]


def _has_code(state: dict[str, Any] | None) -> bool:
    """Whether an account state names a contract: its own code, or a global contract."""
    if state is None:
        return False
    own = state.get("code_hash")
    return (isinstance(own, str) and own != _NO_CODE_HASH) or any(
        state.get(member) is not None for member in ("global_contract_hash", "global_contract_account_id")
    )


def _not_held(states: list[str]) -> str:
    """The first heights whose contract state the node would not give (their rows are not held)."""
    if not states:
        return ""
    shown = ", ".join(states[:5]) + (", ..." if len(states) > 5 else "")
    return f" ({shown}: too large for the node's view_state, or a shard it does not track)"
