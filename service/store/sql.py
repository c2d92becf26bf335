"""What the SQLite and PostgreSQL stores do alike over the same layout (`layout.py`): a
`ChainReader` and the part of a `WriteBatch` that does not depend on how rows reach the engine.

A backend supplies the primitives (run a named lookup, count, scan, list its tables, execute a
write) and its SQL texts; the meaning of every lookup and write is here, once."""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any, ClassVar, Final

from nearrpc.store import checks
from nearrpc.store.base import (
    StoreCheck,
    StoredBlock,
    StoredEpoch,
    StoreError,
    StoreInfo,
    StoreIntegrityError,
    access_key_order,
)
from nearrpc.store.layout import (
    ACCOUNT_COUNT,
    BLOCK_COLUMNS,
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
    TABLES,
    VERSION_KEYS,
    block_from_row,
    epoch_from_row,
    height_in_range,
    info_from,
    prefix_end,
)

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
            yield str(key)[len(KEPT_ANSWER_PREFIX):], str(answer).encode()

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
