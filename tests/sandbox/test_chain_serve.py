"""`nearrpc serve --sandbox` as a process: its flags refused in one line, blocks made every
--block-time and served as any block, a clean stop within --store-close-timeout, and a
PostgreSQL store served as an SQLite one: a send's new state read back at once."""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from nearrpc.sample import sample_chain
from nearrpc.store import open_store
from tests.sandbox.chain_fakes import signed_transfer
from tests.sandbox.chain_harness import ALICE, BOB
from tests.support.cli import REPO, nearrpc
from tests.support.postgres import PostgresServer
from tests.support.serve_process import STARTED, message_of, serving

FAKE_SERVE = [sys.executable, str(REPO / "tests" / "sandbox" / "chain_serve.py")]


@pytest.mark.parametrize(
    ("flags", "env", "refusal"),
    [
        (["--block-time", "1"], {}, "--block-time='1': sets how often the sandbox makes a block: it needs --sandbox"),
        ([], {"NEARRPC_BLOCK_TIME": "5"}, "NEARRPC_BLOCK_TIME='5': sets how often the sandbox makes a block"),
        (["--sandbox", "--upstream", "http://127.0.0.1:9", "--verify-calls"], {}, "--verify-calls asks the upstream"),
        (
            ["--sandbox", "--upstream", "http://127.0.0.1:9", "--record-mode", "none"],
            {},
            "a sandboxed fork replays offline with the same command, its upstream stopped",
        ),
        # a sandboxed fork's pin is the upstream's final head: a store with no pin kept needs the upstream
        (
            ["--sandbox", "--upstream", "http://127.0.0.1:9"],
            {},
            "a sandboxed fork pins its head on the upstream, which does not answer",
        ),
        (["--sandbox", "--workers", "2"], {}, "--sandbox makes blocks in one process: it runs with --workers 1"),
        (["--sandbox", "--block-time", "0"], {}, "--block-time='0': must be 0.05 or more"),
        (["--sandbox", "--block-time", "0.001"], {}, "--block-time='0.001': must be 0.05 or more"),
        (["--sandbox"], {"NEARRPC_BLOCK_TIME": "0.01"}, "NEARRPC_BLOCK_TIME='0.01': must be 0.05 or more"),
    ],
)
def test_refused_flags(sample_store: Path, flags: list[str], env: dict[str, str], refusal: str) -> None:
    done = nearrpc("serve", "--port", "0", "--store", sample_store, *flags, env=env)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("nearrpc serve: ") and refusal in line, line


def test_the_shortest_block_time_is_taken(tmp_path: Path) -> None:
    # the settings pass: what is refused is the store named, checked after them
    done = nearrpc("serve", "--sandbox", "--block-time", "0.05", "--port", "0", "--store", tmp_path / "none.sqlite")
    assert done.returncode == 2 and "no store at" in done.stderr, done.stderr


def test_help_documents_the_sandbox() -> None:
    text = " ".join(nearrpc("serve", "--help").stdout.split())
    assert "--sandbox" in text and "--block-time SECONDS" in text and "automine" in text.lower()
    assert "at least 0.05" in text
    assert "an SQLite file or a PostgreSQL database" in text and "Not for replicas behind a balancer" in text


def _height(url: str, finality: str) -> int:
    body = {"jsonrpc": "2.0", "id": 1, "method": "block", "params": {"finality": finality}}
    return int(httpx.post(url, json=body, timeout=5).json()["result"]["header"]["height"])


