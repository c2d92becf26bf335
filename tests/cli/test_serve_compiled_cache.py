"""Compiled contracts kept beside the store, through `nearrpc serve` processes:
- a restarted server (two workers) loads the token's compiled contract from the folder beside
  the store: the entry written by the first server is the one the second reads (the same file,
  never rewritten), and the answers are the same;
- a store in a read-only folder is served all the same, its compiled contracts in memory only,
  said once in the log however many workers start.
In process, with the cache's own counts: tests/methods/test_view_call_compiled_cache.py."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import httpx
import orjson
import pytest

from tests.support.read_only import assert_read_only, read_only_wrapper
from tests.support.sample_facts import SampleFacts, sample_facts
from tests.support.serve_process import serving

pytestmark = pytest.mark.live

FACTS: SampleFacts = sample_facts()


def _balance(url: str) -> bytes:
    holder = next(row.key[1:] for row in FACTS.contract_data if row.account_id == FACTS.token_account
                  and row.key[:1] == b"b")  # fmt: skip
    params = {"request_type": "call_function", "account_id": FACTS.token_account, "method_name": "ft_balance_of",
              "args_base64": base64.b64encode(orjson.dumps({"account_id": holder.decode()})).decode(),
              "block_id": FACTS.head_height}  # fmt: skip
    answer = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "query", "params": params}, timeout=60)
    assert answer.status_code == 200 and b'"result":[' in answer.content, answer.content
    return answer.content


def test_a_restarted_server_reads_the_entry_the_first_one_wrote(sample_store: Path, tmp_path: Path) -> None:
    store = tmp_path / "chain.sqlite"
    shutil.copyfile(sample_store, store)
    folder = tmp_path / "chain.sqlite.compiled"
    with serving("--store", store, "--workers", "2", log=tmp_path / "first.log") as first:
        answered = _balance(first.url)
    (entry,) = folder.glob("*.cwasm")
    written = entry.stat()
    with serving("--store", store, "--workers", "2", log=tmp_path / "second.log") as second:
        for _ in range(4):  # whichever worker answers
            assert _balance(second.url) == answered
    (again,) = folder.glob("*.cwasm")
    # loaded, never compiled and written again (a write replaces the file: a new inode)
    assert again == entry and again.stat().st_ino == written.st_ino


def test_a_store_in_a_read_only_folder_serves_with_compiled_contracts_in_memory(
    sample_store: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    shutil.copyfile(sample_store, folder / "chain.sqlite")
    assert_read_only(folder)
    with serving("--store", folder / "chain.sqlite", "--workers", "2", log=tmp_path / "serve.log",
                 wrapper=read_only_wrapper(folder)) as served:  # fmt: skip
        _balance(served.url)
        lines = served.log_lines()
    said = [line for line in lines if "compiled contracts are kept in memory only" in line]
    assert len(said) == 1, lines
    assert "Read-only file system" in said[0]
    assert sorted(path.name for path in folder.iterdir()) == ["chain.sqlite"]
