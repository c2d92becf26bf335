"""What the SQLite and PostgreSQL stores do alike over the same layout (`layout.py`): a
`ChainReader` and the part of a `WriteBatch` that does not depend on how rows reach the engine.

A backend supplies the primitives (run a named lookup, count, scan, list its tables, execute a
write) and its SQL texts; the meaning of every lookup and write is here, once."""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any, ClassVar, Final, TypeVar

import orjson

from nearrpc.store import checks
from nearrpc.store.base import (
    StoreCheck,
    StoredBlock,
    StoredChunk,
    StoredEpoch,
    StoredReceipt,
    StoredTransaction,
    StoredValidators,
    StoreError,
    StoreInfo,
    StoreIntegrityError,
    access_key_order,
)
from nearrpc.store.layout import (
    ACCOUNT_COUNT,
    BLOCK_COLUMNS,
    CHUNK_COLUMNS,
    CLIENT_CONFIG,
    COUNTERS,
    EPOCH_COLUMNS,
    FETCHED_TABLE,
    GENESIS_CONFIG,
    GENESIS_HASH,
    IMPORT_PROGRESS,
    INFO_KEYS,
    KEPT_ANSWER_END,
    KEPT_ANSWER_PREFIX,
    MAX_HEIGHT,
    RECEIPT_COLUMNS,
    REWRITES_KEY,
    TABLES,
    TRANSACTION_COLUMNS,
    VALIDATORS_COLUMNS,
    VERSION_KEYS,
    block_from_row,
    chunk_from_row,
    epoch_from_row,
    height_in_range,
    info_from,
    prefix_end,
    receipt_from_row,
    transaction_from_row,
    validators_from_row,
)

T = TypeVar("T")

# At most this many problems are listed by a check (SQLite's own checks stop there too).
MAX_PROBLEMS: Final = 20