@pytest.mark.live
def test_a_sandbox_process_makes_blocks_and_stops_cleanly(sample_store: Path, tmp_path: Path) -> None:
    store = tmp_path / "sandbox.sqlite"
    shutil.copyfile(sample_store, store)
    with serving("--sandbox", "--block-time", "0.05", "--store", store, "--store-close-timeout", "5",
                 log=tmp_path / "serve.log", wrapper=FAKE_SERVE) as served:  # fmt: skip
        assert "a sandbox: a block every 0.05 s" in served.started_line
        start = _height(served.url, "optimistic")
        deadline = time.monotonic() + 20
        while _height(served.url, "final") < start + 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        final = _height(served.url, "final")
        assert final >= start + 5
        log = served.log
        stopping = time.monotonic()  # leaving `serving` sends SIGTERM and waits for the process
    assert time.monotonic() - stopping < 6
    text = log.read_text()
    assert "Traceback" not in text and "did not stop" not in text
    reader = open_store(store, "read")
    try:
        head = reader.head()
        assert head is not None and head.height >= final + 2
        assert reader.check(thorough=True).ok
    finally:
        reader.close()


@pytest.mark.live
def test_without_a_store_the_sandbox_gets_a_fresh_sample_chain(tmp_path: Path) -> None:
    with serving("--sandbox", "--block-time", "0.05", log=tmp_path / "serve.log", wrapper=FAKE_SERVE) as served:
        found = STARTED.search(message_of(served.started_line))
        assert found is not None
        store = Path(found["store"])
        assert store.name == "sandbox.sqlite" and store.parent.name.startswith("nearrpc-sandbox-")
        assert "head 110" in found["summary"]  # the sample chain, as built
        start = _height(served.url, "optimistic")
        deadline = time.monotonic() + 20
        while _height(served.url, "optimistic") < start + 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _height(served.url, "optimistic") >= start + 3
    assert not store.parent.exists()


def test_a_store_without_a_chain_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "genesis-only.sqlite"
    with open_store(store, "write") as writer, writer.batch() as batch:
        batch.put_genesis_config(sample_chain().genesis_config_json)
    done = subprocess.run([*FAKE_SERVE, "serve", "--port", "0", "--sandbox", "--store", str(store)], cwd=REPO,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().endswith("holds no genesis config or no block")


def _rpc(url: str, method: str, params: object) -> Any:
    answer = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, timeout=15).json()
    assert "result" in answer, answer
    return answer["result"]


@pytest.mark.live
def test_a_sandbox_on_postgresql_reads_a_send_back_at_once(
    postgres: PostgresServer, sample_database: str, tmp_path: Path
) -> None:
    store = postgres.create_database("sandbox_serve", template=sample_database)
    # the server's own poll slowed to a minute: what it reads after a send is new only by the writer's notice
    with serving("--sandbox", "--store", store, log=tmp_path / "serve.log", wrapper=FAKE_SERVE,
                 env={"POLL_SECONDS": "60"}) as served:  # fmt: skip
        assert "a sandbox: automine" in served.started_line
        url = served.url
        keys = _rpc(url, "EXPERIMENTAL_view_access_key_list", {"finality": "optimistic", "account_id": ALICE})
        key = next(k["public_key"] for k in keys["keys"] if k["access_key"]["permission"] == "FullAccess")
        head = _rpc(url, "block", {"finality": "optimistic"})["header"]
        bob = int(_rpc(url, "EXPERIMENTAL_view_account", {"finality": "final", "account_id": BOB})["amount"])
        signed = signed_transfer(ALICE, key, 10**12, BOB, head["hash"], 7)
        sent = _rpc(url, "send_tx", {"signed_tx_base64": base64.b64encode(signed).decode(), "wait_until": "FINAL"})
        assert sent["final_execution_status"] == "FINAL"
        # at once: the final block, the account, the outcome
        executed = sent["receipts_outcome"][0]["block_hash"]
        assert _rpc(url, "block", {"finality": "final"})["header"]["hash"] == executed
        after = _rpc(url, "EXPERIMENTAL_view_account", {"finality": "final", "account_id": BOB})
        assert int(after["amount"]) == bob + 7
        tx = _rpc(url, "tx", {"tx_hash": sent["transaction"]["hash"], "sender_account_id": ALICE})
        assert tx["transaction_outcome"] == sent["transaction_outcome"]
        log = served.log
    assert "Traceback" not in log.read_text()
