"""The PostgreSQL store against a real server: the same answers as the SQLite store, atomic
batches, a store that appears with its first commit, read-only readers, schema versions,
index use, and copies between the backends."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Final

import orjson
import psycopg
import pytest

from nearrpc.sample import SampleChain
from nearrpc.spec import SchemaViolation
from nearrpc.store import (
    SCHEMA_VERSION,
    ChainReader,
    StoredEpoch,
    StoreError,
    StoreIntegrityError,
    StoreNotFoundError,
    StoreSchemaError,
    describe_location,
    open_store,
)
from nearrpc.store.copy import copy_store
from nearrpc.store.postgres import BATCH_QUERIES, LOOKUP_QUERIES
from tests.store.sqlite_files import contents, without_counters
from tests.store.sqlite_files import dump as sqlite_dump
from tests.store.test_sqlite_store import OTHER_HASH, expected_account, fork_of
from tests.support.postgres import PostgresServer, dump

REPO = Path(__file__).resolve().parents[2]


def test_answers_equal_the_sqlite_stores(pg_reader: ChainReader, reader: ChainReader, chain: SampleChain) -> None:
    assert pg_reader.info() == reader.info()
    assert pg_reader.version() == reader.version()
    assert pg_reader.genesis_config_json() == chain.genesis_config_json
    assert pg_reader.client_config_json() == chain.client_config_json
    assert (pg_reader.head(), pg_reader.genesis_block(), pg_reader.earliest_block()) == (
        chain.blocks[-1], chain.blocks[0], chain.blocks[0])
    for block in chain.blocks:
        assert pg_reader.block_by_height(block.height) == block
        assert pg_reader.block_by_hash(block.hash) == block
    for epoch in chain.epochs:
        assert pg_reader.epoch(epoch.epoch_id) == epoch
    for height in (-1, chain.blocks[-1].height + 1, 2**63, 2**64 - 1):
        assert pg_reader.block_by_height(height) is None
    assert pg_reader.block_by_hash("not a hash") is None
    accounts = sorted({row.account_id for row in chain.account_states})
    for account_id in accounts:
        for height in (-1, *range(0, chain.blocks[-1].height + 2, 3), 2**63, 2**64):
            assert pg_reader.account_json(account_id, height) == expected_account(chain, account_id, height)
    for account_id in accounts:
        for height in (chain.blocks[0].height, chain.blocks[-1].height):
            keys = reader.access_keys_json(account_id, height)
            assert pg_reader.access_keys_json(account_id, height) == keys
            for public_key, view in keys:
                assert pg_reader.access_key_json(account_id, public_key, height) == view
    for code_hash, code in chain.contract_codes:
        assert pg_reader.contract_code(code_hash) == code == reader.contract_code(code_hash)
    for scan in ("iter_blocks", "iter_epochs", "iter_account_states", "iter_access_keys", "iter_contract_codes"):
        assert sorted(getattr(pg_reader, scan)(), key=repr) == sorted(getattr(reader, scan)(), key=repr), scan


def test_the_tables_hold_what_sqlites_hold(filled: str, filled_store_file: Path) -> None:
    assert dump(filled) == sqlite_dump(filled_store_file)


@pytest.mark.parametrize("name", sorted(LOOKUP_QUERIES))
def test_lookup_uses_an_index(filled: str, name: str) -> None:
    """Each lookup can be answered from an index (sequential scans are disabled so the tiny
    sample tables do not make a scan the cheaper plan), and never sorts."""
    query = LOOKUP_QUERIES[name]
    typed = {
        "metas": (["chain_id"],),
        "block_by_height": (5,),
        "block_json_by_height": (5,),
        "account": ("x", 5),
        "access_key": ("x", "y", 5),
        "access_keys": ("x", 5),
        "previous_epoch_block": (50, "x"),
        "next_block": (50,),
        "contract_value": ("x", b"k", 5),
        "contract_state": ("x", b"k", b"l", 5, 10),
        "contract_state_open": ("x", b"k", 5, 10),
        "transactions_at": (5,),
        "receipts_at": (5,),
        "account_changes": (5,),
        "access_key_changes": (5,),
        "contract_data_changes": (5,),
    }
    params = typed.get(name, ("x",) * query.count("%s"))
    with psycopg.connect(filled, autocommit=True) as conn:
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(row[0] for row in conn.execute(f"EXPLAIN {query}", params))
    if name in _ONE_HEIGHT:
        # the rows of one height, found through its by-height index; a sort of those few rows
        # (a bitmap scan's) costs the same however long the chain
        assert f"{_ONE_HEIGHT[name]}_by_height" in plan and "Index Cond: (height = " in plan, (name, plan)
        assert "Seq Scan" not in plan, (name, plan)
        return
    assert "Index" in plan and "Seq Scan" not in plan and "Sort" not in plan, (name, plan)


# The lookups of the rows written at one height, by the table each reads.
_ONE_HEIGHT: Final = {
    "transactions_at": "transactions", "receipts_at": "receipts", "account_changes": "account_states",
    "access_key_changes": "access_keys", "contract_data_changes": "contract_data",
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(BATCH_QUERIES))
def test_batched_lookup_uses_an_index(filled: str, name: str) -> None:
    """The serving reader's many-keys lookups too: every key through the index, no sort."""
    params = {
        "blocks_by_height": ([5, 6, 7],),
        "blocks_by_hash": (["x", "y"],),
        "accounts": (["x", "y"], [5, 6]),
        "contract_values": (["x", "y"], [b"k", b"l"], [5, 6]),
    }[name]
    with psycopg.connect(filled, autocommit=True) as conn:
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(row[0] for row in conn.execute(f"EXPLAIN {BATCH_QUERIES[name]}", params))
    assert "Index" in plan and "Seq Scan" not in plan and "Sort" not in plan, (name, plan)