class SqlChainReader(ABC):
    """`ChainReader` over a backend's named lookups (its `LOOKUP_QUERIES`)."""

    _has_fetched_table = False  # once seen, the optional table stays

    @abstractmethod
    def _one(self, name: str, *params: object) -> Any:
        """The first row of lookup `name`, or None; StoreError when the engine fails."""

    @abstractmethod
    def _all(self, name: str, *params: object) -> list[Any]:
        """Every row of lookup `name`; StoreError when the engine fails."""

    @abstractmethod
    def _count(self, sql: str, what: str) -> int:
        """The single number `sql` selects; StoreError (naming `what`) when the engine fails."""

    @abstractmethod
    def _scan(self, sql: str) -> Iterator[Any]:
        """Every row `sql` selects, streamed."""

    @abstractmethod
    def _tables(self) -> set[str]:
        """The names of the tables in the store's database or schema."""

    def _storage_problems(self, *, thorough: bool) -> list[str]:
        """What the engine itself finds wrong with the stored pages (StoreError when it cannot
        look); none for an engine that keeps its own pages consistent."""
        return []

    def _meta(self, key: str) -> str | None:
        row = self._one("meta", key)
        return None if row is None else str(row[0])

    def _metas(self, keys: list[str]) -> dict[str, str]:
        """The values stored for `keys` (missing ones left out)."""
        values = {key: self._meta(key) for key in keys}
        return {key: value for key, value in values.items() if value is not None}

    def _config(self, name: str) -> bytes | None:
        row = self._one("config", name)
        return None if row is None else bytes(row[0])

    def chain_id(self) -> str | None:
        return self._meta("chain_id")

    def genesis_config_json(self) -> bytes | None:
        return self._config(GENESIS_CONFIG)

    def client_config_json(self) -> bytes | None:
        return self._config(CLIENT_CONFIG)

    def head(self) -> StoredBlock | None:
        return block_from_row(self._one("head"))

    def block_by_height(self, height: int) -> StoredBlock | None:
        return block_from_row(self._one("block_by_height", height)) if height_in_range(height) else None

    def block_by_hash(self, block_hash: str) -> StoredBlock | None:
        return block_from_row(self._one("block_by_hash", block_hash))

    def block_json_by_height(self, height: int) -> bytes | None:
        """`block_by_height(height).view_json`, reading nothing else of the row."""
        row = self._one("block_json_by_height", height) if height_in_range(height) else None
        return None if row is None else bytes(row[0])

    def block_json_by_hash(self, block_hash: str) -> bytes | None:
        """`block_by_hash(block_hash).view_json`, reading nothing else of the row."""
        row = self._one("block_json_by_hash", block_hash)
        return None if row is None else bytes(row[0])

    def genesis_block(self) -> StoredBlock | None:
        height = self._meta("genesis_height")
        return None if height is None else self.block_by_height(int(height))

    def earliest_block(self) -> StoredBlock | None:
        return block_from_row(self._one("earliest"))

    def epoch(self, epoch_id: str) -> StoredEpoch | None:
        return epoch_from_row(self._one("epoch", epoch_id))

    def account_json(self, account_id: str, height: int) -> bytes | None:
        if height < 0:
            return None
        row = self._one("account", account_id, min(height, MAX_HEIGHT))
        return None if row is None or row[0] is None else bytes(row[0])

    def access_key_json(self, account_id: str, public_key: str, height: int) -> bytes | None:
        if height < 0:
            return None
        row = self._one("access_key", account_id, public_key, min(height, MAX_HEIGHT))
        return None if row is None or row[0] is None else bytes(row[0])

    def access_keys_json(self, account_id: str, height: int) -> list[tuple[str, bytes]]:
        return latest_access_keys(self._all("access_keys", account_id, min(max(height, -1), MAX_HEIGHT)))

    def contract_code(self, code_hash: str) -> bytes | None:
        row = self._one("contract_code", code_hash)
        return None if row is None else bytes(row[0])

    def contract_value(self, account_id: str, key: bytes, height: int) -> bytes | None:
        if height < 0:
            return None
        row = self._one("contract_value", account_id, key, min(height, MAX_HEIGHT))
        return None if row is None or row[0] is None else bytes(row[0])

    def contract_state(self, account_id: str, prefix: bytes, height: int, limit: int) -> list[tuple[bytes, bytes]]:
        if height < 0 or limit <= 0:
            return []
        rows = self._all(*contract_state_lookup(account_id, prefix, height, limit))
        return [(bytes(key), bytes(value)) for key, value in rows]

    def chunk(self, chunk_hash: str) -> StoredChunk | None:
        return chunk_from_row(self._one("chunk", chunk_hash))

    def transaction(self, tx_hash: str, signer_id: str) -> StoredTransaction | None:
        return transaction_from_row(self._one("transaction", tx_hash))  # by hash alone (ChainReader)

    def receipt(self, receipt_id: str) -> StoredReceipt | None:
        return receipt_from_row(self._one("receipt", receipt_id))

    def validators(self, epoch_id: str) -> StoredValidators | None:
        return validators_from_row(self._one("validators", epoch_id))

    def receipts_executed_at(self, height: int) -> list[StoredReceipt]:
        rows = self._all("receipts_at", height) if height_in_range(height) else []
        return receipts_from_rows(rows)

    def transactions_at(self, height: int) -> list[StoredTransaction]:
        rows = self._all("transactions_at", height) if height_in_range(height) else []
        return transactions_from_rows(rows)

    def account_changes(self, height: int) -> list[tuple[str, bytes | None]]:
        rows = self._all("account_changes", height) if height_in_range(height) else []
        return account_changes_from_rows(rows)

    def access_key_changes(self, height: int) -> list[tuple[str, str, bytes | None]]:
        rows = self._all("access_key_changes", height) if height_in_range(height) else []
        return access_key_changes_from_rows(rows)

    def contract_data_changes(self, height: int) -> list[tuple[str, bytes, bytes | None]]:
        rows = self._all("contract_data_changes", height) if height_in_range(height) else []
        return contract_data_changes_from_rows(rows)

    def info(self) -> StoreInfo:
        return info_from(self._metas(INFO_KEYS), self.earliest_block(), self.head())

    def account_count(self) -> int:
        return self._count(ACCOUNT_COUNT, "counting accounts")

    def epoch_start_height(self, block: StoredBlock) -> int | None:
        previous = self._one("previous_epoch_block", block.height, block.epoch_id)
        if previous is None:
            # nothing of another epoch below: known only when the store begins at genesis
            earliest = self.earliest_block()
            genesis_height = self._meta("genesis_height")
            if earliest is None or str(earliest.height) != genesis_height or earliest.epoch_id != block.epoch_id:
                return None
            return earliest.height
        first = block_from_row(self._one("next_block", previous[0]))
        # a gap in the stored heights could hide the epoch's real first block
        return first.height if first is not None and first.prev_hash == previous[1] else None

    # The height a block's header names for its parent (`prev_height`), as SQL over `c.view_json`.
    PREV_HEIGHT_SQL: ClassVar[str]

    def _link_problems(self) -> list[str]:
        """Blocks whose parent, as stored, contradicts them: the block named by their prev_hash is
        stored at another height than their header's prev_height (or not below them). One of
        the two was kept with a hash that is not its own (an upstream that lied to a fork)."""
        sql = (
            f"SELECT c.hash, c.height, p.hash, p.height, {self.PREV_HEIGHT_SQL} FROM blocks c JOIN blocks p "
            f"ON p.hash = c.prev_hash WHERE p.height >= c.height OR p.height <> COALESCE({self.PREV_HEIGHT_SQL}, "
            "p.height)"
        )
        rows = list(itertools.islice(self._scan(sql), MAX_PROBLEMS))
        return [
            f"block {child} at height {height} names as its parent (prev_height {named}) block {parent}, which is "
            f"stored at height {parent_height}: one of the two was kept with a hash not its own (an upstream that "
            "lied to a fork); refetch them"
            for child, height, parent, parent_height, named in rows
        ]

    # Rows of contract_data that no put writes (SQL over `contract_data` selecting account_id,
    # height and why, for the largest key and value): what the engine's types do not rule out.
    DAMAGED_CONTRACT_DATA_SQL: ClassVar[str]

    def _contract_data_problems(self) -> list[str]:
        max_key, max_value = checks.storage_limits()
        sql = self.DAMAGED_CONTRACT_DATA_SQL.format(max_key=int(max_key), max_value=int(max_value))
        rows = list(itertools.islice(self._scan(sql), MAX_PROBLEMS))
        return [f"contract state of {account_id!r} at height {height}: {why}" for account_id, height, why in rows]

    def _record_problems(self, tables: set[str]) -> list[str]:
        """Chunks, transactions and receipts whose block is not stored (or at another height),
        and every record whose index fields disagree with its JSON (the checks a put runs)."""
        problems: list[str] = []
        for table, (what, key) in _RECORD_TABLES.items():
            if table not in tables:
                continue
            sql = (
                f"SELECT r.{key}, r.height, r.block_hash, b.height FROM {table} r LEFT JOIN blocks b "
                "ON b.hash = r.block_hash WHERE b.hash IS NULL OR b.height <> r.height"
            )
            try:
                rows = list(itertools.islice(self._scan(sql), MAX_PROBLEMS))
            except StoreError as exc:
                problems.append(f"cannot check the blocks of the {table}: {exc}")
                continue
            problems += [
                f"{what} {name} at height {height} names block {block_hash}, which "
                + ("is not stored" if stored is None else f"is stored at height {stored}")
                for name, height, block_hash, stored in rows
            ]
        scans: dict[str, Callable[[], Iterator[str]]] = {
            "chunks": lambda: _disagreements(self.iter_chunks(), partial(checks.check_chunk, validate=False)),
            "transactions": lambda: _disagreements(
                self.iter_transactions(), partial(checks.check_transaction, validate=False)
            ),
            "receipts": lambda: _disagreements(self.iter_receipts(), partial(checks.check_receipt, validate=False)),
            "validators": lambda: _disagreements(
                self.iter_validators(), partial(checks.check_validators, validate=False)
            ),
        }
        for table, scan in scans.items():
            if table not in tables or len(problems) >= MAX_PROBLEMS:
                continue
            try:
                problems += itertools.islice(scan(), MAX_PROBLEMS - len(problems))
            except (StoreError, ValueError, TypeError) as exc:  # a row of the wrong types (SQLite keeps any)
                problems.append(f"cannot check the {table}: {exc}")
        return problems

    def check(self, *, thorough: bool) -> StoreCheck:
        try:
            problems = self._storage_problems(thorough=thorough)
            tables = self._tables()
        except StoreError as exc:
            return StoreCheck(thorough, {}, (str(exc),))
        problems += [f"table {table} is missing" for table in TABLES if table not in tables]
        counts: dict[str, int] = {}
        for table, counter in COUNTERS.items():
            if table not in tables:
                continue
            try:
                stored = int(self._meta(counter) or 0)
                if thorough:
                    counted = self._count(f"SELECT count(*) FROM {table}", f"counting the rows of {table}")
                    if counted != stored:
                        problems.append(f"meta counts {stored} rows of {table}, the table holds {counted}")
                    stored = counted
            except (StoreError, ValueError) as exc:
                problems.append(f"cannot count the rows of {table}: {exc}")
                continue
            counts[table] = stored
        if thorough and "blocks" in tables:
            try:
                problems += self._link_problems()
            except StoreError as exc:
                problems.append(f"cannot check the blocks' parent links: {exc}")
        if thorough and "contract_data" in tables:
            try:
                problems += self._contract_data_problems()
            except StoreError as exc:
                problems.append(f"cannot check the contract state rows: {exc}")
        if thorough:
            problems += self._record_problems(tables)
        return StoreCheck(thorough, counts, tuple(problems[:MAX_PROBLEMS]))

    def import_progress(self) -> bytes | None:
        note = self._meta(IMPORT_PROGRESS)
        return None if note is None else note.encode()

    def genesis_hash(self) -> str | None:
        return self._meta(GENESIS_HASH)

    def _fetched_table(self) -> bool:
        if not self._has_fetched_table:
            self._has_fetched_table = FETCHED_TABLE in self._tables()
        return self._has_fetched_table

    def fetched(self, key: str) -> bool:
        return self._fetched_table() and self._one("fetched", key) is not None

    def iter_fetched(self) -> Iterator[str]:
        if self._fetched_table():
            for (key,) in self._scan(f"SELECT key FROM {FETCHED_TABLE}"):
                yield str(key)

    def kept_answer(self, key: str) -> bytes | None:
        answer = self._meta(KEPT_ANSWER_PREFIX + key)
        return None if answer is None else answer.encode()

    def iter_kept_answers(self) -> Iterator[tuple[str, bytes]]:
        sql = f"SELECT key, value FROM meta WHERE key >= '{KEPT_ANSWER_PREFIX}' AND key < '{KEPT_ANSWER_END}'"
        for key, answer in self._scan(sql):
            yield str(key)[len(KEPT_ANSWER_PREFIX) :], str(answer).encode()

    def iter_blocks(self) -> Iterator[tuple[StoredBlock, bool]]:
        for row in self._scan(f"SELECT {BLOCK_COLUMNS}, canonical FROM blocks"):
            block = block_from_row(row[:7])
            assert block is not None
            yield block, bool(row[7])

    def iter_epochs(self) -> Iterator[StoredEpoch]:
        for row in self._scan(f"SELECT {EPOCH_COLUMNS} FROM epochs"):
            epoch = epoch_from_row(row)
            assert epoch is not None
            yield epoch

    def iter_account_states(self) -> Iterator[tuple[str, int, bytes | None]]:
        for account_id, height, view in self._scan("SELECT account_id, height, view_json FROM account_states"):
            yield account_id, height, None if view is None else bytes(view)

    def iter_access_keys(self) -> Iterator[tuple[str, str, int, bytes | None]]:
        for account_id, key, height, view in self._scan(
            "SELECT account_id, public_key, height, view_json FROM access_keys"
        ):
            yield account_id, key, height, None if view is None else bytes(view)

    def iter_contract_codes(self) -> Iterator[tuple[str, bytes]]:
        for code_hash, code in self._scan("SELECT code_hash, code FROM contract_codes"):
            yield code_hash, bytes(code)

    def iter_contract_data(self) -> Iterator[tuple[str, bytes, int, bytes | None]]:
        for account_id, key, height, value in self._scan("SELECT account_id, key, height, value FROM contract_data"):
            yield account_id, bytes(key), height, None if value is None else bytes(value)

    def iter_chunks(self) -> Iterator[StoredChunk]:
        for row in self._scan(f"SELECT {CHUNK_COLUMNS} FROM chunks"):
            chunk = chunk_from_row(row)
            assert chunk is not None
            yield chunk

    def iter_transactions(self) -> Iterator[StoredTransaction]:
        for row in self._scan(f"SELECT {TRANSACTION_COLUMNS} FROM transactions"):
            transaction = transaction_from_row(row)
            assert transaction is not None
            yield transaction

    def iter_receipts(self) -> Iterator[StoredReceipt]:
        for row in self._scan(f"SELECT {RECEIPT_COLUMNS} FROM receipts"):
            receipt = receipt_from_row(row)
            assert receipt is not None
            yield receipt

    def iter_validators(self) -> Iterator[StoredValidators]:
        for row in self._scan(f"SELECT {VALIDATORS_COLUMNS} FROM validators"):
            validators = validators_from_row(row)
            assert validators is not None
            yield validators


