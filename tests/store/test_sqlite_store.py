"""The SQLite store: round trips, lookups, account history, read-only opening, atomic
batches, schema versions and index use."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import base58
import orjson
import pytest

from nearrpc.sample import SampleChain
from nearrpc.spec import SchemaViolation
from nearrpc.store import (
    SCHEMA_VERSION,
    ChainReader,
    StoredBlock,
    StoredEpoch,
    StoreError,
    StoreIntegrityError,
    StoreNotFoundError,
    StoreSchemaError,
    open_store,
)
from nearrpc.store.sqlite import SqliteChainReader, staging_path
from nearrpc.store.sqlite_schema import LOOKUP_QUERIES
from tests.store.sqlite_files import dump
from tests.support.stores import create_empty_store

REPO = Path(__file__).resolve().parents[2]
# Hashes no sample block or epoch has: base58 of 32 bytes, as the spec's CryptoHash requires.
OTHER_HASH = base58.b58encode(b"\x02" * 32).decode("ascii")
THIRD_HASH = base58.b58encode(b"\x03" * 32).decode("ascii")




def expected_account(chain: SampleChain, account_id: str, height: int) -> bytes | None:
    """The account's view as of `height`, by brute force over the generated rows."""
    latest: bytes | None = None
    for row in chain.account_states:
        if row.account_id == account_id and row.height <= height:
            latest = row.view_json
    return latest


# -- round trip and lookups --------------------------------------------------------------------


def test_round_trip_returns_the_bytes_written(reader: ChainReader, chain: SampleChain) -> None:
    assert reader.genesis_config_json() == chain.genesis_config_json
    assert reader.client_config_json() == chain.client_config_json
    assert reader.chain_id() == "nearrpc-localnet"
    for block in chain.blocks:
        assert reader.block_by_height(block.height) == block
        assert reader.block_by_hash(block.hash) == block
    for epoch in chain.epochs:
        assert reader.epoch(epoch.epoch_id) == epoch
    for row in chain.account_states:
        assert reader.account_json(row.account_id, row.height) == row.view_json


def test_head_genesis_and_earliest(reader: ChainReader, chain: SampleChain) -> None:
    assert reader.head() == chain.blocks[-1]
    assert reader.genesis_block() == chain.blocks[0]
    assert reader.earliest_block() == chain.blocks[0]


def test_skipped_and_unknown_heights_and_hashes(reader: ChainReader, chain: SampleChain) -> None:
    heights = {block.height for block in chain.blocks}
    skipped = [h for h in range(chain.blocks[-1].height) if h not in heights]
    assert skipped, "the sample chain has skipped heights"
    for height in skipped:
        assert reader.block_by_height(height) is None
    head = chain.blocks[-1].height
    for height in (head + 1, head + 10_000, -1, 2**63, 2**64 - 1):
        assert reader.block_by_height(height) is None
    assert reader.block_by_hash("11111111111111111111111111111111") is None
    assert reader.block_by_hash("not a hash") is None
    assert reader.epoch("11111111111111111111111111111112") is None


def test_account_state_as_of_every_height(reader: ChainReader, chain: SampleChain) -> None:
    accounts = sorted({row.account_id for row in chain.account_states})
    for account_id in accounts:
        for height in range(-1, chain.blocks[-1].height + 2):
            assert reader.account_json(account_id, height) == expected_account(chain, account_id, height), (
                account_id,
                height,
            )
    assert reader.account_json("nobody.localnet", chain.blocks[-1].height) is None
    # heights past SQLite's integer range (the server never asks them; a caller might) find the
    # latest state instead of failing
    for account_id in accounts:
        for height in (2**63 - 1, 2**63, 2**64):
            assert reader.account_json(account_id, height) == expected_account(chain, account_id, height)


