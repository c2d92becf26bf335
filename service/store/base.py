"""The storage contract: record types, reader and writer interfaces, and store errors.

The store keeps chain data as JSON bytes that are ready to be served; it knows nothing
about JSON-RPC. Request handlers read through `ChainReader`; imports (the sample chain,
genesis files, recorders) write through `ChainWriter` in batches that land whole or not
at all. "Nothing stored" is answered as None by every lookup. A backend implements the
three protocols and raises only `StoreError` (and its subclasses) for its own failures.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final, Protocol, runtime_checkable

import based58

# The layout version of the tables. A store written with another version is refused on open.
# 2: the recorder's progress moved into the store; protocol_config_json is always present.
# 3: access keys per account over heights, and contract code by hash.
# 4: contract state (storage key -> value) per account over heights.
# 5: chunks, transactions and receipts by hash, validators per epoch; per-height change indexes.
SCHEMA_VERSION: Final = 5


# nearcore lists an account's keys in trie order: by the borsh bytes of the key, its type tag
# (ed25519 0, secp256k1 1) then its data.
_KEY_TYPE_TAGS: Final = {"ed25519": 0, "secp256k1": 1}


def access_key_order(public_key: str) -> tuple[int, bytes]:
    """The sort key of a canonical public key in nearcore's listing order."""
    key_type, _, data = public_key.partition(":")
    return _KEY_TYPE_TAGS.get(key_type, len(_KEY_TYPE_TAGS)), based58.b58decode(data.encode("ascii"))


class StoreError(Exception):
    """A store could not be opened, read or written."""


class StoreNotFoundError(StoreError):
    """No store exists at the location."""


class StoreLocationError(StoreError):
    """The location can hold no store: a folder, a device, a link to nothing. Refused the same
    way by every command, whether it reads or writes (the location must change)."""


class StoreUnavailableError(StoreError):
    """The store's server cannot be reached (or stopped answering in time); it may come back."""


class StoreSchemaError(StoreError):
    """The file is not a nearrpc store, or its schema version is not the one this build reads."""


class StoreIntegrityError(StoreError):
    """A write was refused because the data is inconsistent (spec validation errors are raised
    as `nearrpc.spec.SchemaViolation` instead)."""


class ContractStateTooLarge(StoreError):
    """A reader that reads through (a fork) cannot give this contract's storage at this height:
    its upstream refuses the account's state as too large for its view_state (nearcore's
    TooLargeContractState, whatever prefix is asked). A view call there is the upstream's to
    answer (`call_function`); unhandled, it is a StoreError (INTERNAL_ERROR)."""

    def __init__(self, account_id: str, height: int) -> None:
        super().__init__(
            f"the upstream refuses the contract state of {account_id} at height {height} as too large for its "
            "view_state: it cannot be read key by key"
        )
        self.account_id = account_id
        self.height = height


@dataclass(frozen=True, slots=True)
class StoredBlock:
    """One block: the index fields plus the complete `block` result."""

    height: int
    hash: str  # base58
    prev_hash: str
    epoch_id: str
    last_final_block: str  # header.last_final_block
    last_ds_final_block: str  # header.last_ds_final_block
    # The whole `block` result (author, header, chunks) as compact JSON, nearcore key order.
    view_json: bytes


# StoredBlock's index fields: each repeats the header member of the same name.
BLOCK_INDEX_FIELDS: tuple[str, ...] = (
    "height",
    "hash",
    "prev_hash",
    "epoch_id",
    "last_final_block",
    "last_ds_final_block",
)


def block_from_view(view: Mapping[str, Any], view_json: bytes) -> StoredBlock:
    """The StoredBlock of a `block` result: index fields from its header, plus its JSON."""
    header = view["header"]
    return StoredBlock(
        height=header["height"],
        hash=header["hash"],
        prev_hash=header["prev_hash"],
        epoch_id=header["epoch_id"],
        last_final_block=header["last_final_block"],
        last_ds_final_block=header["last_ds_final_block"],
        view_json=view_json,
    )