# The tables whose rows name the block that included or executed them: (what a row is, its key).
_RECORD_TABLES: Final = {
    "chunks": ("chunk", "chunk_hash"),
    "transactions": ("transaction", "tx_hash"),
    "receipts": ("receipt", "receipt_id"),
}


def _disagreements(records: Iterator[T], check: Callable[[T], object]) -> Iterator[str]:
    """What a put's check refuses in stored records (index fields against the JSON)."""
    for record in records:
        try:
            check(record)
        except StoreIntegrityError as problem:
            yield f"stored {problem}"


def receipts_from_rows(rows: list[Any]) -> list[StoredReceipt]:
    return [receipt for receipt in map(receipt_from_row, rows) if receipt is not None]


def transactions_from_rows(rows: list[Any]) -> list[StoredTransaction]:
    return [transaction for transaction in map(transaction_from_row, rows) if transaction is not None]


def account_changes_from_rows(rows: list[Any]) -> list[tuple[str, bytes | None]]:
    return [(str(account_id), None if view is None else bytes(view)) for account_id, view in rows]


def access_key_changes_from_rows(rows: list[Any]) -> list[tuple[str, str, bytes | None]]:
    """(account, key, view) rows of one height, by account, then key in nearcore's listing order
    (`access_key_order`: the trie's, which the key's text order is not)."""
    found = [(str(account_id), str(key), None if view is None else bytes(view)) for account_id, key, view in rows]
    return sorted(found, key=lambda row: (row[0], access_key_order(row[1])))