def test_account_created_deleted_and_changing(reader: ChainReader, chain: SampleChain) -> None:
    first_rows: dict[str, int] = {}
    deletions: dict[str, int] = {}
    for row in chain.account_states:
        first_rows.setdefault(row.account_id, row.height)
        if row.view_json is None:
            deletions[row.account_id] = row.height
    created = {a: h for a, h in first_rows.items() if h > 0}
    assert created and deletions
    for account_id, height in created.items():
        assert reader.account_json(account_id, height - 1) is None
        assert reader.account_json(account_id, height) is not None
    for account_id, height in deletions.items():
        assert reader.account_json(account_id, height - 1) is not None
        assert reader.account_json(account_id, height) is None
        assert reader.account_json(account_id, 10**9) is None
    alice = [orjson.loads(reader.account_json("alice.localnet", b.height) or b"{}") for b in chain.blocks]
    assert len({view["amount"] for view in alice}) > 3


def test_info(reader: ChainReader, chain: SampleChain) -> None:
    info = reader.info()
    assert info.schema_version == SCHEMA_VERSION
    assert info.chain_id == "nearrpc-localnet"
    assert info.genesis_height == chain.blocks[0].height
    assert info.earliest_height == chain.blocks[0].height
    assert info.latest_height == chain.blocks[-1].height
    assert info.block_count == len(chain.blocks)
    assert info.epoch_count == len(chain.epochs)
    assert info.account_state_count == len(chain.account_states)


def test_counts_follow_new_rows_not_replacements(store_copy: Path, chain: SampleChain) -> None:
    with open_store(store_copy, "write") as writer:
        with writer.batch() as batch:
            batch.put_block(chain.blocks[5])
            batch.put_epoch(chain.epochs[0])
            batch.put_account_state(chain.account_states[0].account_id, chain.account_states[0].height, None)
            batch.put_account_state("zed.localnet", 3, None)
        info = writer.reader().info()
    assert (info.block_count, info.epoch_count, info.account_state_count) == (
        len(chain.blocks),
        len(chain.epochs),
        len(chain.account_states) + 1,
    )


