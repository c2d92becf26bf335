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

import httpx
import pytest

from nearrpc.sample import sample_chain
from tests.support.sample_facts import sample_facts
from tests.support.serve_process import serving

pytestmark = [pytest.mark.live, pytest.mark.deep]

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


def happened_on_the_sample(heights: range, served_final: int | None = None) -> tuple[list[list[Any]], ...]:
    """The sample's new chunks and transactions at `heights`, with their receipts, as a store's
    facts list them (JSON: lists) and in their order: chunks by height and shard, transactions by
    height and hash, each one's receipts in its receipts_outcome order. As a fork's facts list
    them (`served_final`: its final height): the transactions of the final block only, the first
    ten, less those whose receipts ran above `heights` (a fork pinned there answers TIMEOUT_ERROR)."""
    chain = sample_chain()
    chunks = sorted([c.height, c.shard_id, c.chunk_hash] for c in chain.chunks if c.height in heights)
    tx_heights = heights if served_final is None else range(served_final, served_final + 1)
    transactions = sorted((t for t in chain.transactions if t.height in tx_heights),
                          key=lambda t: (t.height, t.tx_hash))  # fmt: skip
    if served_final is not None:
        ran_at = {r.receipt_id: r.height for r in chain.receipts}
        outcomes = {t.tx_hash: json.loads(t.view_json)["receipts_outcome"] for t in transactions}
        transactions = [t for t in transactions[:10] if all(ran_at[o["id"]] in heights for o in outcomes[t.tx_hash])]
    receipts = [[outcome["id"], outcome["outcome"]["executor_id"], t.tx_hash]
                for t in transactions for outcome in json.loads(t.view_json)["receipts_outcome"]]  # fmt: skip
    return chunks, [[t.tx_hash, t.signer_id, t.height] for t in transactions], receipts


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
    assert facts["contract_code_hashes"] == sorted([expected.contract_code_hash, expected.token_code_hash])
    assert facts["contracts"] == [
        [expected.contract_account, ["decrement", "get_num", "increment", "reset"]],
        [expected.token_account, ["ft_balance_of", "ft_metadata", "ft_total_supply", "ft_transfer"]],
    ]
    assert facts["chunks"] and facts["transactions"] and facts["receipts"]
    assert (facts["chunks"], facts["transactions"], facts["receipts"]) == happened_on_the_sample(range(0, 1 << 62))

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


# -- a fork as the fixture's server: record once through an upstream, replay from the cassette

CASSETTE_TESTS = '''
import dataclasses, json, os
from pathlib import Path

import httpx

OUT = Path(os.environ["BODIES_OUT"])


def call(server, name, method, params):
    """Post one JSON-RPC request and keep the raw body the server answered."""
    body = {"jsonrpc": "2.0", "id": "cassette", "method": method, "params": params}
    reply = httpx.post(server.url, json=body, timeout=30)
    (OUT / f"{name}.json").write_bytes(reply.content)
    return reply


def test_facts(nearrpc_server):
    (OUT / "facts.json").write_text(json.dumps(dataclasses.asdict(nearrpc_server.facts)))
    (OUT / "server-command.txt").write_bytes(Path(f"/proc/{nearrpc_server.pid}/cmdline").read_bytes())


def test_block_by_height(nearrpc_server):
    facts = nearrpc_server.facts
    header = call(nearrpc_server, "block_by_height", "block", {"block_id": facts.near_final_height}).json()
    assert header["result"]["header"]["hash"] == facts.near_final_hash


def test_block_final(nearrpc_server):
    answer = call(nearrpc_server, "block_final", "block", {"finality": "final"}).json()
    assert answer["result"]["header"]["hash"] == nearrpc_server.facts.final_hash


def test_view_account(nearrpc_server):
    facts = nearrpc_server.facts
    params = {"account_id": facts.accounts[0], "finality": "final"}
    view = call(nearrpc_server, "view_account", "EXPERIMENTAL_view_account", params).json()["result"]
    assert view["block_hash"] == facts.final_hash


def test_access_key_list(nearrpc_server):
    facts = nearrpc_server.facts
    params = {"request_type": "view_access_key_list", "account_id": facts.accounts[0], "finality": "final"}
    keys = call(nearrpc_server, "access_key_list", "query", params).json()["result"]["keys"]
    assert [key["public_key"] for key in keys] == [key for name, key in facts.access_keys if name == facts.accounts[0]]


def test_protocol_config(nearrpc_server):
    config = call(nearrpc_server, "protocol_config", "EXPERIMENTAL_protocol_config", {"finality": "final"}).json()
    assert config["result"]["chain_id"] == nearrpc_server.facts.chain_id


def test_missing_account(nearrpc_server):
    facts = nearrpc_server.facts
    params = {"account_id": facts.missing_account, "finality": "final"}
    error = call(nearrpc_server, "missing_account", "EXPERIMENTAL_view_account", params).json()["error"]
    assert error["cause"]["name"] == "UNKNOWN_ACCOUNT"
'''