def contract_data_changes_from_rows(rows: list[Any]) -> list[tuple[str, bytes, bytes | None]]:
    return [(str(account_id), bytes(key), None if value is None else bytes(value)) for account_id, key, value in rows]


def contract_state_lookup(account_id: str, prefix: bytes, height: int, limit: int) -> tuple[Any, ...]:
    """The named lookup and parameters of `contract_state`: keys from `prefix` up to the first
    key past it (`contract_state_open` when no key is past it)."""
    end = prefix_end(prefix)
    height, limit = min(height, MAX_HEIGHT), min(limit, MAX_HEIGHT)  # both engines bind signed 64 bits
    if end is None:
        return "contract_state_open", account_id, prefix, height, limit
    return "contract_state", account_id, prefix, end, height, limit


def latest_access_keys(rows: list[Any]) -> list[tuple[str, bytes]]:
    """From an account's (public key, height, view) rows at or below a height, each key's
    latest state, deleted ones left out, in nearcore's listing order."""
    latest: dict[str, tuple[int, Any]] = {}
    for key, height, view in rows:
        if key not in latest or height > latest[key][0]:
            latest[key] = (height, view)
    keys = sorted((key for key, (_, view) in latest.items() if view is not None), key=access_key_order)
    return [(key, bytes(latest[key][1])) for key in keys]