def test_empty_store(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    create_empty_store(path)
    reader = open_store(path, "read")
    try:
        assert reader.head() is None
        assert reader.genesis_block() is None
        assert reader.earliest_block() is None
        assert reader.account_json("alice.localnet", 5) is None
        assert reader.chain_id() is None
        assert reader.genesis_config_json() is None
        assert reader.client_config_json() is None
        assert reader.import_progress() is None
        assert reader.info().block_count == 0
    finally:
        reader.close()


def test_reader_works_from_another_thread(reader: ChainReader, chain: SampleChain) -> None:
    found: list[StoredBlock | None] = []
    thread = threading.Thread(target=lambda: found.append(reader.head()))
    thread.start()
    thread.join()
    assert found == [chain.blocks[-1]]


# -- forks -------------------------------------------------------------------------------------


def fork_of(block: StoredBlock, tag: str) -> StoredBlock:
    """A different block at the same height: same view with another hash."""
    view = orjson.loads(block.view_json)
    new_hash = {"a": OTHER_HASH, "b": THIRD_HASH}[tag]
    view["header"]["hash"] = new_hash
    return replace(block, hash=new_hash, view_json=orjson.dumps(view))


def test_fork_blocks_are_found_by_hash_only(store_copy: Path, chain: SampleChain) -> None:
    original = chain.blocks[40]
    fork = fork_of(original, "a")
    with open_store(store_copy, "write") as writer:
        with writer.batch() as batch:
            batch.put_block(fork, canonical=False)
    reader = open_store(store_copy, "read")
    try:
        assert reader.block_by_hash(fork.hash) == fork
        assert reader.block_by_height(original.height) == original
        assert reader.info().block_count == len(chain.blocks) + 1
    finally:
        reader.close()


def test_new_canonical_block_demotes_the_old_one(store_copy: Path, chain: SampleChain) -> None:
    original = chain.blocks[-1]
    replacement = fork_of(original, "b")
    with open_store(store_copy, "write") as writer:
        with writer.batch() as batch:
            batch.put_block(replacement)
    reader = open_store(store_copy, "read")
    try:
        assert reader.block_by_height(original.height) == replacement
        assert reader.head() == replacement
        assert reader.block_by_hash(original.hash) == original
    finally:
        reader.close()


# -- read-only opening -------------------------------------------------------------------------


def test_read_only_open_refuses_writes(filled_store_file: Path) -> None:
    before = dump(filled_store_file)
    reader = open_store(filled_store_file, "read")
    assert isinstance(reader, SqliteChainReader)
    conn = reader._connection.conn  # the reader's own connection
    try:
        with pytest.raises(sqlite3.OperationalError, match=r"readonly|read-only|query_only"):
            conn.execute("DELETE FROM blocks")
        # Even with the query_only guard lifted, the file was opened read-only.
        conn.execute("PRAGMA query_only = OFF")
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM blocks")
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("CREATE TABLE extra (x)")
    finally:
        reader.close()
    assert dump(filled_store_file) == before


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(StoreNotFoundError, match="no store at"):
        open_store(tmp_path / "absent.db", "read")
    assert list(tmp_path.iterdir()) == []


def test_a_new_store_appears_with_its_first_commit(tmp_path: Path, chain: SampleChain) -> None:
    path = tmp_path / "new.db"
    with open_store(path, "write") as writer:
        assert not path.exists()
        with pytest.raises(RuntimeError), writer.batch() as batch:
            batch.put_client_config(chain.client_config_json)
            raise RuntimeError("abort")
        assert not path.exists() and writer.reader().client_config_json() is None
        with writer.batch() as batch:
            batch.put_client_config(chain.client_config_json)
        assert path.is_file() and not staging_path(path).exists()
        assert writer.reader().client_config_json() == chain.client_config_json
        with writer.batch() as batch:  # later batches land in place
            batch.put_genesis_config(chain.genesis_config_json)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.db"]  # one file: no -wal, -shm


def test_a_writer_that_commits_nothing_leaves_no_store(tmp_path: Path) -> None:
    path = tmp_path / "never.db"
    open_store(path, "write").close()
    assert not path.exists() and not staging_path(path).exists()
    assert list(tmp_path.iterdir()) == []  # no lock file either


def test_a_store_in_a_folder_that_does_not_exist_is_refused_and_no_folder_made(tmp_path: Path) -> None:
    path = tmp_path / "typo" / "store.db"
    with pytest.raises(StoreNotFoundError, match=f"there is no folder {tmp_path / 'typo'}"):
        open_store(path, "write")
    assert list(tmp_path.iterdir()) == []


def test_replace_swaps_the_store_only_when_the_new_one_is_committed(store_copy: Path, chain: SampleChain) -> None:
    before = dump(store_copy)
    with open_store(store_copy, "replace") as writer:
        with pytest.raises(RuntimeError), writer.batch() as batch:
            batch.put_client_config(chain.client_config_json)
            raise RuntimeError("abort")
    assert dump(store_copy) == before
    with open_store(store_copy, "replace") as writer, writer.batch() as batch:
        batch.put_client_config(chain.client_config_json)
    reader = open_store(store_copy, "read")
    try:
        assert reader.info().block_count == 0 and reader.client_config_json() == chain.client_config_json
    finally:
        reader.close()


def test_a_location_with_a_scheme_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"unsupported store location mysql://\.\.\."):
        open_store("mysql://user@host/db", "read")


# -- schema versions ---------------------------------------------------------------------------