def _direct_requests(facts: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """What to ask the upstream itself for each body CASSETTE_TESTS keeps: the fork's `final` is
    named by its hash (a fork pinned below the upstream's head has a `final` of its own)."""
    at_final = {"block_id": facts["final_hash"]}
    account = facts["accounts"][0]
    return {
        "block_by_height": ("block", {"block_id": facts["near_final_height"]}),
        "block_final": ("block", at_final),
        "view_account": ("EXPERIMENTAL_view_account", {"account_id": account, **at_final}),
        "access_key_list": ("query", {"request_type": "view_access_key_list", "account_id": account, **at_final}),
        "protocol_config": ("EXPERIMENTAL_protocol_config", at_final),
        "missing_account": ("EXPERIMENTAL_view_account", {"account_id": facts["missing_account"], **at_final}),
    }


def _bodies(folder: Path) -> dict[str, bytes]:
    return {path.stem: path.read_bytes() for path in sorted(folder.glob("*.json"))}


def _record_and_replay(tmp_path: Path, sample_store: Path, ini: str) -> tuple[dict[str, Any], list[bytes]]:
    """Run CASSETTE_TESTS through an upstream serving the sample chain, stop it, run them again
    from the cassette alone; check the bodies of both runs are the same bytes, and the upstream's
    own answers. The recorded facts, and the recording server's command line."""
    (tmp_path / "test_cassette.py").write_text(CASSETTE_TESTS)
    (tmp_path / "pytest.ini").write_text(f"[pytest]\nnearrpc_store = cassettes/chain.sqlite\n{ini}")
    recorded, replayed = tmp_path / "recorded", tmp_path / "replayed"
    recorded.mkdir()
    replayed.mkdir()

    with serving("--store", sample_store, log=tmp_path / "upstream.log") as upstream:
        first = run_pytest(tmp_path, "--nearrpc-upstream", upstream.url, env={"BODIES_OUT": str(recorded)})
        assert first.returncode == 0, first.stdout + first.stderr
        # (the server sets its process title to its command line, words joined by spaces)
        command = (recorded / "server-command.txt").read_bytes().replace(b"\0", b" ").split()
        # the URL, which may carry a key, goes in the fork's environment, not on its command line
        assert not any(upstream.url.encode() in word for word in command)
        facts = json.loads((recorded / "facts.json").read_text())
        direct = {
            name: httpx.post(upstream.url, json={"jsonrpc": "2.0", "id": "cassette", "method": method,
                                                 "params": params}, timeout=30).content
            for name, (method, params) in _direct_requests(facts).items()
        }  # fmt: skip
    assert (tmp_path / "cassettes" / "chain.sqlite").is_file()  # its folder too made by the first run

    second = run_pytest(tmp_path, env={"BODIES_OUT": str(replayed)})
    assert second.returncode == 0, second.stdout + second.stderr
    assert _bodies(replayed) == _bodies(recorded)  # the facts too
    answers = _bodies(recorded)
    del answers["facts"]
    assert answers == direct
    return facts, command


@pytest.mark.long(0.6)  # two pytest runs of a client suite: started first (tests/conftest.py)
def test_a_suite_records_through_an_upstream_and_replays_the_cassette_without_it(
    tmp_path: Path, sample_store: Path
) -> None:
    expected = sample_facts()
    # pinned below the upstream's final head, just above a skipped height, so that the walk from
    # the pinned head down to its final block crosses it
    pinned = max(h for h in expected.block_heights if h - 1 in expected.skipped_heights and h < expected.final_height)
    # the recipe of docs/CLIENT_TESTING.md: cassette and height in the ini file, the upstream
    # named on the command line of the recording run only
    facts, command = _record_and_replay(tmp_path, sample_store, f"nearrpc_fork_height = {pinned}\n")
    assert [b"--record-mode", b"new", b"--fork-height", str(pinned).encode()] == command[-4:], command
    cassette = tmp_path / "cassettes" / "chain.sqlite"

    # the facts are the upstream's chain seen from the pinned head, nothing the store lacked made up
    assert (facts["head_height"], facts["chain_id"]) == (pinned, expected.chain_id)
    assert (facts["genesis_height"], facts["genesis_hash"]) == (expected.genesis_height, expected.genesis_hash)
    assert (facts["earliest_height"], facts["earliest_hash"]) == (expected.genesis_height, expected.genesis_hash)
    assert facts["final_height"] < facts["near_final_height"] < pinned
    window = range(facts["final_height"], pinned + 1)
    assert facts["block_heights"] == [h for h in expected.block_heights if h in window]
    assert facts["skipped_heights"] == [pinned - 1]
    assert facts["accounts"] == sorted({*expected.validators, expected.treasury_account})
    assert facts["missing_account"] not in expected.all_accounts
    keys = sample_chain().access_keys
    assert {tuple(pair) for pair in facts["access_keys"]} == {
        (row.account_id, row.public_key) for row in keys if row.account_id in facts["accounts"]
    }
    assert facts["contract_code_hashes"] == []  # no validator has a contract
    assert facts["contracts"] == []  # a fork's facts name none (docs/CLIENT_TESTING.md)
    # what happened in the stretch it walked (transactions: the final block's), each chunk and
    # transaction asked through the fork
    happened = happened_on_the_sample(window, facts["final_height"])
    assert (facts["chunks"], facts["transactions"], facts["receipts"]) == happened
    assert facts["transactions"], "the final block has no transaction"

    # a cassette replayed under another pinned height is refused in one line
    moved = run_pytest(tmp_path, "-o", f"nearrpc_fork_height={pinned + 1}", "-k", "facts",
                       env={"BODIES_OUT": str(tmp_path)})  # fmt: skip
    assert moved.returncode == 1
    assert f"nearrpc_fork_height: {cassette} holds a head at {pinned}, not {pinned + 1}: replay it with " in (
        moved.stdout
    )


def test_an_upstream_without_a_cassette_and_a_pinned_height_without_one_are_refused(tmp_path: Path) -> None:
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    no_store = run_pytest(tmp_path, "--nearrpc-upstream", "http://127.0.0.1:9/")
    assert no_store.returncode == pytest.ExitCode.USAGE_ERROR
    assert no_store.stderr.strip().splitlines() == [
        "ERROR: nearrpc_upstream needs nearrpc_store: the store is the cassette that keeps what is fetched for "
        "later runs (--nearrpc-store PATH)"
    ]
    (tmp_path / "pytest.ini").write_text("[pytest]\nnearrpc_fork_height = 12\n")
    no_cassette = run_pytest(tmp_path)
    assert no_cassette.returncode == pytest.ExitCode.USAGE_ERROR
    assert no_cassette.stderr.strip().splitlines() == [
        "ERROR: nearrpc_fork_height pins a fork's head: it needs nearrpc_store (and nearrpc_upstream to record)"
    ]
    not_a_height = run_pytest(tmp_path, "--nearrpc-store", "chain.sqlite", "-o", "nearrpc_fork_height=final")
    assert not_a_height.returncode == pytest.ExitCode.USAGE_ERROR
    assert "ERROR: nearrpc_fork_height: 'final' is not a block height" in not_a_height.stderr


@pytest.mark.long(0.4)  # two pytest runs of a client suite: started first (tests/conftest.py)
def test_a_fork_not_pinned_takes_the_upstreams_head_and_its_cassette_replays_it(
    tmp_path: Path, sample_store: Path
) -> None:
    facts, command = _record_and_replay(tmp_path, sample_store, "")
    assert command[-2:] == [b"--record-mode", b"new"], command
    expected = sample_facts()  # the upstream's chain does not move: its head stays put
    assert (facts["head_height"], facts["head_hash"]) == (expected.head_height, expected.head_hash)
    assert (facts["final_height"], facts["final_hash"]) == (expected.final_height, expected.final_hash)
    assert (facts["near_final_height"], facts["near_final_hash"]) == (
        expected.near_final_height, expected.near_final_hash)  # fmt: skip