def test_counts_follow_new_rows_not_replacements(pg_copy: str, chain: SampleChain) -> None:
    with open_store(pg_copy, "write") as writer:
        with writer.batch() as batch:
            batch.put_block(chain.blocks[5])
            batch.put_epoch(chain.epochs[0])
            batch.put_account_state(chain.account_states[0].account_id, chain.account_states[0].height, None)
            batch.put_account_state("zed.localnet", 3, None)
        info = writer.reader().info()
    assert (info.block_count, info.epoch_count, info.account_state_count) == (
        len(chain.blocks), len(chain.epochs), len(chain.account_states) + 1)


def test_forks_and_demotion(pg_copy: str, chain: SampleChain) -> None:
    fork = fork_of(chain.blocks[40], "a")
    replacement = fork_of(chain.blocks[-1], "b")
    with open_store(pg_copy, "write") as writer, writer.batch() as batch:
        batch.put_block(fork, canonical=False)
        batch.put_block(replacement)
    reader = open_store(pg_copy, "read")
    try:
        assert reader.block_by_hash(fork.hash) == fork
        assert reader.block_by_height(fork.height) == chain.blocks[40]
        assert reader.head() == replacement == reader.block_by_height(replacement.height)
        assert reader.block_by_hash(chain.blocks[-1].hash) == chain.blocks[-1]
    finally:
        reader.close()


def test_readers_cannot_write(filled: str) -> None:
    before = dump(filled)
    reader = open_store(filled, "read")
    try:
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            reader._conn.execute("DELETE FROM blocks")  # type: ignore[attr-defined]
    finally:
        reader.close()
    assert dump(filled) == before


def test_a_new_store_appears_with_its_first_commit(postgres: PostgresServer, chain: SampleChain) -> None:
    url = postgres.create_database()
    with pytest.raises(StoreNotFoundError, match="no nearrpc store in PostgreSQL database"):
        open_store(url, "read")
    open_store(url, "write").close()  # a writer that commits nothing leaves nothing
    assert dump(url) == {}
    with open_store(url, "write") as writer:
        with pytest.raises(RuntimeError), writer.batch() as batch:
            batch.put_client_config(chain.client_config_json)
            raise RuntimeError("abort")
        assert dump(url) == {}
        with writer.batch() as batch:
            batch.put_client_config(chain.client_config_json)
        with writer.batch() as batch:
            batch.put_genesis_config(chain.genesis_config_json)
    reader = open_store(url, "read")
    try:
        assert (reader.client_config_json(), reader.chain_id()) == (chain.client_config_json, "nearrpc-localnet")
        assert reader.version().configs == 2
    finally:
        reader.close()