def test_unknown_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    create_empty_store(path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE nearrpc_schema SET version = 99")
    conn.commit()
    conn.close()
    for mode in ("read", "write"):
        with pytest.raises(StoreSchemaError, match=r"has store schema version 99, this build reads version 5"):
            open_store(path, mode)


def test_a_store_of_the_first_schema_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    create_empty_store(path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE nearrpc_schema SET version = 1")
    conn.commit()
    conn.close()
    with pytest.raises(StoreSchemaError) as refused:
        open_store(path, "read")
    message = str(refused.value)
    assert "\n" not in message and f"`nearrpc sample {path} --force`" in message and "import its data" in message


def test_database_without_schema_table_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE something (x)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreSchemaError, match="not a nearrpc store"):
        open_store(path, "read")


def test_non_database_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "garbage.db"
    path.write_bytes(b"this is not an sqlite file at all" * 100)
    with pytest.raises(StoreSchemaError, match="not a nearrpc store"):
        open_store(path, "read")


# -- atomic batches ----------------------------------------------------------------------------


def test_batch_that_raises_leaves_the_store_unchanged(store_copy: Path, chain: SampleChain) -> None:
    before = dump(store_copy)
    with open_store(store_copy, "write") as writer:
        with pytest.raises(RuntimeError, match="abort"), writer.batch() as batch:
            batch.put_block(fork_of(chain.blocks[-1], "a"))
            batch.put_account_state("alice.localnet", 500, None)
            batch.put_epoch(StoredEpoch(OTHER_HASH, 90, b"{}"))
            raise RuntimeError("abort")
        # The writer stays usable after a rolled-back batch.
        with writer.batch() as batch:
            batch.put_account_state("zed.localnet", 5, None)
    after = dump(store_copy)
    assert after["account_states"] == sorted([*before["account_states"], ("zed.localnet", 5, None)], key=repr)
    changed = ("account_states", "meta")
    assert {k: v for k, v in after.items() if k not in changed} == {k: v for k, v in before.items() if k not in changed}
    count = dict(after["meta"])["account_state_count"]
    assert int(count) == int(dict(before["meta"])["account_state_count"]) + 1


def test_batch_failing_validation_half_way_leaves_the_store_unchanged(store_copy: Path, chain: SampleChain) -> None:
    before = dump(store_copy)
    bad = orjson.loads(chain.blocks[3].view_json)
    del bad["header"]["hash"]
    with open_store(store_copy, "write") as writer:
        with pytest.raises(SchemaViolation, match="RpcBlockResponse"), writer.batch() as batch:
            batch.put_account_state("alice.localnet", 500, None)
            batch.put_block(replace(chain.blocks[3], view_json=orjson.dumps(bad)))
    assert dump(store_copy) == before


_KILLED_WRITER = """
import os, sys
from nearrpc.store import open_store
writer = open_store(sys.argv[1], "write")
with writer.batch() as batch:
    for height in range(1000, 1100):
        batch.put_account_state("alice.localnet", height, None)
    os._exit(3)  # the process dies in the middle of the batch
"""


def test_killed_writer_leaves_the_store_unchanged(store_copy: Path) -> None:
    before = dump(store_copy)
    result = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITER, str(store_copy)],
        cwd=REPO,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 3, result.stderr.decode()
    assert dump(store_copy) == before
    reader = open_store(store_copy, "read")
    try:
        assert reader.account_json("alice.localnet", 1050) is not None
    finally:
        reader.close()


def test_committed_batch_is_visible_to_an_open_reader(store_copy: Path) -> None:
    reader = open_store(store_copy, "read")
    try:
        with open_store(store_copy, "write") as writer:
            with writer.batch() as batch:
                batch.put_account_state(
                    "zed.localnet",
                    7,
                    b'{"amount":"1","locked":"0",'
                    b'"code_hash":"11111111111111111111111111111111","storage_usage":182,'
                    b'"storage_paid_at":0}',
                )
                assert reader.account_json("zed.localnet", 7) is None  # not committed yet
        assert reader.account_json("zed.localnet", 7) is not None
    finally:
        reader.close()


def test_batches_do_not_nest_and_end_with_their_block(store_copy: Path) -> None:
    with open_store(store_copy, "write") as writer:
        with writer.batch() as batch:
            with pytest.raises(StoreError, match="already open"), writer.batch():
                pass
        with pytest.raises(StoreError, match="batch has ended"):
            batch.put_account_state("zed.localnet", 1, None)


# -- write-side checks -------------------------------------------------------------------------


