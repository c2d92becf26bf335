"""`nearrpc import rpc`: recording from a live node, and the round trip A -> record -> B.

Instance A serves the sample store; the recorder copies a height range from it into a new
store; instance B serves that store and must answer every request form over the range with
the very bytes A answers. Also: resuming after a SIGKILL, a flaky source (retries), an old
node without EXPERIMENTAL_view_account, and refusals with one-line errors.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from nearrpc.store import open_store
from tests.ingest.conftest import REPO, call, digest, result
from tests.ingest.proxy import Behaviour, json_rpc_proxy
from tests.store.sqlite_files import contents, dump
from tests.support.cli import nearrpc
from tests.support.live_server import LiveServer, running_server
from tests.support.sample_facts import SampleFacts, sample_facts

pytestmark = [pytest.mark.live, pytest.mark.deep]

FROM, TO = 20, 95  # crosses the epoch boundaries at 25, 52 (protocol upgrade) and 79


def accounts(facts: SampleFacts) -> tuple[str, ...]:
    chosen = [
        "alice.localnet",  # balance changes
        *(account for account, _ in facts.created_accounts),  # created at 30 and 40
        *(account for account, _ in facts.deleted_accounts),  # deleted at 66 and 90
        facts.contract_account,
        *facts.global_contract_accounts,
        facts.implicit_accounts[0],
        "node2",  # stakes more at 57
        "nobody.localnet",  # never exists
    ]
    return tuple(dict.fromkeys(chosen))


def record(
    url: str, store: Path, *extra: str, heights: tuple[int, int] = (FROM, TO)
) -> subprocess.CompletedProcess[str]:
    return nearrpc("import", "rpc", "--url", url, "--from-height", str(heights[0]), "--to-height", str(heights[1]),
                   "--accounts", ",".join(accounts(sample_facts())), "--store", store, *extra)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, server_a: LiveServer) -> Path:
    """The range recorded from A without interference: the reference for other recordings."""
    store = tmp_path_factory.mktemp("recorded") / "b.sqlite"
    done = record(server_a.url, store)
    print(done.stdout)
    assert done.returncode == 0, done.stderr
    facts = sample_facts()
    skipped = [h for h in facts.skipped_heights if FROM <= h <= TO]
    assert f"skipped heights: {len(skipped)} ({', '.join(map(str, skipped))})" in done.stdout
    assert "epochs with their protocol config: 4" in done.stdout
    assert "; contract codes: 1" in done.stdout  # counter.localnet's, fetched once for all its states
    assert _progress_note(store) is None  # a completed recording leaves no note
    return store


def test_round_trip_every_request_form_answers_identically(
    recorded: Path, server_a: LiveServer, tmp_path: Path
) -> None:
    """A and B answer byte for byte alike (HTTP status included) for: genesis_config,
    client_config; block and EXPERIMENTAL_protocol_config by every height of the range
    (skipped ones too: UNKNOWN_BLOCK) and by every block hash; EXPERIMENTAL_view_account of
    every chosen account at every height and hash (existing, created, deleted and never
    existing accounts).

    Finality and checkpoints: no such request can be identical as such, because A's head is
    110 and B's is the top of the recorded range. What must hold instead is that B resolves
    them to the block A would resolve them to given B's head: B's optimistic = the block at
    95, near-final and final = that block's last_ds_final_block and last_final_block, and
    earliest_available = the first recorded block. So B's answer to each such form is
    compared with A's answer for the hash of that block, which is the same response (the
    envelope does not echo params). `sync_checkpoint: genesis` is the one form B cannot answer
    (the genesis block is outside the range): UNKNOWN_BLOCK there, as on a node that no
    longer has it."""
    facts = sample_facts()
    chosen = accounts(facts)
    with running_server(recorded, tmp_path / "b.log") as b:
        requests: list[tuple[str, Any]] = [("genesis_config", None), ("client_config", None)]
        hashes = {}
        for height in range(FROM, TO + 1):
            status, body = call(server_a.url, "block", {"block_id": height})
            answer = orjson.loads(body)
            references: list[int | str] = [height]
            if "result" in answer:
                hashes[height] = answer["result"]["header"]["hash"]
                references.append(hashes[height])
            else:
                assert height in facts.skipped_heights and status == 422
            for ref in references:
                requests.append(("block", {"block_id": ref}))
                requests.append(("EXPERIMENTAL_protocol_config", {"block_id": ref}))
                requests.extend(("EXPERIMENTAL_view_account", {"block_id": ref, "account_id": a}) for a in chosen)
        for method, params in requests:
            assert call(server_a.url, method, params) == call(b.url, method, params), (method, params)

        head = result(b.url, "block", {"finality": "optimistic"})["header"]
        resolved = {
            ("finality", "optimistic"): head["hash"],
            ("finality", "near-final"): head["last_ds_final_block"],
            ("finality", "final"): head["last_final_block"],
            ("sync_checkpoint", "earliest_available"): hashes[min(hashes)],
        }
        assert head["height"] == TO
        forms = 0
        for (kind, value), block_hash in resolved.items():
            assert block_hash in hashes.values()
            for method, extra in [("block", {}), ("EXPERIMENTAL_protocol_config", {}),
                                  *(("EXPERIMENTAL_view_account", {"account_id": a}) for a in chosen)]:
                assert call(b.url, method, {kind: value, **extra}) == call(
                    server_a.url, method, {"block_id": block_hash, **extra}), (kind, value, method, extra)
                forms += 1
        assert orjson.loads(call(b.url, "block", {"sync_checkpoint": "genesis"})[1])["error"]["cause"]["name"] \
            == "UNKNOWN_BLOCK"
        print(f"\n{len(requests)} requests answered identically by A and B; {forms} finality/checkpoint forms "
              "resolved by B to the block A resolves them to")


def test_recorded_protocol_configs_are_kept_verbatim(recorded: Path, server_a: LiveServer) -> None:
    facts = sample_facts()
    reader = open_store(recorded, "read")
    try:
        for epoch in facts.epochs:
            if epoch.last_height < FROM or epoch.first_height > TO:
                assert reader.epoch(epoch.epoch_id) is None
                continue
            stored = reader.epoch(epoch.epoch_id)
            assert stored is not None and stored.protocol_version == epoch.protocol_version
            height = max(epoch.first_height, FROM)
            height = height if height not in facts.skipped_heights else height + 1
            expected = orjson.dumps(result(server_a.url, "EXPERIMENTAL_protocol_config", {"block_id": height}))
            assert stored.protocol_config_json == expected
        assert reader.account_json("nobody.localnet", TO) is None
        assert reader.account_json("temp.localnet", 65) is not None and reader.account_json("temp.localnet", 66) is None
    finally:
        reader.close()


def test_rerun_and_overlapping_run_change_nothing(recorded: Path, server_a: LiveServer, tmp_path: Path) -> None:
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(recorded.read_bytes())
    before = digest(copy)
    done = record(server_a.url, copy, heights=(FROM + 10, FROM + 30))
    assert done.returncode == 0, done.stderr
    assert digest(copy) == before


def _progress_note(store: Path) -> bytes | None:
    reader = open_store(store, "read")
    try:
        return reader.import_progress()
    finally:
        reader.close()


def _progress_note_height(store: Path) -> int:
    note = _progress_note(store)
    assert note is not None
    height: int = orjson.loads(note)["next_height"]
    return height


def _kill_after_batches(args: list[str], store: Path, batches_done_at: int) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEARRPC_")}
    process = subprocess.Popen([sys.executable, "-m", "nearrpc", *args], cwd=REPO, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, "the recording ended before it could be killed"
        assert time.monotonic() < deadline
        note = _progress_note(store) if store.exists() else None
        next_height: int = FROM if note is None else orjson.loads(note)["next_height"]
        if next_height >= batches_done_at:
            break
        time.sleep(0.005)
    os.kill(process.pid, signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL
    return next_height


def test_sigkill_then_rerun_resumes_and_completes(recorded: Path, server_a: LiveServer, tmp_path: Path) -> None:
    facts = sample_facts()
    store = tmp_path / "b.sqlite"
    batch = 5
    with json_rpc_proxy(server_a.url, Behaviour(delay=0.01)) as slow:
        args = ["import", "rpc", "--url", slow, "--from-height", str(FROM), "--to-height", str(TO),
                "--accounts", ",".join(accounts(facts)), "--store", str(store), "--batch-heights", str(batch),
                "--concurrency", "2"]
        noted = _kill_after_batches(args, store, FROM + 3 * batch)
    # Whole batches only: the stored heights are a prefix of the range ending at a batch boundary,
    # and the progress note, committed with each batch, names exactly that boundary.
    heights = {row[1] for row in dump(store)["blocks"]}
    top = max(heights)
    boundary = FROM + ((top - FROM) // batch + 1) * batch
    assert boundary == _progress_note_height(store)
    assert noted <= boundary
    assert heights == {h for h in facts.block_heights if FROM <= h < boundary}
    states = {(row[0], row[1]) for row in dump(store)["account_states"]}
    assert states == {(a, h) for a in accounts(facts) for h in heights}
    print(f"\nkilled with heights {FROM}..{boundary - 1} committed (note: next height {noted})")

    done = nearrpc(*args[:2], "--url", server_a.url, *args[4:])
    print(done.stdout)
    assert done.returncode == 0, done.stderr
    assert f"(resumed at height {boundary})" in done.stdout
    assert contents(store) == contents(recorded)
    assert _progress_note(store) is None


def test_flaky_source_is_retried(recorded: Path, server_a: LiveServer, tmp_path: Path) -> None:
    store = tmp_path / "b.sqlite"
    behaviour = Behaviour(failure_rate=0.25)
    with json_rpc_proxy(server_a.url, behaviour) as flaky:
        done = record(flaky, store, "--backoff", "0.01", "--retries", "8")
    print(done.stdout, behaviour.counts)
    assert done.returncode == 0, done.stderr
    failures = behaviour.counts["503"] + behaviour.counts["429"] + behaviour.counts["dropped"]
    assert failures > 50 and f"retried: {failures}" in done.stdout
    assert contents(store) == contents(recorded)


def test_old_node_answers_views_through_query(recorded: Path, server_a: LiveServer, tmp_path: Path) -> None:
    store = tmp_path / "b.sqlite"
    with json_rpc_proxy(server_a.url, Behaviour(old_node=True)) as old:
        done = record(old, store)
    assert done.returncode == 0, done.stderr
    assert contents(store) == contents(recorded)


def test_refusals_are_one_line(recorded: Path, server_a: LiveServer, tmp_path: Path) -> None:
    facts = sample_facts()
    store = tmp_path / "b.sqlite"
    cases = [  # what the node holds (1), and flags that contradict each other (2)
        ((FROM, facts.head_height), 1, f"--to-height {facts.head_height} is above the node's final block "
                                       f"{facts.final_height}"),
        ((30, 20), 2, "--from-height 30 is above --to-height 20"),
    ]
    for heights, code, message in cases:
        done = record(server_a.url, store, heights=heights)
        assert done.returncode == code and done.stderr.strip().startswith("nearrpc import rpc: ")
        assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    # an id the node would refuse is refused before anything is asked of it
    with socket_closed_port() as nowhere:
        done = record(nowhere, store, "--accounts", "alice.localnet,Bad Name", "--retries", "0")
        assert done.returncode == 2 and done.stderr == (
            "nearrpc import rpc: --accounts: 'Bad Name' is not a NEAR account id: the Account ID contains an "
            "invalid character 'B' at index 0\n"
        )

    with socket_closed_port() as url:
        done = record(url, store, "--retries", "2", "--backoff", "0.01")
    # a warning per retry as it happens (issue 12: no silent retrying), then the one-line error
    *retries, error = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(retries) == 2, done.stderr  # a node out of reach: the URL must change
    assert all(" WARNING nearrpc.import: recording: " in line for line in retries), retries
    assert error.startswith("nearrpc import rpc: ")
    assert "(genesis_config): cannot connect to" in error
    assert error.endswith(": connection refused, still after 2 retries")
    assert not store.exists()  # nothing was stored, so no store was created

    sample_copy = tmp_path / "other_chain.sqlite"
    other = tmp_path / "genesis.json"
    from tests.ingest.genesis_files import genesis_members, write_genesis

    write_genesis(other, genesis_members("other-chain"), [])
    assert nearrpc("import", "genesis", other, "--store", sample_copy).returncode == 0
    before = digest(sample_copy)
    done = record(server_a.url, sample_copy)
    assert done.returncode == 1
    assert "holds chain 'other-chain'; the node serves 'nearrpc-localnet'" in done.stderr
    assert digest(sample_copy) == before


class socket_closed_port:
    """A URL on 127.0.0.1 where nothing listens."""

    def __enter__(self) -> str:
        from tests.support.live_server import free_port

        return f"http://127.0.0.1:{free_port()}"

    def __exit__(self, *exc: object) -> None:
        return None


def _key_answers(url: str, heights: list[int]) -> dict[tuple[str, int], list[tuple[str, dict[str, Any]]]]:
    """A's key list of every chosen account at every height with a block."""
    return {
        (account, height): [(entry["public_key"], entry["access_key"]) for entry in
                            result(url, "EXPERIMENTAL_view_access_key_list",
                                   {"block_id": height, "account_id": account})["keys"]]
        for account in accounts(sample_facts()) for height in heights
    }