@dataclass(frozen=True, slots=True)
class StoredEpoch:
    """What an epoch contributes to `EXPERIMENTAL_protocol_config`."""

    epoch_id: str
    protocol_version: int  # the epoch's protocol version
    # The epoch's values that replace the genesis ones in the protocol config (keys from
    # nearcore.views.EPOCH_CONFIG_KEYS) as one compact JSON object.
    config_json: bytes
    # The epoch's whole `EXPERIMENTAL_protocol_config` result as a node answered it (recorded
    # imports), served verbatim when present; None: composed from the genesis config,
    # `config_json` and this build's runtime config for `protocol_version`.
    protocol_config_json: bytes | None = None




@dataclass(frozen=True, slots=True)
class StoredChunk:
    """One chunk as a node serves it, with the block that included it."""

    chunk_hash: str
    block_hash: str  # the block that included it (its header's height_included)
    height: int  # height_included
    shard_id: int
    view_json: bytes  # the whole `chunk` result: {"author", "header", "transactions", "receipts"}


@dataclass(frozen=True, slots=True)
class StoredTransaction:
    """One executed transaction with its outcome."""

    tx_hash: str
    signer_id: str
    block_hash: str  # the block whose chunk included it
    height: int
    shard_id: int  # the signer's shard at that block
    # The EXPERIMENTAL_tx_status result of the executed transaction: final_execution_status,
    # status, transaction, transaction_outcome, receipts_outcome, receipts. `tx` answers it
    # without "receipts".
    view_json: bytes


@dataclass(frozen=True, slots=True)
class StoredReceipt:
    """One executed receipt, with its outcome when known."""

    receipt_id: str
    block_hash: str  # the block in which it was executed
    height: int
    shard_id: int  # the receiver's shard
    view_json: bytes  # the EXPERIMENTAL_receipt result (ReceiptView)
    outcome_json: bytes | None  # its execution outcome (ExecutionOutcomeWithIdView), None if unknown


@dataclass(frozen=True, slots=True)
class StoredValidators:
    """An epoch's validators as of one block."""

    epoch_id: str
    height: int  # the last block the view counts (the epoch's last block; the head's for the current epoch)
    view_json: bytes  # the `validators` result (EpochValidatorInfo) for that epoch as of `height`


@dataclass(frozen=True, slots=True)
class StoreOptions:
    """How a backend connects and commits (SQLite uses `timeout` and `durable_commits` only)."""

    pool_size: int = 4  # connections per serving process (plus one that polls the change counters)
    timeout: float = 5.0  # seconds to connect, to wait for a pooled connection, and per statement
    # A writer's commit waits for the disk (or the database server's log flush). False: it does
    # not, which a cache of what can be fetched again chooses (a fork): a power cut may lose the
    # last batches; a killed process loses nothing, and the store is never left inconsistent.
    durable_commits: bool = True


@dataclass(frozen=True, slots=True)
class StoreInfo:
    """A summary of what a store holds (for /status, logs and tests)."""

    schema_version: int
    chain_id: str | None  # None until a genesis config has been written
    genesis_height: int | None
    earliest_height: int | None  # lowest canonical block
    latest_height: int | None  # highest canonical block (the optimistic head)
    block_count: int  # all stored blocks, forks included
    epoch_count: int
    account_state_count: int  # rows of (account, height) states, deletions included
    access_key_count: int = 0  # rows of (account, key, height) states, deletions included
    contract_code_count: int = 0
    contract_data_count: int = 0  # rows of (account, storage key, height) values, removals included
    chunk_count: int = 0
    transaction_count: int = 0
    receipt_count: int = 0
    validators_count: int = 0  # epochs with a validators record