def test_block_index_fields_must_match_the_header(store_copy: Path, chain: SampleChain) -> None:
    block = chain.blocks[10]
    with open_store(store_copy, "write") as writer:
        for wrong in (
            replace(block, height=block.height + 1),
            replace(block, prev_hash=chain.blocks[5].hash),
            replace(block, epoch_id=OTHER_HASH),
            replace(block, last_final_block=block.hash),
            replace(block, last_ds_final_block=block.hash),
        ):
            with pytest.raises(StoreIntegrityError, match="but header"), writer.batch() as batch:
                batch.put_block(wrong)


def test_writes_are_validated_against_the_spec(store_copy: Path, chain: SampleChain) -> None:
    genesis = orjson.loads(chain.genesis_config_json)
    client = orjson.loads(chain.client_config_json)
    with open_store(store_copy, "write") as writer:
        cases: list[tuple[type[Exception], str, Any]] = [
            (SchemaViolation, "GenesisConfig", lambda b: b.put_genesis_config(
                orjson.dumps({**genesis, "total_supply": 5}))),
            (SchemaViolation, "RpcClientConfigResponse", lambda b: b.put_client_config(
                orjson.dumps({**client, "archive": "yes"}))),
            (SchemaViolation, "AccountId", lambda b: b.put_account_state("Alice", 1, None)),
            (SchemaViolation, "RpcViewAccountResponse", lambda b: b.put_account_state(
                "alice.localnet", 1, b'{"amount":"1"}')),
            (StoreIntegrityError, "must not contain", lambda b: b.put_account_state(
                "alice.localnet", 1, b'{"amount":"1","locked":"0","code_hash":"'
                + b"1" * 32 + b'","storage_usage":1,"block_height":1}')),
            (StoreIntegrityError, "not valid JSON", lambda b: b.put_client_config(b"{")),
            (StoreIntegrityError, "JSON object", lambda b: b.put_client_config(b"[]")),
            (StoreIntegrityError, "not epoch-level", lambda b: b.put_epoch(
                StoredEpoch(OTHER_HASH, 86, b'{"chain_id":"x"}'))),
            (SchemaViolation, "RpcProtocolConfigResponse", lambda b: b.put_epoch(
                StoredEpoch(OTHER_HASH, 86, b'{"epoch_length":"25"}'))),
            (StoreIntegrityError, "refusing a genesis config", lambda b: b.put_genesis_config(
                orjson.dumps({**genesis, "chain_id": "mainnet"}))),
        ]  # fmt: skip
        for error, message, write in cases:
            with pytest.raises(error, match=message), writer.batch() as batch:
                write(batch)


def test_stored_json_is_compacted(tmp_path: Path, chain: SampleChain) -> None:
    pretty = orjson.dumps(orjson.loads(chain.client_config_json), option=orjson.OPT_INDENT_2)
    path = tmp_path / "s.db"
    with open_store(path, "write") as writer, writer.batch() as batch:
        batch.put_client_config(pretty)
    reader = open_store(path, "read")
    try:
        assert reader.client_config_json() == chain.client_config_json
    finally:
        reader.close()


# -- indexes -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(LOOKUP_QUERIES))
def test_lookup_uses_an_index(filled_store_file: Path, name: str) -> None:
    query = LOOKUP_QUERIES[name]
    conn = sqlite3.connect(f"file:{filled_store_file}?mode=ro", uri=True)
    try:
        plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {query}", (1,) * query.count("?"))]
    finally:
        conn.close()
    assert plan, name
    for step in plan:
        assert "TEMP B-TREE" not in step, (name, plan)
        if step.startswith("SEARCH"):
            assert "USING" in step and ("INDEX" in step or "PRIMARY KEY" in step), (name, plan)
        elif name.startswith("contract_state"):
            # the latest row per key, from a range of the primary key, read as it is produced
            assert step in ("CO-ROUTINE (subquery-1)", "SCAN (subquery-1)"), (name, plan)
        else:
            # head/earliest: an ordered walk of the canonical-height index, stopped by LIMIT 1.
            assert step == "SCAN blocks USING INDEX blocks_canonical_height", (name, plan)
            assert "LIMIT 1" in query