# The tables besides blocks whose rows carry the height that wrote them, with the kind of data
# each one's change counter counts (drop_above).
_HEIGHT_ROWS: Final = (
    ("account_states", "accounts"), ("access_keys", "access_keys"), ("contract_data", "contract_data"),
    ("transactions", "transactions"), ("receipts", "receipts"), ("validators", "validators"),
)  # fmt: skip


class SqlWriteBatch(ABC):
    """The writes of one transaction (`WriteBatch`) that both backends make alike: configs,
    the import note, and the counters of what the batch added and touched. Blocks, epochs and
    account states are the backend's (SQLite writes each row, PostgreSQL stages them)."""

    # the backend's SQL, with its parameter marks
    UPSERT_META: ClassVar[str]
    UPSERT_CONFIG: ClassVar[str]
    LOOKUP_META: ClassVar[str]
    DELETE_META: ClassVar[str]
    ADD_TO_META: ClassVar[str]
    CREATE_FETCHED: ClassVar[str]  # the optional table, if it is not there yet
    INSERT_FETCHED: ClassVar[str]  # a mark, kept when it is there already
    DELETE_BLOCK: ClassVar[str]  # one block by its hash, returning its hash when there was one
    MARK: ClassVar[str]  # the engine's parameter mark
    CANONICAL: ClassVar[str]  # the condition that picks canonical blocks (as the partial index states it)

    def __init__(self, *, validate: bool) -> None:
        self._validate = validate
        self._open = True
        self._added = dict.fromkeys(COUNTERS, 0)
        self._touched: set[str] = set()
        self._fetched_table_ready = False

    @abstractmethod
    def _execute(self, sql: str, params: tuple[object, ...]) -> Any:
        """Run one statement in the batch's transaction; StoreError when the engine fails."""

    def _ensure_open(self) -> None:
        if not self._open:
            raise StoreError("this batch has ended; open a new one with writer.batch()")

    @abstractmethod
    def _before_end(self) -> None:
        """Write whatever the backend still holds back of the batch."""

    def _meta(self, key: str) -> str | None:
        row = self._execute(self.LOOKUP_META, (key,)).fetchone()
        return None if row is None else str(row[0])

    def put_genesis_config(self, genesis_config_json: bytes) -> None:
        data, chain_id, genesis_height = checks.check_genesis_config(genesis_config_json, validate=self._validate)
        stored_chain = self._meta("chain_id")
        if stored_chain is not None and stored_chain != chain_id:
            raise StoreIntegrityError(
                f"the store holds chain {stored_chain!r}; refusing a genesis config of chain {chain_id!r}"
            )
        self._touched.add("configs")
        self._execute(self.UPSERT_CONFIG, (GENESIS_CONFIG, data))
        for key, value in (("chain_id", chain_id), ("genesis_height", str(genesis_height))):
            self._execute(self.UPSERT_META, (key, value))

    def put_client_config(self, client_config_json: bytes) -> None:
        data = checks.check_client_config(client_config_json, validate=self._validate)
        self._touched.add("configs")
        self._execute(self.UPSERT_CONFIG, (CLIENT_CONFIG, data))

    def put_import_progress(self, note: bytes | None) -> None:
        if note is None:
            self._execute(self.DELETE_META, (IMPORT_PROGRESS,))
        else:
            self._execute(self.UPSERT_META, (IMPORT_PROGRESS, note.decode()))

    def put_genesis_hash(self, genesis_hash: str) -> None:
        checks.check_block_hash(genesis_hash)
        self._touched.add("configs")
        self._execute(self.UPSERT_META, (GENESIS_HASH, genesis_hash))

    def put_fetched(self, key: str) -> None:
        if not self._fetched_table_ready:
            self._execute(self.CREATE_FETCHED, ())
            self._fetched_table_ready = True
        self._execute(self.INSERT_FETCHED, (key,))

    def put_kept_answer(self, key: str, answer: bytes) -> None:
        self._ensure_open()
        self._execute(self.UPSERT_META, (KEPT_ANSWER_PREFIX + key, answer.decode()))

    def drop_block(self, block_hash: str) -> None:
        """Remove the block with this hash, if stored: a fork's repair of a block an upstream
        lied about (what a fork keeps can be fetched again)."""
        self._ensure_open()
        self._before_end()  # rows still held back are written first: the drop applies after them
        if self._execute(self.DELETE_BLOCK, (block_hash,)).fetchone() is not None:
            self._added["blocks"] -= 1
            self._touched.add("blocks")

    def drop_above(self, height: int, *, code_hashes: Iterable[str] = (), epoch_ids: Iterable[str] = ()) -> int:
        """WriteBatch.drop_above: one DELETE per table, by height (along the by-height indexes),
        then the named codes and epochs; the counts and change counters follow what was removed."""
        self._ensure_open()
        self._before_end()  # rows still held back are written first: the drop applies after them
        mark = self.MARK
        # the chunks table has no height index: the chunks to drop are those the dropped blocks
        # include (new at their height), each removed by its hash
        views = self._execute(f"SELECT view_json FROM blocks WHERE {self.CANONICAL} AND height > {mark}", (height,))
        chunk_hashes = [
            chunk["chunk_hash"]
            for (view,) in views.fetchall()
            for chunk in orjson.loads(bytes(view))["chunks"]
            if chunk.get("height_included", 0) > height
        ]
        deletes = [
            ("blocks", "blocks", f"DELETE FROM blocks WHERE {self.CANONICAL} AND height > {mark}", (height,)),
            *(("chunks", "chunks", f"DELETE FROM chunks WHERE chunk_hash = {mark}", (chunk_hash,))
              for chunk_hash in chunk_hashes),
            *((table, kind, f"DELETE FROM {table} WHERE height > {mark}", (height,)) for table, kind in _HEIGHT_ROWS),
            *(("contract_codes", "codes", f"DELETE FROM contract_codes WHERE code_hash = {mark}", (code_hash,))
              for code_hash in code_hashes),
            *(("epochs", "epochs", f"DELETE FROM epochs WHERE epoch_id = {mark}", (epoch_id,))
              for epoch_id in epoch_ids),
        ]  # fmt: skip
        removed = 0
        for table, kind, sql, params in deletes:
            count = max(self._execute(sql, params).rowcount, 0)
            if count:
                removed += count
                self._added[table] -= count
                self._touched.add(kind)
        rewrites = self._meta(REWRITES_KEY)
        self._execute(self.UPSERT_META, (REWRITES_KEY, str(int(rewrites or 0) + 1)))
        return removed

    def end(self) -> None:
        """Write what waits, add the batch's new rows to the stored counts, bump the change
        counter of every kind it wrote, and close it for further puts."""
        self._before_end()
        bumps = [(added, COUNTERS[table]) for table, added in self._added.items() if added]
        bumps += [(1, VERSION_KEYS[kind]) for kind in sorted(self._touched)]
        for amount, key in bumps:
            self._execute(self.ADD_TO_META, (amount, key))
        self._open = False

    def discard(self) -> None:
        """Close the batch without touching the counts (it is being rolled back)."""
        self._open = False