@dataclass(frozen=True, slots=True)
class StoreVersion:
    """Change counters, one per kind of data: every committed batch that writes a kind bumps its
    counter, so a reader that caches answers drops exactly those a change invalidates."""

    configs: int  # genesis and client config
    blocks: int
    epochs: int
    accounts: int
    access_keys: int = 0
    codes: int = 0  # contract code
    contract_data: int = 0  # contract state (storage keys and values)
    chunks: int = 0
    transactions: int = 0  # transactions with their outcomes
    receipts: int = 0  # receipts with their outcomes
    validators: int = 0  # validators per epoch
    # Which store the counters belong to: a server that starts reading another one (a file
    # replaced while served) bumps it, and then everything counts as changed, whatever the
    # new store's counters say.
    generation: int = 0
    # Stored with the counters: bumped by a batch that removes rows a reader may have kept as
    # forever true (`WriteBatch.drop_above`: a block found by its hash), so it counts as another
    # store too.
    rewrites: int = 0

    def changed_since(self, earlier: StoreVersion) -> frozenset[str]:
        """The kinds written since `earlier` (`STORE_KINDS`); all of
        them and ANOTHER_STORE when the counters belong to another store than `earlier`'s, or
        when rows were taken back since."""
        if self.generation != earlier.generation or self.rewrites != earlier.rewrites:
            return frozenset((*STORE_KINDS, ANOTHER_STORE))
        return frozenset(kind for kind in STORE_KINDS if getattr(self, kind) != getattr(earlier, kind))


STORE_KINDS: Final = (
    "configs", "blocks", "epochs", "accounts", "access_keys", "codes", "contract_data", "chunks", "transactions",
    "receipts", "validators",
)  # fmt: skip
# Among the changed kinds: the store is another one (a file replaced while served). What holds
# forever within one store (a block found by its hash) may not hold there: nothing kept is valid.
ANOTHER_STORE: Final = "another store"


@dataclass(frozen=True, slots=True)
class StoreCheck:
    """What an integrity check of a store found."""

    thorough: bool  # the full check (every index against its table, every row counted)
    counts: Mapping[str, int]  # rows per kind: blocks, epochs, account states
    problems: tuple[str, ...]  # empty when the store passed

    @property
    def ok(self) -> bool:
        return not self.problems