@pytest.mark.long(1.8)  # thousands of requests to two servers: started first (tests/conftest.py)
def test_round_trip_access_keys_and_code_answer_identically(
    recorded: Path, server_a: LiveServer, tmp_path: Path
) -> None:
    """B answers the key list and the code of every chosen account, by height and by hash, and
    every key any of them held in the range, at every height, with A's very bytes: keys whose
    nonce moved, keys deleted with their account, keys added with a new account, and heights
    where a key does not exist (UNKNOWN_ACCESS_KEY) alike."""
    facts = sample_facts()
    heights = [h for h in facts.block_heights if FROM <= h <= TO]
    listed = _key_answers(server_a.url, heights)
    views: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for (account, _), keys in sorted(listed.items(), key=lambda item: item[0][1]):
        for key, view in keys:
            views.setdefault((account, key), []).append(view)
    # what the sample chain must show in the range for this test to mean something
    assert any(len({v["nonce"] for v in seen}) > 1 for seen in views.values()), "no key changed nonce"
    deleted = {account for account, height in facts.deleted_accounts if FROM < height <= TO}
    assert deleted and all(listed[(a, FROM)] and not listed[(a, TO)] for a in deleted - {"ephemeral.alice.localnet"})
    assert facts.contract_account in accounts(facts)

    requests: list[tuple[str, Any]] = []
    for height in heights:
        block_hash = result(server_a.url, "block", {"block_id": height})["header"]["hash"]
        for ref in (height, block_hash):
            for account in accounts(facts):
                at = {"block_id": ref, "account_id": account}
                requests += [("EXPERIMENTAL_view_access_key_list", at), ("EXPERIMENTAL_view_code", at),
                             ("query", {"request_type": "view_access_key_list", **at})]
        for account, key in views:
            at = {"block_id": height, "account_id": account, "public_key": key}
            requests += [("EXPERIMENTAL_view_access_key", at), ("query", {"request_type": "view_access_key", **at})]
    with running_server(recorded, tmp_path / "b.log") as b:
        for method, params in requests:
            assert call(server_a.url, method, params) == call(b.url, method, params), (method, params)
    print(f"\n{len(requests)} key and code requests answered identically; {len(views)} keys")


