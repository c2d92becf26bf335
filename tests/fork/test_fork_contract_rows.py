"""What a fork writes for a contract's storage it fetched at one height (fork/contract_state.py),
on a real SQLite store: the store answers the fetched state at exactly that height, and every
other height answers what it answered before (rows answer "the latest at or below")."""

from __future__ import annotations

from pathlib import Path

from nearrpc.fork.contract_state import Row, state_rows, value_rows
from nearrpc.store import ChainWriter, open_store

ACCOUNT = "token.localnet"


def _write(writer: ChainWriter, rows: list[Row]) -> None:
    with writer.batch() as batch:
        for key, height, value in rows:
            batch.put_contract_data(ACCOUNT, key, height, value)


def test_a_value_kept_at_one_height_changes_no_other_height(tmp_path: Path) -> None:
    with open_store(tmp_path / "fork.sqlite", "write") as writer:
        _write(writer, [(b"k", 10, b"old"), (b"k", 40, b"later")])
        store = writer.reader()
        before = {height: store.contract_value(ACCOUNT, b"k", height) for height in range(0, 50)}
        rows = value_rows(store, ACCOUNT, b"k", 20, b"new")
        assert rows == [(b"k", 20, b"new"), (b"k", 21, b"old")]
        _write(writer, rows)
        after = {height: store.contract_value(ACCOUNT, b"k", height) for height in range(0, 50)}
        assert after == {**before, 20: b"new"}


def test_an_absent_key_kept_where_a_value_stood_is_a_removal_at_that_height_only(tmp_path: Path) -> None:
    with open_store(tmp_path / "fork.sqlite", "write") as writer:
        _write(writer, [(b"k", 10, b"old")])
        store = writer.reader()
        _write(writer, value_rows(store, ACCOUNT, b"k", 30, None))
        assert [store.contract_value(ACCOUNT, b"k", height) for height in (29, 30, 31, 90)] == [
            b"old", None, b"old", b"old"
        ]  # fmt: skip


def test_what_the_store_answers_already_writes_no_row(tmp_path: Path) -> None:
    with open_store(tmp_path / "fork.sqlite", "write") as writer:
        _write(writer, [(b"k", 10, b"same")])
        store = writer.reader()
        assert value_rows(store, ACCOUNT, b"k", 25, b"same") == []
        assert value_rows(store, ACCOUNT, b"never", 25, None) == []  # absent, and no row says otherwise


def test_a_listing_kept_at_one_height_lists_exactly_it_there_and_nothing_new_elsewhere(tmp_path: Path) -> None:
    with open_store(tmp_path / "fork.sqlite", "write") as writer:
        _write(writer, [(b"p/a", 10, b"1"), (b"p/b", 10, b"2"), (b"q", 10, b"outside")])
        store = writer.reader()
        before = {height: store.contract_state(ACCOUNT, b"", height, 100) for height in range(0, 40)}
        rows = state_rows(store, ACCOUNT, b"p/", 20, {b"p/a": b"1", b"p/c": b"3"})
        _write(writer, rows)
        after = {height: store.contract_state(ACCOUNT, b"", height, 100) for height in range(0, 40)}
        assert after[20] == [(b"p/a", b"1"), (b"p/c", b"3"), (b"q", b"outside")]
        assert {height: rows for height, rows in after.items() if height != 20} == {
            height: rows for height, rows in before.items() if height != 20
        }
        assert len(rows) == 4  # p/b removed and p/c added at 20, both restored at 21; p/a untouched


def test_at_a_sandboxed_forks_pin_a_kept_value_holds_above_up_to_the_sandboxs_own_row(tmp_path: Path) -> None:
    """restore_above=False: the sandbox's blocks above the pin inherit the pin's state, and a row
    the sandbox wrote above stands."""
    with open_store(tmp_path / "fork.sqlite", "write") as writer:
        _write(writer, [(b"k", 10, b"old"), (b"k", 40, b"sandbox's")])
        store = writer.reader()
        rows = value_rows(store, ACCOUNT, b"k", 20, b"upstream's", restore_above=False)
        assert rows == [(b"k", 20, b"upstream's")]
        _write(writer, rows)
        assert [store.contract_value(ACCOUNT, b"k", height) for height in (19, 20, 39, 40)] == [
            b"old", b"upstream's", b"upstream's", b"sandbox's"
        ]  # fmt: skip
        listed = state_rows(store, ACCOUNT, b"", 20, {b"j": b"1"}, restore_above=False)
        assert sorted(listed) == [(b"j", 20, b"1"), (b"k", 20, None)]  # nothing at 21