class ChainReader(Protocol):
    """Read access to one chain. Every lookup is a single indexed query."""

    def chain_id(self) -> str | None:
        """The chain id of the stored genesis config."""
        ...

    def genesis_config_json(self) -> bytes | None:
        """The `genesis_config` result as compact JSON."""
        ...

    def client_config_json(self) -> bytes | None:
        """The `client_config` result as compact JSON."""
        ...

    def head(self) -> StoredBlock | None:
        """The optimistic head: the highest canonical block, None for an empty store."""
        ...

    def block_by_height(self, height: int) -> StoredBlock | None:
        """The canonical block at `height`; None for skipped or unknown heights."""
        ...

    def block_by_hash(self, block_hash: str) -> StoredBlock | None:
        """Any stored block with this hash, forks included."""
        ...

    def genesis_block(self) -> StoredBlock | None:
        """The canonical block at the genesis height, when the store has it."""
        ...

    def earliest_block(self) -> StoredBlock | None:
        """The lowest canonical block stored."""
        ...

    def epoch(self, epoch_id: str) -> StoredEpoch | None:
        """The epoch record for `epoch_id`."""
        ...

    def account_json(self, account_id: str, height: int) -> bytes | None:
        """The account's view (without block_height/block_hash) as of the block at `height`:
        its latest state written at a height <= `height`. None when the account did not exist
        then, or had been deleted by then."""
        ...

    def access_key_json(self, account_id: str, public_key: str, height: int) -> bytes | None:
        """The access key's view (AccessKeyView: nonce, permission) as of the block at `height`:
        its latest state written at a height <= `height`; None when it did not exist then, or
        had been deleted by then. `public_key` is in its canonical spelling (with its type)."""
        ...

    def access_keys_json(self, account_id: str, height: int) -> list[tuple[str, bytes]]:
        """Every access key of the account as of the block at `height`, (public key, view), in
        the order nearcore lists them (`access_key_order`)."""
        ...

    def contract_code(self, code_hash: str) -> bytes | None:
        """The contract code (wasm bytes) whose hash is `code_hash`."""
        ...

    def contract_value(self, account_id: str, key: bytes, height: int) -> bytes | None:
        """The value of one storage key of the account's contract as of the block at `height`:
        its latest row at a height <= `height`; None when absent then, or removed by then."""
        ...

    def contract_state(self, account_id: str, prefix: bytes, height: int, limit: int) -> list[tuple[bytes, bytes]]:
        """The live (key, value) pairs of the account's contract as of the block at `height`
        whose key starts with `prefix`, ascending by key bytes (nearcore's trie order), at most
        `limit` of them (one range scan that stops there)."""
        ...

    def chunk(self, chunk_hash: str) -> StoredChunk | None:
        """The chunk with this hash."""
        ...

    def transaction(self, tx_hash: str, signer_id: str) -> StoredTransaction | None:
        """The transaction with this hash. A local store finds it by hash alone; the signer is
        what a fork asks its upstream with (what a wrong signer answers is the handler's call)."""
        ...

    def receipt(self, receipt_id: str) -> StoredReceipt | None:
        """The receipt with this id."""
        ...

    def validators(self, epoch_id: str) -> StoredValidators | None:
        """The epoch's validators record."""
        ...

    def receipts_executed_at(self, height: int) -> list[StoredReceipt]:
        """The receipts executed in the block at `height`, by shard id, then receipt id."""
        ...

    def transactions_at(self, height: int) -> list[StoredTransaction]:
        """The transactions included in the chunks of the block at `height`, by shard id, then
        hash (a chunk's own order is its `chunk` view's)."""
        ...

    def account_changes(self, height: int) -> list[tuple[str, bytes | None]]:
        """The account rows written at exactly `height`, (account id, view or None for a
        deletion), ascending by account id."""
        ...

    def access_key_changes(self, height: int) -> list[tuple[str, str, bytes | None]]:
        """The access key rows written at exactly `height`, (account id, public key, view or
        None for a deletion), ascending by account id, then key (`access_key_order`)."""
        ...

    def contract_data_changes(self, height: int) -> list[tuple[str, bytes, bytes | None]]:
        """The contract data rows written at exactly `height`, (account id, storage key, value
        or None for a removal), ascending by account id, then key bytes."""
        ...

    def info(self) -> StoreInfo:
        """Counts and bounds of the stored data."""
        ...

    def account_count(self) -> int:
        """How many accounts have a stored state, deleted ones included. Reads an index whole
        (not a lookup): callers cache it, e.g. until `info().account_state_count` changes."""
        ...

    def epoch_start_height(self, block: StoredBlock) -> int | None:
        """The height of the first block of `block`'s epoch, when the store can tell: it holds
        the canonical block before it (of another epoch), or the epoch starts at the stored
        genesis block. None otherwise (the store begins, or has a gap, inside the epoch)."""
        ...

    def check(self, *, thorough: bool) -> StoreCheck:
        """Check the store's integrity: the quick check reads every page once (a server runs it
        at start); the thorough one also checks every index and counts every row. Never raises
        for a damaged store: what is wrong is in `problems`."""
        ...

    def import_progress(self) -> bytes | None:
        """The note a resumable import left with its last committed batch."""
        ...

    def genesis_hash(self) -> str | None:
        """The genesis block's hash as kept without the block (`WriteBatch.put_genesis_hash`);
        None when none was kept (the block itself may still be stored: `genesis_block`)."""
        ...

    def fetched(self, key: str) -> bool:
        """Whether a fork marked `key` as fetched from its upstream (`WriteBatch.put_fetched`)."""
        ...

    def kept_answer(self, key: str) -> bytes | None:
        """The upstream answer a fork kept verbatim under `key` (`WriteBatch.put_kept_answer`)."""
        ...

    def version(self) -> StoreVersion:
        """The change counters as of now; cheap enough to ask before every request."""
        ...

    # Whole-store scans for `nearrpc store copy`: streamed (bounded memory) in the order the
    # rows are stored, which needs no sort however big the store is (a copy needs no order).

    def iter_blocks(self) -> Iterator[tuple[StoredBlock, bool]]:
        """Every stored block with its canonical flag."""
        ...

    def iter_epochs(self) -> Iterator[StoredEpoch]:
        """Every epoch record."""
        ...

    def iter_account_states(self) -> Iterator[tuple[str, int, bytes | None]]:
        """Every (account id, height, view or None for a deletion)."""
        ...

    def iter_access_keys(self) -> Iterator[tuple[str, str, int, bytes | None]]:
        """Every (account id, public key, height, view or None for a deletion)."""
        ...

    def iter_contract_codes(self) -> Iterator[tuple[str, bytes]]:
        """Every (code hash, code)."""
        ...

    def iter_contract_data(self) -> Iterator[tuple[str, bytes, int, bytes | None]]:
        """Every (account id, storage key, height, value or None for a removal)."""
        ...

    def iter_chunks(self) -> Iterator[StoredChunk]:
        """Every stored chunk."""
        ...

    def iter_transactions(self) -> Iterator[StoredTransaction]:
        """Every stored transaction."""
        ...

    def iter_receipts(self) -> Iterator[StoredReceipt]:
        """Every stored receipt."""
        ...

    def iter_validators(self) -> Iterator[StoredValidators]:
        """Every epoch's validators record."""
        ...

    def iter_fetched(self) -> Iterator[str]:
        """Every key a fork marked as fetched."""
        ...

    def iter_kept_answers(self) -> Iterator[tuple[str, bytes]]:
        """Every answer a fork kept verbatim, (key, answer)."""
        ...

    def close(self) -> None:
        """Release the connection. Further calls fail."""
        ...