def test_replace_takes_effect_with_its_commit(pg_copy: str, chain: SampleChain) -> None:
    before = dump(pg_copy)
    with open_store(pg_copy, "replace") as writer:
        with pytest.raises(RuntimeError), writer.batch() as batch:
            batch.put_client_config(chain.client_config_json)
            raise RuntimeError("abort")
    assert dump(pg_copy) == before
    with open_store(pg_copy, "replace") as writer, writer.batch() as batch:
        batch.put_client_config(chain.client_config_json)
    reader = open_store(pg_copy, "read")
    try:
        assert reader.info().block_count == 0 and reader.client_config_json() == chain.client_config_json
    finally:
        reader.close()


def test_schema_versions_and_foreign_tables_are_refused(postgres: PostgresServer, pg_copy: str) -> None:
    with psycopg.connect(pg_copy, autocommit=True) as conn:
        conn.execute("UPDATE nearrpc_schema SET version = 1")
    for mode in ("read", "write"):
        with pytest.raises(StoreSchemaError, match=f"schema version 1, this build reads version {SCHEMA_VERSION}"):
            open_store(pg_copy, mode)
    foreign = postgres.create_database("foreign")
    with psycopg.connect(foreign, autocommit=True) as conn:
        conn.execute("CREATE TABLE blocks (id int)")
    for mode in ("read", "write", "replace"):
        with pytest.raises(StoreSchemaError, match=r"holds tables \['blocks'\] but is not a nearrpc store"):
            open_store(foreign, mode)  # type: ignore[call-overload]


def test_failed_batches_leave_the_store_unchanged(pg_copy: str, chain: SampleChain) -> None:
    before = dump(pg_copy)
    bad = orjson.loads(chain.blocks[3].view_json)
    del bad["header"]["hash"]
    with open_store(pg_copy, "write") as writer:
        with pytest.raises(RuntimeError, match="abort"), writer.batch() as batch:
            batch.put_block(fork_of(chain.blocks[-1], "a"))
            batch.put_epoch(StoredEpoch(OTHER_HASH, 90, b"{}"))
            raise RuntimeError("abort")
        with pytest.raises(SchemaViolation, match="RpcBlockResponse"), writer.batch() as batch:
            batch.put_account_state("alice.localnet", 500, None)
            batch.put_block(replace(chain.blocks[3], view_json=orjson.dumps(bad)))
        with pytest.raises(StoreIntegrityError, match="refusing a genesis config"), writer.batch() as batch:
            batch.put_genesis_config(orjson.dumps({**orjson.loads(chain.genesis_config_json), "chain_id": "other"}))
        with pytest.raises(StoreError, match="already open"), writer.batch(), writer.batch():
            pass
    assert dump(pg_copy) == before


_KILLED_WRITER = """
import os, sys
from nearrpc.store import open_store
writer = open_store(sys.argv[1], "write")
with writer.batch() as batch:
    for height in range(1000, 1100):
        batch.put_account_state("alice.localnet", height, None)
    os._exit(3)  # the process dies in the middle of the batch
"""


def test_killed_writer_leaves_the_store_unchanged(pg_copy: str) -> None:
    before = dump(pg_copy)
    result = subprocess.run([sys.executable, "-c", _KILLED_WRITER, pg_copy], cwd=REPO, capture_output=True,
                            timeout=60, check=False)
    assert result.returncode == 3, result.stderr.decode()
    assert dump(pg_copy) == before


def test_committed_batches_are_visible_to_open_readers_with_their_versions(pg_copy: str, chain: SampleChain) -> None:
    reader = open_store(pg_copy, "read")
    try:
        before = reader.version()
        with open_store(pg_copy, "write") as writer:
            with writer.batch() as batch:
                batch.put_account_state("zed.localnet", 7, None)
                batch.put_import_progress(b'{"next_height":5}')
                assert reader.import_progress() is None  # not committed yet
            assert reader.version().changed_since(before) == {"accounts"}
            assert reader.import_progress() == b'{"next_height":5}'
            with writer.batch() as batch:
                batch.put_block(chain.blocks[5])
                batch.put_epoch(chain.epochs[0])
                batch.put_client_config(chain.client_config_json)
                batch.put_import_progress(None)
            assert reader.version().changed_since(before) == {"accounts", "blocks", "epochs", "configs"}
            assert reader.import_progress() is None
    finally:
        reader.close()


# -- copies between backends ---------------------------------------------------------------------


