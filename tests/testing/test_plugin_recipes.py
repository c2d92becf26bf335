"""The plugin's documented recipes, run as a client author runs them (issue 33, item 5): a
PostgreSQL store named by URL, docs/CLIENT_TESTING.md's own client test under its record-and-
replay recipe, and what the fixture says when a cassette's head is not the pinned height."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.distribution.test_client_testing_doc import _client_tests
from tests.support.cli import nearrpc
from tests.support.postgres import PostgresServer
from tests.support.sample_facts import sample_facts
from tests.support.serve_process import Served, serving
from tests.testing.test_plugin import run_pytest

pytestmark = [pytest.mark.live, pytest.mark.deep]

SHOWS_THE_SERVER = '''
import os
from pathlib import Path

import httpx


def test_serves_the_store(nearrpc_server):
    Path(os.environ["OUT"], "cmdline").write_bytes(Path(f"/proc/{nearrpc_server.pid}/cmdline").read_bytes())
    final = httpx.post(nearrpc_server.url, json={"jsonrpc": "2.0", "id": 1, "method": "block",
                                                 "params": {"finality": "final"}}).json()["result"]
    assert final["header"]["hash"] == nearrpc_server.facts.final_hash
    assert nearrpc_server.facts.chain_id == "nearrpc-localnet"


def test_fails_so_the_log_is_attached(nearrpc_server):
    assert False, "on purpose"
'''


def _output(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout + done.stderr


def test_a_postgresql_store_is_served_and_its_password_never_shown(
    tmp_path: Path, sample_store: Path, postgres: PostgresServer
) -> None:
    url = postgres.create_database("plugin")
    copied = nearrpc("store", "copy", sample_store, url)
    assert copied.returncode == 0, copied.stderr
    (tmp_path / "test_pg.py").write_text(SHOWS_THE_SERVER)
    done = run_pytest(tmp_path, "-vv", "--nearrpc-store", url, env={"OUT": str(tmp_path)})
    output = _output(done)
    assert "test_serves_the_store PASSED" in output and "1 failed, 1 passed" in output, output
    assert "nearrpc server log (http://127.0.0.1:" in output  # the failing test's report carries the log
    assert postgres.password not in output
    # the URL reached the server through its environment, not its command line (any user can list it)
    assert postgres.password.encode() not in (tmp_path / "cmdline").read_bytes()

    # a database that does not exist: one line, masked
    (tmp_path / "test_pg.py").write_text("def test_uses_it(nearrpc_server):\n    pass\n")
    missing = run_pytest(tmp_path, "--nearrpc-store", postgres.url("no_such_database"))
    output = _output(missing)
    assert missing.returncode == 1, output
    assert "nearrpc_server: " in output and "no_such_database" in output, output
    assert postgres.password not in output
    assert "Traceback" not in output


def _pinned_without_a_skipped_height() -> int:
    """A final height of the sample whose head's walk down to its final block meets no skipped
    height: the fork's facts then know none (the case the doc's example failed on)."""
    facts = sample_facts()
    return max(
        h for h in facts.block_heights
        if h < facts.final_height and all(h - k in facts.block_heights for k in range(1, 6))
    )  # fmt: skip


def _record(folder: Path, upstream: Served, pinned: int) -> subprocess.CompletedProcess[str]:
    return run_pytest(folder, "-n", "0", "--nearrpc-upstream", upstream.url, "-o", f"nearrpc_fork_height={pinned}")


def _replay(folder: Path, pinned: int) -> subprocess.CompletedProcess[str]:
    return run_pytest(folder, "-o", f"nearrpc_fork_height={pinned}")


@pytest.fixture
def upstream(sample_store: Path, tmp_path: Path) -> Iterator[Served]:
    with serving("--store", sample_store, log=tmp_path / "upstream.log") as served:
        yield served


def test_the_documented_client_test_passes_under_the_documented_record_recipe(
    tmp_path: Path, upstream: Served
) -> None:
    pinned = _pinned_without_a_skipped_height()
    (tmp_path / "test_client.py").write_text(_client_tests())
    (tmp_path / "pytest.ini").write_text("[pytest]\nnearrpc_store = tests/cassettes/chain.sqlite\n")
    recorded = _record(tmp_path, upstream, pinned)
    assert recorded.returncode == 0 and "5 passed" in recorded.stdout, _output(recorded)
    replayed = _replay(tmp_path, pinned)
    assert replayed.returncode == 0 and "5 passed" in replayed.stdout, _output(replayed)


def test_the_pinned_height_hint_names_what_works(tmp_path: Path, upstream: Served) -> None:
    facts = sample_facts()
    first = _pinned_without_a_skipped_height()
    second = max(h for h in facts.block_heights if h < first - 5)
    (tmp_path / "test_client.py").write_text(_client_tests())
    (tmp_path / "pytest.ini").write_text("[pytest]\nnearrpc_store = chain.sqlite\n")
    cassette = tmp_path / "chain.sqlite"
    assert _record(tmp_path, upstream, first).returncode == 0

    # recording over the cassette at a lower height passes, but the cassette keeps its head
    assert _record(tmp_path, upstream, second).returncode == 0
    moved = _replay(tmp_path, second)
    assert moved.returncode == 1
    hint = (f"nearrpc_fork_height: {cassette} holds a head at {first}, not {second}: replay it with "
            f"nearrpc_fork_height = {first}, or delete it and record a new one with nearrpc_upstream")
    assert hint in moved.stdout, moved.stdout

    # both ways the hint names work
    assert _replay(tmp_path, first).returncode == 0
    cassette.unlink()
    for scratch in tmp_path.glob("chain.sqlite-*"):
        scratch.unlink()
    assert _record(tmp_path, upstream, second).returncode == 0
    again = _replay(tmp_path, second)
    assert again.returncode == 0 and "5 passed" in again.stdout, _output(again)