class BlockJsonFromBlocks(ABC):
    """`block_json_by_height` / `block_json_by_hash` answered through a serving reader's own block
    lookups, for a backend whose block lookups do more than read a row (PostgreSQL's batch many
    requests into one statement, a fork's fetch what its store lacks): their view alone."""

    @abstractmethod
    async def block_by_height(self, height: int) -> StoredBlock | None: ...

    @abstractmethod
    async def block_by_hash(self, block_hash: str) -> StoredBlock | None: ...

    async def block_json_by_height(self, height: int) -> bytes | None:
        block = await self.block_by_height(height)
        return None if block is None else block.view_json

    async def block_json_by_hash(self, block_hash: str) -> bytes | None:
        block = await self.block_by_hash(block_hash)
        return None if block is None else block.view_json


@runtime_checkable
class Reachability(Protocol):
    """A serving reader on a database server says whether the server answers: `unreachable` is
    why it does not (None while it does), kept current by the reader itself, so a caller may read
    it per request (an attribute, never a round trip)."""

    unreachable: str | None


@runtime_checkable
class CommitListener(Protocol):
    """A serving reader told of a commit made by its own process (the sandbox's chain writer,
    the store's one writer): its next `version()` sees that commit at once, instead of after its
    own check (SQLite's millisecond, PostgreSQL's poll), and its next lookup reads it. Without the
    notice nothing changes: `version()` costs what it did for a server that only reads."""

    def committed(self, version: StoreVersion) -> None:
        """`version`: the counters the writer read back after its commit."""
        ...


