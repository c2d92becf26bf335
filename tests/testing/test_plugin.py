"""The pytest plugin as a client library's CI uses it: a pytest run in a folder of its own,
with nearrpc installed and the plugin found through its `pytest11` entry point."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from nearrpc.sample import sample_chain
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.live

CLIENT_TESTS = '''
import dataclasses, json, os
import httpx


def rpc(url, method, params):
    return httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, timeout=10)


def test_a_the_server_starts_only_when_asked_for(tmp_path_factory):
    assert not list(tmp_path_factory.getbasetemp().glob("nearrpc*"))


def test_b_facts_match_the_answers(nearrpc_server):
    facts = nearrpc_server.facts
    with open(os.environ["PROBE_OUT"], "w") as out:
        json.dump({"url": nearrpc_server.url, "pid": nearrpc_server.pid, "log": str(nearrpc_server.log),
                   "facts": dataclasses.asdict(facts)}, out)
    final = rpc(nearrpc_server.url, "block", {"finality": "final"}).json()["result"]
    assert (final["header"]["height"], final["header"]["hash"]) == (facts.final_height, facts.final_hash)
    view = rpc(nearrpc_server.url, "EXPERIMENTAL_view_account",
               {"account_id": facts.accounts[0], "block_id": facts.final_hash}).json()
    assert view["result"]["block_height"] == facts.final_height
    missing = rpc(nearrpc_server.url, "EXPERIMENTAL_view_account",
                  {"account_id": facts.missing_account, "finality": "final"}).json()
    assert missing["error"]["cause"]["name"] == "UNKNOWN_ACCOUNT"


def test_c_fails_on_purpose(nearrpc_server):
    answer = rpc(nearrpc_server.url, "block", {"block_id": nearrpc_server.facts.skipped_heights[0]})
    assert answer.status_code == 200, "the server's log shows this request"
'''


def run_pytest(folder: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("NEARRPC_", "PYTEST_"))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=folder, env={**clean, **(env or {})}, capture_output=True, text=True, timeout=300, check=False,
    )


def test_the_plugin_is_registered_for_pytest() -> None:
    (entry,) = [e for e in metadata.entry_points(group="pytest11") if e.name == "nearrpc"]
    assert entry.value == "nearrpc.testing.plugin"


def test_a_session_serves_the_sample_chain_and_its_facts(tmp_path: Path) -> None:
    (tmp_path / "test_client.py").write_text(CLIENT_TESTS)
    probe = tmp_path / "probe.json"
    done = run_pytest(tmp_path, env={"PROBE_OUT": str(probe)})
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "1 failed, 2 passed" in output

    # the failing test's report carries the server's log from that test's start: its request
    assert output.count("nearrpc server log (http://127.0.0.1:") == 1, output
    section = output.split("nearrpc server log (http://127.0.0.1:")[1]
    assert '"POST / HTTP/1.1" 422' in section.split("short test summary")[0]

    served: dict[str, Any] = json.loads(probe.read_text())
    facts, expected = served["facts"], sample_facts()
    assert facts["chain_id"] == expected.chain_id
    assert (facts["genesis_height"], facts["genesis_hash"]) == (expected.genesis_height, expected.genesis_hash)
    assert (facts["earliest_height"], facts["earliest_hash"]) == (expected.genesis_height, expected.genesis_hash)
    assert (facts["head_height"], facts["head_hash"]) == (expected.head_height, expected.head_hash)
    assert (facts["near_final_height"], facts["near_final_hash"]) == (
        expected.near_final_height, expected.near_final_hash)  # fmt: skip
    assert (facts["final_height"], facts["final_hash"]) == (expected.final_height, expected.final_hash)
    assert facts["protocol_version"] == expected.epoch_at(expected.head_height).protocol_version
    assert tuple(facts["block_heights"]) == expected.block_heights
    assert tuple(facts["skipped_heights"]) == expected.skipped_heights
    assert facts["accounts"] == sorted({*expected.validators, expected.treasury_account})
    assert facts["missing_account"] not in expected.all_accounts
    keys = sample_chain().access_keys
    assert {tuple(pair) for pair in facts["access_keys"]} == {
        (row.account_id, row.public_key) for row in keys if row.account_id in facts["accounts"]
    }
    assert facts["contract_code_hashes"] == [expected.contract_code_hash]

    # stopped with the session, its log kept
    assert not Path(f"/proc/{served['pid']}").exists()
    assert "at http://127.0.0.1:" in Path(served["log"]).read_text()


def test_a_store_named_in_the_ini_file_is_served_and_the_option_wins(tmp_path: Path, sample_store: Path) -> None:
    (tmp_path / "chain").mkdir()
    shutil.copy(sample_store, tmp_path / "chain" / "named.sqlite")
    (tmp_path / "pytest.ini").write_text("[pytest]\nnearrpc_store = chain/named.sqlite\n")
    (tmp_path / "test_named.py").write_text(textwrap.dedent("""
        from pathlib import Path

        def test_named(nearrpc_server):
            assert nearrpc_server.store == Path(__file__).parent / "chain" / "named.sqlite"
            assert nearrpc_server.facts.chain_id == "nearrpc-localnet"
    """))
    done = run_pytest(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr

    missing = run_pytest(tmp_path, "--nearrpc-store", "elsewhere.sqlite")
    assert missing.returncode == 1
    assert f"nearrpc_store: no store at {tmp_path / 'elsewhere.sqlite'}" in missing.stdout
    assert "Traceback" not in missing.stdout