def test_a_gap_filled_last_answers_like_one_run(recorded: Path, server_a: LiveServer, tmp_path: Path) -> None:
    """Recording FROM..25, then 90..TO, then the gap 26..89 leaves a store that answers every
    key and account like the one-run recording. ephemeral.alice.localnet is created at 30 and
    deleted at 90: the 90..TO run never saw its keys (the store held none below), so only the
    gap's restoring rows keep them from reaching over the heights recorded above. Batches of 20
    heights put a batch boundary (66) inside the gap: the rows restored there are overwritten
    by the next batch."""
    store = tmp_path / "b.sqlite"
    for heights in ((FROM, 25), (90, TO), (26, 89)):
        done = record(server_a.url, store, "--batch-heights", "20", heights=heights)
        assert done.returncode == 0, done.stderr
    gapped, reference = open_store(store, "read"), open_store(recorded, "read")
    try:
        for account in accounts(sample_facts()):
            for height in (h for h in sample_facts().block_heights if FROM <= h <= TO):  # what answers read
                assert gapped.access_keys_json(account, height) == reference.access_keys_json(account, height), (
                    account, height)
                assert gapped.account_json(account, height) == reference.account_json(account, height)
        assert reference.access_keys_json("ephemeral.alice.localnet", 89)
    finally:
        gapped.close()
        reference.close()