class ServingReader(Protocol):
    """What the server reads through: the lookups it needs, awaitable, so a backend that waits
    on the network (PostgreSQL) does not block the event loop. Same semantics as ChainReader."""

    async def genesis_config_json(self) -> bytes | None: ...

    async def client_config_json(self) -> bytes | None: ...

    async def head(self) -> StoredBlock | None: ...

    async def block_by_height(self, height: int) -> StoredBlock | None: ...

    async def block_by_hash(self, block_hash: str) -> StoredBlock | None: ...

    # A block's `block` result alone: what `block` by height or hash answers, without the
    # index fields a reference's resolution needs (a backend may read less for it).
    async def block_json_by_height(self, height: int) -> bytes | None: ...

    async def block_json_by_hash(self, block_hash: str) -> bytes | None: ...

    async def genesis_block(self) -> StoredBlock | None: ...

    async def earliest_block(self) -> StoredBlock | None: ...

    async def epoch(self, epoch_id: str) -> StoredEpoch | None: ...

    async def account_json(self, account_id: str, height: int) -> bytes | None: ...

    async def access_key_json(self, account_id: str, public_key: str, height: int) -> bytes | None: ...

    async def access_keys_json(self, account_id: str, height: int) -> list[tuple[str, bytes]]: ...

    async def contract_code(self, code_hash: str) -> bytes | None: ...

    async def contract_value(self, account_id: str, key: bytes, height: int) -> bytes | None: ...

    def inline_contract_values(self) -> Callable[[str, bytes, int], bytes | None] | None:
        """`contract_value` as a plain call, for a backend whose lookups never wait and run on
        the event loop anyway (SQLite): a view call then runs there too, without a thread hop,
        and one on a worker thread reads there (each thread on a connection of its own), without
        a trip to the loop. None where a lookup may wait (a database, a fork's upstream)."""
        ...

    async def contract_state(
        self, account_id: str, prefix: bytes, height: int, limit: int
    ) -> list[tuple[bytes, bytes]]: ...

    async def chunk(self, chunk_hash: str) -> StoredChunk | None: ...

    async def transaction(self, tx_hash: str, signer_id: str) -> StoredTransaction | None: ...

    async def receipt(self, receipt_id: str) -> StoredReceipt | None: ...

    async def validators(self, epoch_id: str) -> StoredValidators | None: ...

    async def receipts_executed_at(self, height: int) -> list[StoredReceipt]: ...

    async def transactions_at(self, height: int) -> list[StoredTransaction]: ...

    async def account_changes(self, height: int) -> list[tuple[str, bytes | None]]: ...

    async def access_key_changes(self, height: int) -> list[tuple[str, str, bytes | None]]: ...

    async def contract_data_changes(self, height: int) -> list[tuple[str, bytes, bytes | None]]: ...

    async def fetched(self, key: str) -> bool: ...

    async def kept_answer(self, key: str) -> bytes | None: ...

    async def genesis_hash(self) -> str | None: ...

    async def info(self) -> StoreInfo: ...

    async def account_count(self) -> int:
        """Distinct accounts with a stored state (for /metrics)."""
        ...

    async def epoch_start_height(self, block: StoredBlock) -> int | None:
        """The height of the first stored block of `block`'s epoch (for /status)."""
        ...

    def version(self) -> StoreVersion:
        """The change counters, without waiting on anything: the server asks before every
        request. SQLite reads them when its data_version moved; PostgreSQL answers from a copy
        a background poll refreshes every 200 ms (so at most that old), or a commit of this
        process told of since (`CommitListener`)."""
        ...

    async def close(self) -> None: ...


