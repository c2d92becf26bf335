"""A recording of chosen accounts says what it does not hold (issue 33, item 4).

Instance A serves the sample chain; `nearrpc import rpc` records a height range and a few of
its accounts; instance B serves the recording. An account B never recorded exists on A: B must
not answer UNKNOWN_ACCOUNT (nor an empty key list) for it, but that it does not hold it, with
nearcore's answer for state of a shard a node does not track. `nearrpc conform` passes against B
for a recorded account, and B's `status` names A's genesis hash.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from nearrpc.nearcore.shard_layout import account_shard_id
from nearrpc.store import ACCOUNTS_CHOSEN, held_account, open_store
from tests.ingest.conftest import call, result
from tests.support.cli import nearrpc
from tests.support.live_server import LiveServer, running_server
from tests.support.postgres import PostgresServer

pytestmark = pytest.mark.live

FROM, TO = 20, 40
RECORDED = ("alice.localnet", "nobody.localnet")  # nobody.localnet never exists
UNRECORDED = "carol.localnet"  # exists on A from genesis on
A_KEY = "ed25519:" + "1" * 32  # 32 zero bytes: a key no account holds


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory, server_a: LiveServer) -> Path:
    store = tmp_path_factory.mktemp("scope") / "recording.sqlite"
    done = nearrpc("import", "rpc", "--url", server_a.url, "--from-height", str(FROM), "--to-height", str(TO),
                   "--accounts", ",".join(RECORDED), "--store", store)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return store


@pytest.fixture(scope="module")
def server_b(recording: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with running_server(recording, tmp_path_factory.mktemp("b") / "serve.log") as server:
        yield server


def _error(url: str, method: str, params: Any) -> tuple[int, dict[str, Any]]:
    status, body = call(url, method, params)
    answer = orjson.loads(body)
    assert "error" in answer, (method, params, body[:300])
    return status, answer["error"]


def _shard_on_a(server_a: LiveServer, account: str) -> int:
    """The shard of the account in A's shard layout (A's genesis config: the sample chain keeps
    one layout throughout)."""
    layout = result(server_a.url, "genesis_config", None)["shard_layout"]
    return account_shard_id(layout, account)


def test_the_account_exists_on_the_node_the_recording_was_made_from(server_a: LiveServer) -> None:
    assert result(server_a.url, "EXPERIMENTAL_view_account", {"account_id": UNRECORDED, "block_id": TO})


def test_an_unrecorded_account_is_answered_as_not_held_by_every_view(
    server_a: LiveServer, server_b: LiveServer
) -> None:
    shard = _shard_on_a(server_a, UNRECORDED)
    reason = f"The node does not track the shard ID {shard} (this store is a recording of chosen accounts"
    at = {"account_id": UNRECORDED, "block_id": TO}
    # the EXPERIMENTAL views have no UNAVAILABLE_SHARD: nearcore folds it into INTERNAL_ERROR (500)
    for method, params in [
        ("EXPERIMENTAL_view_account", at),
        ("EXPERIMENTAL_view_code", at),
        ("EXPERIMENTAL_view_access_key_list", at),
        ("EXPERIMENTAL_view_access_key", {**at, "public_key": A_KEY}),
        ("EXPERIMENTAL_view_state", {**at, "prefix_base64": ""}),
        ("EXPERIMENTAL_call_function", {**at, "method_name": "get_num", "args_base64": ""}),
    ]:
        status, error = _error(server_b.url, method, params)
        assert (status, error["cause"]["name"]) == (500, "INTERNAL_ERROR"), (method, error)
        assert error["cause"]["info"]["error_message"].startswith(reason), error
        assert f"holds no state of {UNRECORDED}" in error["data"]
    # query answers nearcore's UNAVAILABLE_SHARD, with the account's shard
    for request_type, extra in [("view_account", {}), ("view_code", {}), ("view_access_key_list", {}),
                                ("view_access_key", {"public_key": A_KEY}), ("view_state", {"prefix_base64": ""}),
                                ("call_function", {"method_name": "get_num", "args_base64": ""})]:  # fmt: skip
        status, error = _error(server_b.url, "query", {"request_type": request_type, **at, **extra})
        assert (status, error["cause"]["name"]) == (200, "UNAVAILABLE_SHARD"), (request_type, error)
        assert error["cause"]["info"] == {"requested_shard_id": shard}
        assert error["data"].startswith(reason)


def test_recorded_accounts_answer_as_the_node_does_absent_ones_included(
    server_a: LiveServer, server_b: LiveServer
) -> None:
    for account in RECORDED:
        for height in (FROM, TO):
            for method, params in [
                ("EXPERIMENTAL_view_account", {"account_id": account, "block_id": height}),
                ("query", {"request_type": "view_access_key_list", "account_id": account, "block_id": height}),
            ]:
                assert call(server_b.url, method, params) == call(server_a.url, method, params), (method, params)
    _, error = _error(server_b.url, "EXPERIMENTAL_view_account", {"account_id": "nobody.localnet", "block_id": TO})
    assert error["cause"]["name"] == "UNKNOWN_ACCOUNT"


def test_the_recording_names_its_accounts_and_genesis_hash_and_a_copy_keeps_them(
    recording: Path, tmp_path: Path, server_a: LiveServer
) -> None:
    copy = tmp_path / "copy.sqlite"
    done = nearrpc("store", "copy", recording, copy)
    assert done.returncode == 0, done.stderr
    genesis_hash = result(server_a.url, "block", {"sync_checkpoint": "genesis"})["header"]["hash"]
    for store in (recording, copy):
        reader = open_store(store, "read")
        try:
            assert reader.fetched(ACCOUNTS_CHOSEN)
            assert [reader.fetched(held_account(a)) for a in (*RECORDED, UNRECORDED)] == [True, True, False]
            assert reader.genesis_hash() == genesis_hash
            assert reader.genesis_block() is None  # the range starts above it
        finally:
            reader.close()
    checked = nearrpc("store", "check", "--store", copy)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_status_names_the_genesis_hash_the_recording_kept(server_a: LiveServer, server_b: LiveServer) -> None:
    on_a, on_b = result(server_a.url, "status", []), result(server_b.url, "status", [])
    assert on_b["genesis_hash"] == on_a["genesis_hash"]
    assert on_b["node_public_key"] == on_a["node_public_key"]  # derived from the genesis hash
    limitations = httpx.get(f"{server_b.url}/status", timeout=10).json()["nearrpc"]["limitations"]
    assert any("a recording of chosen accounts" in line for line in limitations), limitations


def test_a_store_holding_every_account_still_answers_unknown_account(server_a: LiveServer) -> None:
    _, error = _error(server_a.url, "EXPERIMENTAL_view_account", {"account_id": "nobody.localnet", "block_id": TO})
    assert error["cause"]["name"] == "UNKNOWN_ACCOUNT"
    assert result(server_a.url, "query", {"request_type": "view_access_key_list", "account_id": "nobody.localnet",
                                          "block_id": TO}) == {"keys": [], "block_height": TO,
                                                               "block_hash": result(server_a.url, "block",
                                                                                    {"block_id": TO})["header"]["hash"]}


def test_conform_passes_against_the_recording_for_a_recorded_account(server_b: LiveServer) -> None:
    done = nearrpc("conform", server_b.url, "--account", "alice.localnet", "--json", "--rate", "1000")
    report = json.loads(done.stdout)
    failed = [check for check in report["checks"] if check["violations"]]
    assert done.returncode == 0 and report["violations"] == 0, failed
    assert report["account"] == "viewing account alice.localnet (--account)"
    (unknown,) = [c for c in report["checks"] if c["method"] == "EXPERIMENTAL_view_account"
                  and c["check"] == "unknown account"]  # fmt: skip
    assert unknown["outcome"] == "note" and "does not hold this account" in unknown["note"]
    statuses = [c for c in report["checks"] if c["method"] == "status"]
    assert statuses and all(c["outcome"] == "pass" for c in statuses), statuses


def test_conform_without_an_account_says_which_it_tried(server_b: LiveServer) -> None:
    done = nearrpc("conform", server_b.url, "--rate", "1000")
    assert done.returncode == 0, done.stdout[-3000:]
    assert "no account to view: the endpoint holds none of node" in done.stdout
    assert "name one it holds with --account" in done.stdout


def test_conform_refuses_an_account_the_recording_does_not_hold(server_a: LiveServer, server_b: LiveServer) -> None:
    assert result(server_a.url, "EXPERIMENTAL_view_account", {"account_id": "carol.localnet", "finality": "final"})
    done = nearrpc("conform", server_b.url, "--account", "carol.localnet", "--rate", "1000")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "nearrpc conform: the endpoint does not hold account carol.localnet (--account); name one it holds\n"
    )


def test_conform_without_an_account_views_the_final_blocks_author_on_a_full_store(server_a: LiveServer) -> None:
    done = nearrpc("conform", server_a.url, "--rate", "1000", "--json")
    report = json.loads(done.stdout)
    author = result(server_a.url, "block", {"finality": "final"})["author"]
    assert report["account"] == f"viewing account {author} (the final block's author; name another with --account)"


def test_a_recording_made_before_the_marks_gets_them_from_a_re_run(
    recording: Path, tmp_path: Path, server_a: LiveServer
) -> None:
    old = tmp_path / "old.sqlite"
    shutil.copy(recording, old)
    with sqlite3.connect(old) as db:  # as a build before the marks left it
        db.execute("DROP TABLE fetched")
        db.execute("DELETE FROM meta WHERE key = 'genesis_hash'")
    db.close()
    reader = open_store(old, "read")
    assert (reader.fetched(ACCOUNTS_CHOSEN), reader.genesis_hash()) == (False, None)
    reader.close()
    done = nearrpc("import", "rpc", "--url", server_a.url, "--from-height", str(TO), "--to-height", str(TO),
                   "--accounts", ",".join(RECORDED), "--store", old)  # fmt: skip
    assert done.returncode == 0, done.stderr
    reader = open_store(old, "read")
    try:
        assert reader.fetched(ACCOUNTS_CHOSEN) and reader.fetched(held_account(RECORDED[0]))
        assert reader.genesis_hash() == result(server_a.url, "status", [])["genesis_hash"]
    finally:
        reader.close()


def test_a_recording_into_a_store_of_every_account_adds_no_mark(
    sample_store: Path, tmp_path: Path, server_a: LiveServer
) -> None:
    store = tmp_path / "full.sqlite"
    shutil.copy(sample_store, store)
    done = nearrpc("import", "rpc", "--url", server_a.url, "--from-height", str(TO), "--to-height", str(TO),
                   "--accounts", RECORDED[0], "--store", store)  # fmt: skip
    assert done.returncode == 0, done.stderr
    reader = open_store(store, "read")
    try:
        assert not reader.fetched(ACCOUNTS_CHOSEN)
    finally:
        reader.close()


def test_a_recording_copied_into_postgresql_says_the_same(
    recording: Path, postgres: PostgresServer, server_a: LiveServer, tmp_path: Path
) -> None:
    url = postgres.create_database("recording")
    copied = nearrpc("store", "copy", recording, url)
    assert copied.returncode == 0, copied.stderr
    with running_server(url, tmp_path / "pg.log") as on_pg:
        status, error = _error(on_pg.url, "EXPERIMENTAL_view_account", {"account_id": UNRECORDED, "block_id": TO})
        assert (status, error["cause"]["name"]) == (500, "INTERNAL_ERROR")
        assert f"holds no state of {UNRECORDED}" in error["data"]
        assert result(on_pg.url, "status", [])["genesis_hash"] == result(server_a.url, "status", [])["genesis_hash"]
        params = {"account_id": RECORDED[0], "block_id": TO}
        assert call(on_pg.url, "EXPERIMENTAL_view_account", params) == call(server_a.url, "EXPERIMENTAL_view_account",
                                                                            params)


def test_a_later_run_neither_claims_an_account_it_adds_nor_drops_one_the_store_holds(
    recording: Path, tmp_path: Path, server_a: LiveServer
) -> None:
    """Issue 43 item 7: a run into a store that already holds a recording. An account added
    where blocks were recorded without it would be "no such account" there: the run is refused
    and the store keeps answering that it does not hold it; a run that names no account still
    records the held ones at its blocks, so they are never a row of an earlier height."""
    store = tmp_path / "grown.sqlite"
    shutil.copyfile(recording, store)
    above = (TO + 1, TO + 2)
    added = nearrpc("import", "rpc", "--url", server_a.url, "--from-height", str(above[0]), "--to-height",
                    str(above[1]), "--accounts", UNRECORDED, "--store", store)  # fmt: skip
    assert added.returncode != 0, added.stdout
    assert f"--accounts {UNRECORDED}: " in added.stderr and f"holds blocks {FROM} to {TO}" in added.stderr
    grown = nearrpc("import", "rpc", "--url", server_a.url, "--from-height", str(above[0]), "--to-height",
                    str(above[1]), "--store", store)  # fmt: skip
    assert grown.returncode == 0, grown.stderr
    with running_server(store, tmp_path / "grown.log") as server:
        _, error = _error(server.url, "EXPERIMENTAL_view_account", {"account_id": UNRECORDED, "block_id": FROM})
        assert error["cause"]["name"] == "INTERNAL_ERROR" and "holds no state of" in error["data"], error
        for height in above:
            for method, params in [
                ("EXPERIMENTAL_view_account", {"account_id": "alice.localnet", "block_id": height}),
                ("query", {"request_type": "view_access_key_list", "account_id": "alice.localnet", "block_id": height}),
                ("EXPERIMENTAL_view_account", {"account_id": "nobody.localnet", "block_id": height}),
            ]:
                assert call(server.url, method, params) == call(server_a.url, method, params), (method, params)
    reader = open_store(store, "read")
    try:
        assert reader.fetched(held_account("alice.localnet")) and not reader.fetched(held_account(UNRECORDED))
    finally:
        reader.close()
