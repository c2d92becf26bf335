"""`nearrpc serve --sandbox` as a process: its flags refused in one line, blocks made every
--block-time and served as any block, a clean stop within --store-close-timeout."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from nearrpc.sample import sample_chain
from nearrpc.store import open_store
from tests.support.cli import REPO, nearrpc
from tests.support.serve_process import STARTED, message_of, serving

FAKE_SERVE = [sys.executable, str(REPO / "tests" / "sandbox" / "chain_serve.py")]


@pytest.mark.parametrize(
    ("flags", "refusal"),
    [
        (["--block-time", "1"], "--block-time sets how often the sandbox makes a block: it needs --sandbox"),
        (["--sandbox", "--upstream", "http://127.0.0.1:9"], "--sandbox over a fork (--upstream) comes later"),
        (["--sandbox", "--workers", "2"], "--sandbox makes blocks in one process: it runs with --workers 1"),
        (["--sandbox", "--block-time", "0"], "--block-time='0': must be above 0"),
    ],
)
def test_refused_flags(sample_store: Path, flags: list[str], refusal: str) -> None:
    done = nearrpc("serve", "--port", "0", "--store", sample_store, *flags)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("nearrpc serve: ") and refusal in line


def test_a_postgresql_store_is_refused() -> None:
    done = nearrpc("serve", "--port", "0", "--sandbox", "--store", "postgresql://u@127.0.0.1:9/db")
    assert done.returncode == 2
    assert "--sandbox writes an SQLite store for now" in done.stderr


def test_help_documents_the_sandbox() -> None:
    text = nearrpc("serve", "--help").stdout
    assert "--sandbox" in text and "--block-time SECONDS" in text and "automine" in text.lower()


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