class WriteBatch(Protocol):
    """The writes of one batch. Nothing is visible to readers before the batch commits.

    Every `put_*` validates its value against the spec before it is written, so stores
    filled by any import hold only values the spec accepts.
    """

    def put_genesis_config(self, genesis_config_json: bytes) -> None:
        """Store the `genesis_config` result (also sets the store's chain id and genesis
        height; a store never changes chain)."""
        ...

    def put_client_config(self, client_config_json: bytes) -> None:
        """Store the `client_config` result."""
        ...

    def put_block(self, block: StoredBlock, *, canonical: bool = True) -> None:
        """Store a block; `canonical=False` keeps a fork block reachable by hash only."""
        ...

    def put_epoch(self, epoch: StoredEpoch) -> None:
        """Store (or replace) an epoch record."""
        ...

    def put_account_state(self, account_id: str, height: int, view_json: bytes | None) -> None:
        """Record the account's state as of the block at `height` (AccountView fields without
        block_height/block_hash); None records that the account was deleted at that height."""
        ...

    def put_access_key(self, account_id: str, public_key: str, height: int, view_json: bytes | None) -> None:
        """Record the access key's state (AccessKeyView: nonce, permission) as of the block at
        `height`; None records that it was deleted at that height. The key is stored in its
        canonical spelling."""
        ...

    def put_contract_code(self, code_hash: str, code: bytes) -> None:
        """Store contract code (wasm) under its hash, base58(sha256(code)), which is checked."""
        ...

    def put_contract_data(self, account_id: str, key: bytes, height: int, value: bytes | None) -> None:
        """Record the value of one storage key of the account's contract as of the block at
        `height`; None records that the key was removed at that height. The key and value sizes
        are checked against the largest nearcore's runtime config allows."""
        ...

    def put_chunk(self, chunk: StoredChunk) -> None:
        """Store a chunk (its index fields are checked against its JSON)."""
        ...

    def put_transaction(self, transaction: StoredTransaction) -> None:
        """Store an executed transaction with its outcome (index fields checked against its JSON)."""
        ...

    def put_receipt(self, receipt: StoredReceipt) -> None:
        """Store an executed receipt and its outcome (index fields checked against its JSON)."""
        ...

    def put_validators(self, validators: StoredValidators) -> None:
        """Store an epoch's validators record, replacing the epoch's earlier one."""
        ...

    def drop_block(self, block_hash: str) -> None:
        """Remove the block with this hash when it is stored (a fork's repair of a block an
        upstream lied about: what a fork keeps can be fetched again)."""
        ...

    def put_import_progress(self, note: bytes | None) -> None:
        """Keep (None: drop) a resumable import's note; it commits with the batch's data."""
        ...

    def put_genesis_hash(self, genesis_hash: str) -> None:
        """Keep the genesis block's hash for a store that does not hold that block (a recording
        of later heights), so its `status` can name it."""
        ...

    def put_fetched(self, key: str) -> None:
        """Mark `key` (a fork's name for one upstream answer) as fetched. A fork needs it where
        the other tables cannot tell "fetched, and nothing there" from "never asked": a skipped
        height, an account's state at exactly one height (a lookup answers the latest at or
        below it). The marks live in an optional table, `fetched`, that a store gets with its
        first mark; readers that never ask (every build before it) serve the store as before."""
        ...

    def drop_above(self, height: int, *, code_hashes: Iterable[str] = (), epoch_ids: Iterable[str] = ()) -> int:
        """Take the chain back to the canonical block at `height`: remove every canonical block
        above it, the chunks they include, every row written at a height above it (account, key
        and contract state, transactions, receipts, validators records), and the named contract
        codes and epochs (rows without a height, which the writer that added them names). Readers
        then see another store (`StoreVersion.rewrites`). Returns the number of rows removed. The
        sandbox's revert (`nearrpc.sandbox.chain`): each statement walks a by-height index or a
        primary key, so its cost follows the rows removed, not the store's size (the validators
        table, one row per epoch, is scanned)."""
        ...

    def put_kept_answer(self, key: str, answer: bytes) -> None:
        """Keep an upstream's answer (UTF-8 JSON) verbatim under `key`: what a fork cannot keep as
        rows (a view call's result from its upstream), so a replay answers it offline. Kept in
        `meta` under a reserved prefix (`layout.KEPT_ANSWER_PREFIX`): no new table or schema step."""
        ...


class ChainWriter(Protocol):
    """Write access for imports. A store that did not exist when the writer was opened appears
    at its location only with the writer's first committed batch, so a failed or killed import
    leaves no empty or partial store behind."""

    def batch(self, *, validate: bool = True) -> AbstractContextManager[WriteBatch]:
        """A transaction: commits when the `with` block ends normally, rolls back (leaving the
        store exactly as it was) when it raises or the process dies.

        `validate=False` is for values that come from another nearrpc store (`store copy`) or
        from a generator that validates samples of what it writes: the spec validation is
        skipped, every other check (JSON objects, index fields against the JSON, chain id,
        epoch keys, account ids) still runs.
        """
        ...

    def reader(self) -> ChainReader:
        """A reader over the same connection (sees committed data)."""
        ...

    def close(self) -> None:
        """Release the connection, leaving the store readable by any reader."""
        ...

    def __enter__(self) -> ChainWriter: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...