def test_copy_both_ways_keeps_every_row(
    postgres: PostgresServer, filled_store_file: Path, chain: SampleChain, tmp_path: Path
) -> None:
    source = tmp_path / "source.sqlite"
    shutil.copyfile(filled_store_file, source)
    # one epoch with the protocol config a node answered for it, as a recorded import keeps it
    epoch = chain.epochs[0]
    recorded = {**orjson.loads(epoch.config_json), "protocol_version": epoch.protocol_version, "chain_id": "x"}
    with open_store(source, "write") as writer, writer.batch(validate=False) as batch:
        batch.put_epoch(replace(epoch, protocol_config_json=orjson.dumps(recorded)))
    url = postgres.create_database()
    there = copy_store(source, url)
    assert (there.blocks, there.configs) == (there.source.block_count, 2)
    assert there.destination == there.source
    back = tmp_path / "back.sqlite"
    copy_store(url, back)
    # every row, but the change counters: a store counts its own changes (the copy's are 1)
    assert contents(back) == contents(source)
    assert without_counters(dump(url)) == contents(source)
    with contextlib.closing(open_store(back, "read")) as reader:
        assert reader.epoch(epoch.epoch_id) == replace(epoch, protocol_config_json=orjson.dumps(recorded))
    # copying the same chain again adds nothing
    again = copy_store(source, url)
    assert again.destination == there.source


def test_copy_refuses_another_chain(postgres: PostgresServer, filled_store_file: Path, chain: SampleChain) -> None:
    url = postgres.create_database()
    other = orjson.dumps({**orjson.loads(chain.genesis_config_json), "chain_id": "other-chain"})
    with open_store(url, "write") as writer, writer.batch() as batch:
        batch.put_genesis_config(other)
    before = dump(url)
    with pytest.raises(StoreError, match="holds chain 'other-chain', the source chain 'nearrpc-localnet'"):
        copy_store(filled_store_file, url)
    assert dump(url) == before


def test_locations_never_show_a_password() -> None:
    assert describe_location("postgresql://alice:s3cr%40t@db.example:5433/chain?sslmode=require") == (
        "postgresql://alice:***@db.example:5433/chain?sslmode=require")
    assert describe_location("postgres://bob:pw@/chain?host=/run/pg&password=again") == (
        "postgres://bob:***@/chain?host=/run/pg&password=***")
    assert describe_location("postgresql://carol@db/chain") == "postgresql://carol@db/chain"
    assert describe_location("postgresql://postgres:@/postgres?host=/tmp") == "postgresql://postgres:@/postgres?host=/tmp"
    assert describe_location("data/x.sqlite") == "data/x.sqlite"


def test_connection_failures_are_one_line_without_the_password(postgres: PostgresServer) -> None:
    wrong = postgres.url("postgres", password="not-the-password-42")
    with pytest.raises(StoreError) as failure:
        open_store(wrong, "read")
    message = str(failure.value)
    assert "\n" not in message and "not-the-password-42" not in message
    assert message.startswith('PostgreSQL database "postgres" on 127.0.0.1:'), message
    assert "password authentication failed" in message


def test_a_batch_sees_its_own_writes_and_keeps_their_order(postgres: PostgresServer, chain: SampleChain) -> None:
    """Rows are written in chunks; the writer's reader still sees every earlier put, and a
    block replaced twice at one height within a batch ends as the last one put."""
    url = postgres.create_database()
    first, second = fork_of(chain.blocks[-1], "a"), fork_of(chain.blocks[-1], "b")
    with open_store(url, "write") as writer:
        with writer.batch() as batch:
            batch.put_genesis_config(chain.genesis_config_json)
            for block in chain.blocks:
                batch.put_block(block)
            assert writer.reader().block_by_hash(chain.blocks[7].hash) == chain.blocks[7]
            batch.put_block(first)
            batch.put_block(second)  # same height, canonical: demotes `first` within the batch
            batch.put_account_state("zed.localnet", 3, None)
            batch.put_account_state("zed.localnet", 3, None)  # the same key twice: one row
        reader = writer.reader()
        assert reader.block_by_height(second.height) == second == reader.head()
        assert reader.block_by_hash(first.hash) == first
        assert reader.block_by_hash(chain.blocks[-1].hash) == chain.blocks[-1]
        assert reader.info().block_count == len(chain.blocks) + 2
        assert reader.info().account_state_count == 1
