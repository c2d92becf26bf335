"""Stores that cannot answer everything: the server starts, answers with nearcore's errors for
what is missing, and says what is missing in /status."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from nearrpc.methods.errors import CATALOGUE, METHOD_CAUSES, Cause
from nearrpc.sample import sample_chain, write_chain
from nearrpc.store import open_store
from tests.store.sqlite_files import drop_tables
from tests.support.live_server import running_server
from tests.support.rpc import call, checked
from tests.support.sample_facts import sample_facts
from tests.support.stores import create_empty_store

pytestmark = pytest.mark.live
# the methods only `serve --sandbox` answers beyond a read-only server's refusal
WRITING_METHODS = frozenset({
    "send_tx", "broadcast_tx_commit", "broadcast_tx_async",
    "sandbox_patch_state", "sandbox_fast_forward", "sandbox_snapshot", "sandbox_revert",
})  # fmt: skip


@pytest.fixture(scope="module")
def genesis_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """A store holding the genesis and client config but no block, as a genesis import leaves it."""
    folder = tmp_path_factory.mktemp("genesis-only")
    chain = sample_chain()
    with open_store(folder / "store.sqlite", "write") as writer, writer.batch() as batch:
        batch.put_genesis_config(chain.genesis_config_json)
        batch.put_client_config(chain.client_config_json)
    with (
        running_server(folder / "store.sqlite", folder / "server.log") as live,
        httpx.Client(base_url=live.url) as http,
    ):
        yield http


@pytest.fixture(scope="module")
def empty(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    folder = tmp_path_factory.mktemp("empty")
    create_empty_store(folder / "store.sqlite")
    with (
        running_server(folder / "store.sqlite", folder / "server.log") as live,
        httpx.Client(base_url=live.url) as http,
    ):
        yield http


def test_genesis_only_store_serves_the_configs(genesis_only: httpx.Client) -> None:
    assert checked(call(genesis_only, "genesis_config"), "genesis_config").status == 200
    assert checked(call(genesis_only, "client_config"), "client_config").status == 200


def test_genesis_only_store_has_no_blocks(genesis_only: httpx.Client) -> None:
    for params in ({"finality": "final"}, {"block_id": 0}, {"sync_checkpoint": "genesis"}):
        answer = checked(call(genesis_only, "block", params), "block")
        assert answer.status == 200 and answer.error["cause"]["name"] == "UNKNOWN_BLOCK"
    earliest = checked(call(genesis_only, "block", {"sync_checkpoint": "earliest_available"}), "block")
    assert earliest.status == 200
    assert earliest.error["cause"] == {"name": "NOT_SYNCED_YET"}  # a unit variant: no info
    assert earliest.error["data"] == "There are no fully synchronized blocks yet"


def test_genesis_only_store_names_the_checkpoint_as_nearcore_does(genesis_only: httpx.Client) -> None:
    """The views and query print a missing checkpoint's block with nearcore's Rust names."""
    unobserved = "Block either has never been observed on the node or has been garbage collected: "
    for method, params in (
        ("EXPERIMENTAL_view_account", {"account_id": "node0"}),
        ("EXPERIMENTAL_view_access_key_list", {"account_id": "node0"}),
        ("query", {"request_type": "view_account", "account_id": "node0"}),
    ):
        answer = checked(call(genesis_only, method, {**params, "sync_checkpoint": "genesis"}), method)
        assert answer.error["cause"] == {
            "name": "UNKNOWN_BLOCK", "info": {"block_reference": {"sync_checkpoint": "genesis"}}
        }, method  # fmt: skip
        assert answer.error["data"] == f"{unobserved}SyncCheckpoint(Genesis)", method


def test_genesis_only_store_protocol_config_and_accounts(genesis_only: httpx.Client) -> None:
    config = checked(
        call(genesis_only, "EXPERIMENTAL_protocol_config", {"sync_checkpoint": "earliest_available"}),
        "EXPERIMENTAL_protocol_config",
    )
    assert config.error["cause"] == {"name": "UNKNOWN_BLOCK", "info": {}}
    assert config.error["data"] == "Block Not Found: EarliestAvailable"
    account = checked(
        call(
            genesis_only, "EXPERIMENTAL_view_account", {"account_id": "node0", "sync_checkpoint": "earliest_available"}
        ),
        "EXPERIMENTAL_view_account",
    )
    assert account.status == 500
    assert account.error["name"] == "INTERNAL_ERROR"
    assert account.error["cause"]["info"] == {"error_message": "There are no fully synchronized blocks on the node yet"}
    assert account.error["data"].startswith("The node reached its limits. Try again later. More details: ")


def test_genesis_only_status_says_what_is_missing(genesis_only: httpx.Client) -> None:
    status = genesis_only.get("/status").json()
    assert status["nearrpc"]["store"]["blocks"] == 0
    assert any("no blocks stored" in gap for gap in status["nearrpc"]["limitations"])
    # what a store without blocks cannot say is left out, not made up
    assert status["chain_id"] == sample_facts().chain_id
    assert not {"sync_info", "protocol_version", "latest_protocol_version", "genesis_hash"} & set(status)
    assert genesis_only.get("/health").status_code == 200


def test_empty_store_answers_internal_errors(empty: httpx.Client) -> None:
    for method in ("genesis_config", "client_config"):
        answer = checked(call(empty, method), method)
        assert answer.status == 500 and answer.error["cause"]["name"] == "INTERNAL_ERROR"
        assert "holds no" in answer.error["cause"]["info"]["error_message"]
    status = empty.get("/status").json()
    assert {gap.split(":")[0] for gap in status["nearrpc"]["limitations"]} >= {
        "no genesis_config stored",
        "no client_config stored",
    }


def test_status_reports_an_unusable_store(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    create_empty_store(store)
    with running_server(store, tmp_path / "server.log") as live, httpx.Client(base_url=live.url) as http:
        store.write_bytes(b"this is not a database any more" * 100)
        health = http.get("/health")
        assert (health.status_code, health.content) == (503, b"")  # nearcore's failed health answer
        assert http.get("/status").status_code == 503
        answer = call(http, "block", {"finality": "final"})
        assert answer.status == 500 and answer.body["error"]["name"] == "INTERNAL_ERROR"
        assert b"Traceback" not in answer.raw


def test_serving_a_file_that_is_not_a_store_fails_in_one_line(tmp_path: Path) -> None:
    not_a_store = tmp_path / "notes.sqlite"
    not_a_store.write_text("not a database\n")
    done = subprocess.run(
        [sys.executable, "-m", "nearrpc", "serve", "--store", str(not_a_store), "--port", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("nearrpc serve: ") and "is not a nearrpc store" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory, sample_store: Path) -> Iterator[httpx.Client]:
    """A server whose store loses its block, epoch and receipt tables while it serves."""
    folder = tmp_path_factory.mktemp("damaged")
    store = folder / "store.sqlite"
    shutil.copyfile(sample_store, store)
    with running_server(store, folder / "server.log") as live, httpx.Client(base_url=live.url) as http:
        drop_tables(store, "blocks", "epochs", "receipts")
        yield http


@pytest.fixture(scope="module")
def large_state(tmp_path_factory: pytest.TempPathFactory, sample_store: Path) -> Iterator[httpx.Client]:
    """A server whose store holds an account with more contract state than the client config's
    trie_viewer_state_size_limit (its storage usage says so)."""
    folder = tmp_path_factory.mktemp("large_state")
    store = folder / "store.sqlite"
    shutil.copyfile(sample_store, store)
    chain = sample_chain()
    limit = orjson.loads(chain.client_config_json)["trie_viewer_state_size_limit"]
    counter = [row for row in chain.account_states if row.account_id == "counter.localnet"][-1]
    view = orjson.loads(counter.view_json or b"{}")
    with open_store(store, "write") as writer, writer.batch() as batch:
        view["storage_usage"] += limit + 1
        batch.put_account_state("large.localnet", counter.height, orjson.dumps(view))
    with running_server(store, folder / "server.log") as live, httpx.Client(base_url=live.url) as http:
        yield http


def test_every_cause_the_catalogue_lists_is_answered_to_some_input(
    http: httpx.Client,
    genesis_only: httpx.Client,
    empty: httpx.Client,
    damaged: httpx.Client,
    large_state: httpx.Client,
) -> None:
    """The README's cause table is the catalogue (tests/methods/test_errors.py); here each
    (method, cause) pair of it comes back from a real server for some request."""
    account = {"account_id": "alice.localnet"}
    nobody = {"account_id": "no.localnet"}
    view_account = {**account, "request_type": "view_account"}
    key = {"public_key": "ed25519:" + "1" * 32}
    function = {"method_name": "get_num", "args_base64": ""}
    prefix = {"prefix_base64": ""}
    transaction = {"tx_hash": "1" * 32, "sender_account_id": "alice.localnet"}
    requests = {
        ("genesis_config", Cause.INTERNAL_ERROR): (empty, None),
        ("client_config", Cause.INTERNAL_ERROR): (empty, None),
        ("block", Cause.UNKNOWN_BLOCK): (http, {"block_id": 10**9}),
        ("block", Cause.NOT_SYNCED_YET): (genesis_only, {"sync_checkpoint": "earliest_available"}),
        ("block", Cause.INTERNAL_ERROR): (damaged, {"finality": "final"}),
        ("EXPERIMENTAL_protocol_config", Cause.UNKNOWN_BLOCK): (http, {"block_id": 10**9}),
        ("EXPERIMENTAL_protocol_config", Cause.INTERNAL_ERROR): (damaged, {"sync_checkpoint": "genesis"}),
        ("EXPERIMENTAL_view_account", Cause.UNKNOWN_BLOCK): (http, {**account, "block_id": 10**9}),
        ("EXPERIMENTAL_view_account", Cause.UNKNOWN_ACCOUNT): (http, {**nobody, "finality": "final"}),
        ("EXPERIMENTAL_view_account", Cause.INTERNAL_ERROR): (damaged, {**account, "finality": "final"}),
        # beyond interface 1.2.14
        ("status", Cause.INTERNAL_ERROR): (empty, None),
        ("gas_price", Cause.UNKNOWN_BLOCK): (http, [10**9]),
        ("gas_price", Cause.INTERNAL_ERROR): (damaged, [None]),
        ("query", Cause.UNKNOWN_BLOCK): (http, {**view_account, "block_id": 10**9}),
        ("query", Cause.NO_SYNCED_BLOCKS): (genesis_only, {**view_account, "sync_checkpoint": "earliest_available"}),
        ("query", Cause.UNKNOWN_ACCOUNT): (http, {**view_account, **nobody, "finality": "final"}),
        ("query", Cause.NO_CONTRACT_CODE): (http, {**account, "request_type": "view_code", "finality": "final"}),
        ("query", Cause.UNAVAILABLE_SHARD): (
            http, {"request_type": "view_global_contract_code", "code_hash": "1" * 32, "finality": "final"},
        ),
        ("query", Cause.TOO_LARGE_CONTRACT_STATE): (
            large_state, {"request_type": "view_state", "account_id": "large.localnet", **prefix, "finality": "final"},
        ),
        ("query", Cause.INTERNAL_ERROR): (damaged, {**view_account, "finality": "final"}),
        ("EXPERIMENTAL_view_code", Cause.UNKNOWN_BLOCK): (http, {**account, "block_id": 10**9}),
        ("EXPERIMENTAL_view_code", Cause.UNKNOWN_ACCOUNT): (http, {**nobody, "finality": "final"}),
        ("EXPERIMENTAL_view_code", Cause.NO_CONTRACT_CODE): (http, {**account, "finality": "final"}),
        ("EXPERIMENTAL_view_code", Cause.INTERNAL_ERROR): (damaged, {**account, "finality": "final"}),
        ("EXPERIMENTAL_view_access_key", Cause.UNKNOWN_BLOCK): (http, {**account, **key, "block_id": 10**9}),
        ("EXPERIMENTAL_view_access_key", Cause.UNKNOWN_ACCESS_KEY): (http, {**account, **key, "finality": "final"}),
        ("EXPERIMENTAL_view_access_key", Cause.INTERNAL_ERROR): (damaged, {**account, **key, "finality": "final"}),
        ("EXPERIMENTAL_view_access_key_list", Cause.UNKNOWN_BLOCK): (http, {**account, "block_id": 10**9}),
        ("EXPERIMENTAL_view_access_key_list", Cause.INTERNAL_ERROR): (damaged, {**account, "finality": "final"}),
        ("EXPERIMENTAL_call_function", Cause.UNKNOWN_BLOCK): (http, {**account, **function, "block_id": 10**9}),
        ("EXPERIMENTAL_call_function", Cause.UNKNOWN_ACCOUNT): (http, {**nobody, **function, "finality": "final"}),
        # alice has no code: the VM's CodeDoesNotExist
        ("EXPERIMENTAL_call_function", Cause.CONTRACT_EXECUTION_ERROR): (
            http, {**account, **function, "finality": "final"},
        ),
        ("EXPERIMENTAL_call_function", Cause.INTERNAL_ERROR): (damaged, {**account, **function, "finality": "final"}),
        ("EXPERIMENTAL_view_state", Cause.UNKNOWN_BLOCK): (http, {**account, **prefix, "block_id": 10**9}),
        ("EXPERIMENTAL_view_state", Cause.UNKNOWN_ACCOUNT): (http, {**nobody, **prefix, "finality": "final"}),
        ("EXPERIMENTAL_view_state", Cause.TOO_LARGE_CONTRACT_STATE): (
            large_state, {"account_id": "large.localnet", **prefix, "finality": "final"},
        ),
        ("EXPERIMENTAL_view_state", Cause.INTERNAL_ERROR): (damaged, {**account, **prefix, "finality": "final"}),
        # issue 30's reads: hashes and ids the sample chain does not hold
        ("chunk", Cause.UNKNOWN_BLOCK): (http, {"block_id": 10**9, "shard_id": 0}),
        ("chunk", Cause.INVALID_SHARD_ID): (http, {"block_id": 10, "shard_id": 99}),
        ("chunk", Cause.UNKNOWN_CHUNK): (http, {"chunk_id": "1" * 32}),
        ("chunk", Cause.INTERNAL_ERROR): (damaged, {"block_id": 10, "shard_id": 0}),
        ("tx", Cause.UNKNOWN_TRANSACTION): (http, {**transaction, "wait_until": "NONE"}),
        ("tx", Cause.TIMEOUT_ERROR): (http, transaction),
        ("tx", Cause.INTERNAL_ERROR): (damaged, transaction),
        ("EXPERIMENTAL_tx_status", Cause.UNKNOWN_TRANSACTION): (http, {**transaction, "wait_until": "NONE"}),
        ("EXPERIMENTAL_tx_status", Cause.TIMEOUT_ERROR): (http, transaction),
        ("EXPERIMENTAL_tx_status", Cause.INTERNAL_ERROR): (damaged, transaction),
        ("EXPERIMENTAL_receipt", Cause.UNKNOWN_RECEIPT): (http, {"receipt_id": "1" * 32}),
        ("EXPERIMENTAL_receipt", Cause.INTERNAL_ERROR): (damaged, {"receipt_id": "1" * 32}),
        ("validators", Cause.UNKNOWN_EPOCH): (http, {"epoch_id": "1" * 31 + "2"}),
        # a block of the head's epoch that is not its last (the head's epoch began at 104)
        ("validators", Cause.VALIDATOR_INFO_UNAVAILABLE): (http, {"block_id": 105}),
        ("validators", Cause.INTERNAL_ERROR): (damaged, [None]),
        ("EXPERIMENTAL_validators_ordered", Cause.UNKNOWN_EPOCH): (http, {"block_id": 10**9}),
        ("EXPERIMENTAL_validators_ordered", Cause.INTERNAL_ERROR): (damaged, [None]),
        ("health", Cause.INTERNAL_ERROR): (damaged, None),
    }  # fmt: skip
    account_changes: dict[str, object] = {"changes_type": "account_changes", "account_ids": ["alice.localnet"]}
    members: dict[str, object]
    for method, members in (("EXPERIMENTAL_changes_in_block", {}), ("block_effects", {}),
                            ("EXPERIMENTAL_changes", account_changes), ("changes", account_changes)):  # fmt: skip
        requests[(method, Cause.UNKNOWN_BLOCK)] = (http, {**members, "block_id": 10**9})
        requests[(method, Cause.NOT_SYNCED_YET)] = (genesis_only, {**members, "sync_checkpoint": "earliest_available"})
        requests[(method, Cause.INTERNAL_ERROR)] = (damaged, {**members, "finality": "final"})
    # a read-only server refuses every send; the other causes of the writing methods need a sandbox
    # chain: tests/sandbox/test_methods_answers.py asks each of them of a fake one
    signed = {"signed_tx_base64": "AAAA"}
    for method in ("send_tx", "broadcast_tx_commit", "broadcast_tx_async"):
        requests[(method, Cause.DOES_NOT_TRACK_SHARD)] = (http, signed)
    sandbox_only = {
        (method, cause) for method, causes in METHOD_CAUSES.items() for cause in causes
        if method in WRITING_METHODS and cause is not Cause.DOES_NOT_TRACK_SHARD
    }  # fmt: skip
    assert set(requests) == {
        (method, cause) for method, causes in METHOD_CAUSES.items() for cause in causes
    } - sandbox_only  # fmt: skip
    for (method, cause), (client, params) in requests.items():
        answer = checked(call(client, method, params), method)
        assert answer.error["cause"]["name"] == cause, (method, cause, answer.raw)
        assert answer.status == CATALOGUE[cause].http_status, (method, cause, answer.status)


def test_a_store_without_access_keys_says_so_rather_than_listing_none(tmp_path: Path) -> None:
    """A store no key was ever written to (saved answers without key lists, say) knows nothing
    of keys: an empty list from it would be made up, so the key methods answer INTERNAL_ERROR
    naming what is missing."""
    without_keys = dataclasses.replace(sample_chain(), access_keys=(), contract_codes=())
    with open_store(tmp_path / "store.sqlite", "write") as writer:
        write_chain(writer, without_keys)
    account = {"account_id": "alice.localnet", "finality": "final"}
    with (
        running_server(tmp_path / "store.sqlite", tmp_path / "server.log") as live,
        httpx.Client(base_url=live.url) as http,
    ):
        for method, params in (
            ("EXPERIMENTAL_view_access_key_list", account),
            ("EXPERIMENTAL_view_access_key", {**account, "public_key": "ed25519:" + "1" * 32}),
            ("query", {**account, "request_type": "view_access_key_list"}),
        ):
            answer = checked(call(http, method, params), method)
            assert answer.status == 500, answer
            assert answer.error["cause"]["info"]["error_message"].startswith("the store holds no access keys")
        view = checked(call(http, "EXPERIMENTAL_view_account", account), "EXPERIMENTAL_view_account")
        assert view.status == 200  # the rest is served as before
