"""The store's own integrity check, `nearrpc store check`, and what the store can tell of epochs."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest

from nearrpc.sample import SampleChain, write_chain
from nearrpc.store import ChainReader, open_store
from tests.support.cli import nearrpc
from tests.support.sample_facts import sample_facts


def _overwrite_second_half(path: Path) -> None:
    data = bytearray(path.read_bytes())
    half = len(data) // 2
    data[half:] = bytes((i * 31 + 7) % 256 for i in range(len(data) - half))
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("thorough", [False, True])
def test_a_sound_store_passes_with_its_counts(reader: ChainReader, chain: SampleChain, thorough: bool) -> None:
    check = reader.check(thorough=thorough)
    assert check.ok and check.problems == () and check.thorough is thorough
    assert check.counts == {
        "blocks": len(chain.blocks), "epochs": len(chain.epochs), "account_states": len(chain.account_states),
        "access_keys": len(chain.access_keys), "contract_codes": len(chain.contract_codes),
        "contract_data": sum(1 for _ in reader.iter_contract_data()),
        "chunks": sum(1 for _ in reader.iter_chunks()), "transactions": sum(1 for _ in reader.iter_transactions()),
        "receipts": sum(1 for _ in reader.iter_receipts()), "validators": sum(1 for _ in reader.iter_validators()),
    }  # fmt: skip


@pytest.mark.parametrize("thorough", [False, True])
def test_overwritten_pages_are_problems(store_copy: Path, thorough: bool) -> None:
    _overwrite_second_half(store_copy)
    store = open_store(store_copy, "read")  # the first pages (the schema) are intact
    try:
        check = store.check(thorough=thorough)
    finally:
        store.close()
    assert not check.ok and len(check.problems) >= 1
    assert all("\n" not in problem for problem in check.problems)


def test_a_missing_table_and_wrong_counts_are_problems(store_copy: Path) -> None:
    conn = sqlite3.connect(store_copy)
    conn.executescript("DROP TABLE epochs; DELETE FROM blocks WHERE height = 0;")
    conn.close()
    store = open_store(store_copy, "read")
    try:
        quick, full = store.check(thorough=False), store.check(thorough=True)
    finally:
        store.close()
    assert quick.problems == ("table epochs is missing",)
    assert full.problems[0] == "table epochs is missing"
    blocks = len(sample_facts().block_heights)
    assert full.problems[1:] == (f"meta counts {blocks} rows of blocks, the table holds {blocks - 1}",)
    assert full.counts["blocks"] == blocks - 1 and "epochs" not in full.counts


def test_account_count_and_epoch_starts(reader: ChainReader) -> None:
    facts = sample_facts()
    assert reader.account_count() == len(facts.all_accounts)
    for epoch in facts.epochs:
        for height in (epoch.first_height, epoch.last_height):
            block = reader.block_by_height(height)
            assert block is not None and reader.epoch_start_height(block) == epoch.first_height


def test_an_epoch_start_the_store_cannot_see_is_none(tmp_path: Path, chain: SampleChain) -> None:
    """A store that begins inside an epoch, or has a gap before the first block it holds of an
    epoch, cannot tell where that epoch began."""
    facts = sample_facts()
    second, third = facts.epochs[1], facts.epochs[2]
    gap = {third.first_height}  # the third epoch's first block is not stored
    kept = [b for b in chain.blocks if b.height > second.first_height and b.height not in gap]
    path = tmp_path / "partial.sqlite"
    with open_store(path, "write") as writer:
        write_chain(writer, dataclasses.replace(chain, blocks=tuple(kept)))
    store = open_store(path, "read")
    try:
        for height, expected in ((second.last_height, None), (third.last_height, None),
                                 (facts.epochs[3].first_height + 1, facts.epochs[3].first_height)):
            block = store.block_by_height(height)
            assert block is not None and store.epoch_start_height(block) == expected, height
    finally:
        store.close()


def test_the_check_command_prints_counts(filled_store_file: Path, chain: SampleChain) -> None:
    facts = sample_facts()
    done = nearrpc("store", "check", "--store", filled_store_file, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.splitlines() == [
        f"{filled_store_file}: integrity check ok",
        f"chain {facts.chain_id}, heights {facts.genesis_height}..{facts.head_height}",
        f"{len(chain.blocks)} blocks, {len(chain.epochs)} epochs, {len(chain.account_states)} account states, "
        f"{len(chain.access_keys)} access keys, {len(chain.contract_codes)} contract codes, "
        f"{_rows(filled_store_file, 'contract_data')} contract state rows, {_rows(filled_store_file, 'chunks')} "
        f"chunks, {_rows(filled_store_file, 'transactions')} transactions, {_rows(filled_store_file, 'receipts')} "
        f"receipts, {_rows(filled_store_file, 'validators')} epoch validator records",
    ]


def _rows(path: Path, table: str) -> int:
    with sqlite3.connect(path) as conn:
        (rows,) = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(rows)


def test_the_check_command_lists_problems_and_fails(store_copy: Path) -> None:
    _overwrite_second_half(store_copy)
    done = nearrpc("store", "check", "--store", store_copy, timeout=60)
    assert done.returncode == 1, done
    assert done.stdout.splitlines()[0].startswith(f"{store_copy}: integrity check ")
    problems = done.stderr.splitlines()
    assert problems and all(line.startswith("nearrpc store check: ") for line in problems)
    assert "Traceback" not in done.stderr


def test_the_check_command_without_a_store(tmp_path: Path) -> None:
    missing = tmp_path / "missing.sqlite"
    done = nearrpc("store", "check", "--store", missing, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"nearrpc store check: no store at {missing}\n")
    assert not missing.exists()