def _spoiling(block_hash: str, account: str, spoil: Callable[[dict[str, Any]], None]) -> Behaviour:
    """A node whose key list of `account` at `block_hash` is spoilt by `spoil`."""

    def tamper(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        params = request.get("params")
        if (request.get("method") == "EXPERIMENTAL_view_access_key_list" and isinstance(params, dict)
                and params.get("block_id") == block_hash and params.get("account_id") == account):
            spoil(answer["result"])
        return answer

    return Behaviour(tamper=tamper)


def _nonce_not_a_number(listing: dict[str, Any]) -> None:
    listing["keys"][0]["access_key"]["nonce"] = "seven"


def _key_not_a_key(listing: dict[str, Any]) -> None:
    listing["keys"][0]["public_key"] = "ed25519:not-base58!"


def _one_page_of_more(listing: dict[str, Any]) -> None:
    """A page that is not the last, as a node that pages key lists answers (issue 22 research)."""
    listing["last_key"] = listing["keys"][0]["public_key"]
    del listing["keys"][1:]


@pytest.mark.parametrize("spoil", [_nonce_not_a_number, _key_not_a_key, _one_page_of_more])
def test_a_spec_invalid_key_list_fails_the_batch_in_one_line(
    recorded: Path, server_a: LiveServer, tmp_path: Path, spoil: Callable[[dict[str, Any]], None]
) -> None:
    """A key view the spec refuses, a key that is not a key, or one page of a paged list (a
    `last_key` interface 1.2.14 does not have): the batch holding the spoilt list (heights
    30..39) stores nothing, the one before it stays, and the error names the height and the
    account."""
    height, account = 35, "alice.localnet"
    block_hash = result(server_a.url, "block", {"block_id": height})["header"]["hash"]
    store = tmp_path / "b.sqlite"
    with json_rpc_proxy(server_a.url, _spoiling(block_hash, account, spoil)) as node:
        done = record(node, store, "--batch-heights", "10", heights=(FROM, 49))
    # requests still in flight when the batch fails may log a retry warning as the client closes
    lines = [line for line in done.stderr.strip().splitlines() if " WARNING nearrpc.import: " not in line]
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"nearrpc import rpc: height {height}: ") and account in lines[0], lines[0]
    print("\n" + lines[0])
    tables = dump(store)
    assert {row[1] for row in tables["blocks"]} == {h for h in sample_facts().block_heights if FROM <= h < 30}
    assert max(row[1] for row in tables["account_states"]) < 30
    assert tables["access_keys"] and max(row[2] for row in tables["access_keys"]) < 30
