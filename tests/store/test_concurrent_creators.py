"""Two processes creating one new SQLite store at once (service/store/file_creation.py).

A creator process here opens a writer for a new store and holds it (the staging file exists,
nothing is committed) until the test tells it to write the sample chain, so the other process
meets it mid-build every time. Before the creation lock, the second creator deleted the first
one's staging file as left over from a killed build, and the first failed with "disk I/O error".
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.cli import REPO, nearrpc

pytestmark = [pytest.mark.live, pytest.mark.deep]

_CREATOR = """
import sys
from nearrpc.sample import sample_chain
from nearrpc.sample.build import write_chain
from nearrpc.store import StoreError, open_store

try:
    with open_store(sys.argv[1], sys.argv[2]) as writer:
        print("creating", flush=True)
        sys.stdin.readline()  # the test says when to go on
        write_chain(writer, sample_chain())
except StoreError as exc:
    print(exc, file=sys.stderr)
    sys.exit(1)
"""


@contextmanager
def creating(store: Path, mode: str = "write") -> Iterator[subprocess.Popen[str]]:
    """A process in the middle of creating `store`; writing `\\n` to its stdin lets it finish."""
    process = subprocess.Popen([sys.executable, "-c", _CREATOR, str(store), mode], cwd=REPO, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        assert process.stdout is not None and process.stdout.readline() == "creating\n"
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def _finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    _, stderr = process.communicate("\n", timeout=60)
    return process.returncode, stderr


def _only_the_store(folder: Path, name: str) -> None:
    assert sorted(path.name for path in folder.iterdir()) == [name]  # no staging file, no lock file


def test_a_creator_that_gives_up_waiting_says_so_in_one_line_and_the_first_one_lands(tmp_path: Path) -> None:
    store = tmp_path / "new.sqlite"
    source = tmp_path / "source" / "sample.sqlite"
    source.parent.mkdir()
    assert nearrpc("sample", source).returncode == 0
    with creating(store) as first:
        second = nearrpc("store", "copy", source, store, "--store-timeout", "0.5")
        assert second.returncode != 0 and second.stdout == ""
        assert second.stderr == (
            f"nearrpc store copy: another writer is creating the store {store}; gave up waiting for it after "
            "0.5 s (the store timeout)\n"
        )
        assert _finish(first) == (0, "")
    checked = nearrpc("store", "check", "--store", store)
    assert checked.returncode == 0, checked.stderr
    _only_the_store(tmp_path / "source", "sample.sqlite")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["new.sqlite", "source"]


def test_two_samples_started_together_both_succeed(tmp_path: Path) -> None:
    """The second waits for the first, then builds its own (the sample replaces a store)."""
    store = tmp_path / "sample.sqlite"
    for _ in range(3):
        store.unlink(missing_ok=True)
        command = [sys.executable, "-m", "nearrpc", "sample", str(store)]
        started = [subprocess.Popen(command, cwd=REPO, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                   for _ in range(2)]  # fmt: skip
        outcomes = [(process.wait(timeout=120), process.communicate()[1]) for process in started]
        for code, stderr in outcomes:
            assert "disk I/O error" not in stderr and "Traceback" not in stderr, outcomes
            # both build it, or the one that looked after the other had finished is told it exists
            exists = f"nearrpc sample: {store} exists (use --force to replace it)\n"
            assert (code, stderr) == (0, "") or (code, stderr) == (2, exists), outcomes
        assert nearrpc("store", "check", "--store", store).returncode == 0
        _only_the_store(tmp_path, "sample.sqlite")


def test_a_file_put_at_the_path_while_a_store_is_built_is_not_replaced(tmp_path: Path) -> None:
    store = tmp_path / "new.sqlite"
    with creating(store) as creator:
        store.write_bytes(b"the operator's own file\n")
        code, stderr = _finish(creator)
    assert code == 1
    refused = f"{store} appeared while this store was being built; refusing to replace it (it is left as it is)\n"
    assert stderr == refused
    assert store.read_bytes() == b"the operator's own file\n"
    _only_the_store(tmp_path, "new.sqlite")


def test_replace_mode_waits_for_a_creator_and_then_replaces(tmp_path: Path) -> None:
    store = tmp_path / "new.sqlite"
    with creating(store) as first, creating_after(store) as second:
        assert _finish(first) == (0, "")
        assert _finish(second) == (0, "")
    assert nearrpc("store", "check", "--store", store).returncode == 0
    _only_the_store(tmp_path, "new.sqlite")


@contextmanager
def creating_after(store: Path) -> Iterator[subprocess.Popen[str]]:
    """A replacing creator started while another one holds the store: it waits (no output yet)."""
    process = subprocess.Popen([sys.executable, "-c", _CREATOR, str(store), "replace"], cwd=REPO, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