def _vm_steps(path: Path, action: Any) -> int:
    reader = open_store(path, "read")
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    try:
        assert isinstance(reader, SqliteChainReader)
        reader._connection.conn.set_progress_handler(count, 1)
        action(reader)
    finally:
        reader.close()
    return steps


def test_lookup_cost_does_not_grow_with_the_chain(store_copy: Path, chain: SampleChain) -> None:
    head = chain.blocks[-1]
    genesis_epoch = chain.epochs[0].epoch_id
    lookups = {
        "head": lambda r: r.head(),
        "earliest": lambda r: r.earliest_block(),
        "by_height": lambda r: r.block_by_height(50),
        "by_hash": lambda r: r.block_by_hash(head.hash),
        "epoch": lambda r: r.epoch(genesis_epoch),
        "account": lambda r: r.account_json("alice.localnet", 60),
        "info": lambda r: r.info(),
    }
    small = {name: _vm_steps(store_copy, action) for name, action in lookups.items()}
    # Grow the store 200-fold with rows around the looked-up ones (raw SQL: speed matters
    # here, not validation).
    conn = sqlite3.connect(store_copy)
    with conn:
        conn.executemany(
            "INSERT INTO account_states VALUES (?, ?, ?)",
            (
                (account, height, b"{}")
                for account in ("alice.localnet", "alicf.localnet", "alicd.localnet")
                for height in range(1000, 21_000)
            ),
        )
        conn.executemany(
            "INSERT INTO blocks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            ((f"fork{i}", i % 100, "x", "x", "x", "x", 0, b"{}") for i in range(20_000)),
        )
    conn.close()
    large = {name: _vm_steps(store_copy, action) for name, action in lookups.items()}
    assert large == small


def test_import_progress_commits_with_its_batch(store_copy: Path) -> None:
    with open_store(store_copy, "write") as writer:
        with pytest.raises(RuntimeError), writer.batch() as batch:
            batch.put_import_progress(b'{"next_height":5}')
            raise RuntimeError("abort")
        assert writer.reader().import_progress() is None
        with writer.batch() as batch:
            batch.put_import_progress(b'{"next_height":5}')
        assert writer.reader().import_progress() == b'{"next_height":5}'
        with writer.batch() as batch:
            batch.put_import_progress(None)
        assert writer.reader().import_progress() is None


def test_version_counts_the_kinds_each_batch_wrote(store_copy: Path, chain: SampleChain) -> None:
    reader = open_store(store_copy, "read")
    try:
        before = reader.version()
        assert reader.version() is before  # unchanged store: the cached counters, no query
        with open_store(store_copy, "write") as writer:
            with writer.batch() as batch:
                batch.put_account_state("zed.localnet", 3, None)
            assert reader.version().changed_since(before) == {"accounts"}
            with writer.batch() as batch:
                batch.put_block(chain.blocks[5])
                batch.put_epoch(chain.epochs[0])
                batch.put_client_config(chain.client_config_json)
            assert reader.version().changed_since(before) == {"accounts", "blocks", "epochs", "configs"}
            middle = reader.version()
            with pytest.raises(RuntimeError), writer.batch() as batch:
                batch.put_account_state("zed.localnet", 4, None)
                raise RuntimeError("abort")
            assert reader.version() == middle  # a rolled-back batch changes nothing
    finally:
        reader.close()


@pytest.mark.parametrize("kind", ["folder", "fifo", "dangling link"])
@pytest.mark.parametrize("mode", ["write", "replace"])
def test_a_store_is_never_put_in_place_of_what_is_not_a_file(
    tmp_path: Path, kind: str, mode: Literal["write", "replace"]
) -> None:
    """An import, a copy or `sample --force` aimed at a folder, a device or FIFO, or a dangling
    link is refused; it stays what it was (as root, /dev/null was once replaced by a store)."""
    target = tmp_path / "target"
    if kind == "folder":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(tmp_path / "missing")
    before = os.lstat(target)
    with pytest.raises(StoreError, match=r"is a folder|is not a regular file|symbolic link to a missing file"):
        open_store(target, mode)
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert [path.name for path in tmp_path.iterdir()] == ["target"]  # no staging file left either
