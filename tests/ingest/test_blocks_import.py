"""`nearrpc import blocks`: saved JSON-RPC answers from files, served back byte for byte.

The inputs are exported from instance A (the sample store, served live) in every supported
form: bare results and whole responses, a JSON array, JSON lines, a folder of single files,
recorded exchanges and responses with context members. Instance B serves the imported store
and must answer exactly as A does. Real testnet answers are imported in test_captured_answers.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.ingest.conftest import call, digest, result
from tests.support.cli import nearrpc
from tests.support.live_server import LiveServer, running_server
from tests.support.sample_facts import SampleFacts, sample_facts

pytestmark = pytest.mark.live

ACCOUNTS = ("alice.localnet", "temp.localnet", "ephemeral.alice.localnet", "counter.localnet", "node2")


def _response(value: Any, **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "result": value, "id": "dontcare", **extra}


def _raw(url: str, method: str, params: Any) -> dict[str, Any]:
    answer: dict[str, Any] = orjson.loads(call(url, method, params)[1])
    return answer


def _lines(path: Path, values: list[Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(v) + b"\n" for v in values))


def _json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(value, option=orjson.OPT_INDENT_2))


def export_configs_and_blocks(url: str, facts: SampleFacts, folder: Path) -> None:
    """Genesis and client config, and every height's `block` answer, in three forms."""
    _json(folder / "configs" / "genesis.json", _raw(url, "genesis_config", None))
    _json(folder / "configs" / "client.json", result(url, "client_config", None))  # bare
    answers = {h: _raw(url, "block", {"block_id": h}) for h in range(facts.genesis_height, facts.head_height + 1)}
    # heights 0..40: a JSON array of bare results (skipped heights left out)
    _json(folder / "part1" / "blocks.json", [a["result"] for h, a in answers.items() if h <= 40 and "result" in a])
    # 41..80: JSON lines of whole responses, errors of skipped heights included (ignored on import)
    _lines(folder / "part2" / "blocks.jsonl", [a for h, a in answers.items() if 40 < h <= 80])
    # 81..: one response per file, as `curl ... > height.json` leaves them
    for h, answer in answers.items():
        if h > 80:
            _json(folder / "part3" / f"{h:06d}.json", answer)


def export_epochs(url: str, facts: SampleFacts, folder: Path) -> None:
    """Each epoch's protocol config, tied to a block in the three supported ways."""
    values: list[Any] = []
    for epoch in facts.epochs:
        height = epoch.first_height if epoch.first_height not in facts.skipped_heights else epoch.first_height + 1
        request = {"jsonrpc": "2.0", "id": 1, "method": "EXPERIMENTAL_protocol_config", "params": {"block_id": height}}
        answer = _raw(url, "EXPERIMENTAL_protocol_config", {"block_id": height})
        if epoch.index % 3 == 0:
            values.append({"request": request, "response": answer})
        elif epoch.index % 3 == 1:
            block_hash = result(url, "block", {"block_id": height})["header"]["hash"]
            values.append({**answer, "block_hash": block_hash})
        else:
            values.append({**answer, "epoch_id": epoch.epoch_id})
    _lines(folder / "epochs.jsonl", values)


def export_accounts(url: str, facts: SampleFacts, folder: Path) -> None:
    """States of ACCOUNTS at every block, in the three forms; UNKNOWN_ACCOUNT answers kept."""
    values: list[Any] = []
    for h in facts.block_heights:
        for index, account in enumerate(ACCOUNTS):
            params = {"block_id": h, "account_id": account}
            answer = _raw(url, "EXPERIMENTAL_view_account", params)
            if "error" in answer or index % 3 == 0:
                request = {"jsonrpc": "2.0", "id": 1, "method": "EXPERIMENTAL_view_account", "params": params}
                values.append({"request": request, "response": answer})
            elif index % 3 == 1:
                values.append({**answer, "account_id": account})
            else:
                values.append({**answer["result"], "account_id": account})
    _lines(folder / "accounts.jsonl", values)


def compare(a: LiveServer, b: LiveServer, requests: list[tuple[str, Any]]) -> int:
    """Send each request to A and B; the HTTP statuses and response bytes must be identical."""
    for method, params in requests:
        assert call(a.url, method, params) == call(b.url, method, params), (method, params)
    return len(requests)


def block_requests(facts: SampleFacts, heights: range, *, accounts: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    hashes = {h: None for h in heights}
    requests: list[tuple[str, Any]] = [("genesis_config", None), ("client_config", None)]
    for h in hashes:
        for method in ("block", "EXPERIMENTAL_protocol_config"):
            requests.append((method, {"block_id": h}))
        requests.extend(("EXPERIMENTAL_view_account", {"block_id": h, "account_id": a}) for a in accounts)
    return requests


def by_hash(server: LiveServer, requests: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The same requests with block hashes (where the height has a block) instead of heights."""
    out = []
    for method, params in requests:
        if isinstance(params, dict) and isinstance(params.get("block_id"), int):
            answer = _raw(server.url, "block", {"block_id": params["block_id"]})
            if "result" in answer:
                out.append((method, {**params, "block_id": answer["result"]["header"]["hash"]}))
    return out


def test_every_form_imports_and_is_served_byte_identical(tmp_path: Path, server_a: LiveServer) -> None:
    facts = sample_facts()
    folder = tmp_path / "export"
    export_configs_and_blocks(server_a.url, facts, folder)
    export_epochs(server_a.url, facts, folder)
    export_accounts(server_a.url, facts, folder)
    store = tmp_path / "b.sqlite"
    done = nearrpc("import", "blocks", folder, "--store", store)
    print(done.stdout, done.stderr)
    assert done.returncode == 0, done.stderr
    assert f"{len(facts.block_heights)} blocks (heights 0..{facts.head_height})" in done.stdout
    assert f"{len(facts.epochs)} protocol configs" in done.stdout
    assert "note:" not in done.stdout  # every epoch's record came from its protocol config
    errors_kept = [h for h in facts.skipped_heights if h > 40]  # parts 2 and 3 keep the error responses
    assert f"ignored: {len(errors_kept)} x error response UNKNOWN_BLOCK" in done.stdout

    with running_server(store, tmp_path / "b.log") as b:
        requests = block_requests(facts, range(facts.genesis_height, facts.head_height + 1), accounts=ACCOUNTS)
        requests += by_hash(server_a, requests)
        requests += [(m, {k: v for k, v in p.items() if k != "block_id"} | {"finality": f})
                     for f in ("optimistic", "near-final", "final")
                     for m, p in [("block", {}), ("EXPERIMENTAL_protocol_config", {}),
                                  ("EXPERIMENTAL_view_account", {"account_id": "alice.localnet"})]]
        requests += [(m, {"sync_checkpoint": c}) for c in ("genesis", "earliest_available")
                     for m in ("block", "EXPERIMENTAL_protocol_config")]
        print(f"compared {compare(server_a, b, requests)} requests: identical")


def test_blocks_without_protocol_configs_get_inferred_epochs(tmp_path: Path, server_a: LiveServer) -> None:
    """Without protocol configs the epochs are inferred (and said so). On the sample chain the
    inference is exact: its first two epochs run the genesis version and every later one the
    version all headers vote for, with the genesis epoch values."""
    facts = sample_facts()
    folder = tmp_path / "export"
    export_configs_and_blocks(server_a.url, facts, folder)
    store = tmp_path / "b.sqlite"
    done = nearrpc("import", "blocks", folder, "--store", store)
    print(done.stdout)
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stdout.splitlines() if "note: epoch" in line]
    assert len(notes) == len(facts.epochs)
    for epoch, note in zip(facts.epochs, notes, strict=True):
        assert f"epoch {epoch.epoch_id} (heights {epoch.first_height}..{epoch.last_height})" in note
        assert f"protocol version {epoch.protocol_version} inferred" in note
    with running_server(store, tmp_path / "b.log") as b:
        requests = [("EXPERIMENTAL_protocol_config", {"block_id": h}) for h in facts.block_heights]
        print(f"compared {compare(server_a, b, requests)} protocol config answers: identical")


# -- bad input


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, server_a: LiveServer) -> Path:
    folder = tmp_path_factory.mktemp("exported")
    export_configs_and_blocks(server_a.url, sample_facts(), folder)
    return folder


@pytest.fixture
def base_store(tmp_path: Path, exported: Path) -> Path:
    store = tmp_path / "base.sqlite"
    assert nearrpc("import", "blocks", exported / "configs", "--store", store).returncode == 0
    assert nearrpc("import", "blocks", exported / "part1", "--store", store).returncode == 0
    return store


def _fails(store: Path, path: Path, pattern: str) -> None:
    before = digest(store)
    done = nearrpc("import", "blocks", path, "--store", store)
    print(done.stderr)
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert re.search(pattern, done.stderr), done.stderr
    assert digest(store) == before


def test_broken_line_in_the_middle(tmp_path: Path, base_store: Path, exported: Path) -> None:
    lines = (exported / "part2" / "blocks.jsonl").read_bytes().splitlines(keepends=True)
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"".join(lines[:17]) + lines[17][:-40] + b"\n" + b"".join(lines[18:]))
    _fails(base_store, broken, rf"^nearrpc import blocks: {re.escape(str(broken))}: line 18: invalid JSON: ")


def test_invalid_block_in_an_array(tmp_path: Path, base_store: Path, exported: Path) -> None:
    blocks = orjson.loads((exported / "part1" / "blocks.json").read_bytes())
    blocks[12]["header"]["gas_price"] = 100
    broken = tmp_path / "broken.json"
    broken.write_bytes(orjson.dumps(blocks))
    _fails(base_store, broken, rf"{re.escape(str(broken))}: \[12\]: RpcBlockResponse at header/gas_price: ")


def test_truncated_array_names_the_element(tmp_path: Path, base_store: Path, exported: Path) -> None:
    text = (exported / "part1" / "blocks.json").read_bytes()
    broken = tmp_path / "truncated.json"
    broken.write_bytes(text[: len(text) // 2])
    _fails(base_store, broken, rf"{re.escape(str(broken))}: \[\d+\]: invalid JSON \(near byte \d+\)")


def test_bad_file_in_a_folder_and_inconsistent_items(tmp_path: Path, base_store: Path, exported: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    for name in ("a.json", "c.json"):
        (folder / name).write_bytes((exported / "part3" / "000090.json").read_bytes())
    (folder / "b.json").write_bytes(b'{"jsonrpc": "2.0", "result": {"hello": "world"}, "id": 1}')
    _fails(base_store, folder, rf"{re.escape(str(folder / 'b.json'))}: not a block, account view")

    block_5 = result_of(exported, 5)
    view = {"amount": "1", "locked": "0", "code_hash": "11111111111111111111111111111111", "storage_usage": 182,
            "storage_paid_at": 0, "block_height": 5, "block_hash": block_5["header"]["prev_hash"]}
    wrong_block = tmp_path / "wrong_block.jsonl"
    _lines(wrong_block, [{**view, "account_id": "alice.localnet"}])
    _fails(base_store, wrong_block, r"line 1: account alice.localnet was read at block \w+, but the block at height 5")

    config = {"protocol_version": 86, "chain_id": "nearrpc-localnet", "runtime_config": {}}
    untied = tmp_path / "untied.jsonl"
    _lines(untied, [block_5, _response(config)])
    _fails(base_store, untied, r"untied.jsonl: line 2: a protocol config does not say at which block it was read")
    unknown = tmp_path / "unknown.jsonl"
    _lines(unknown, [_response(config, block_height=99_999)])
    _fails(base_store, unknown, r"line 1: the protocol config was read at block 99999, which is neither stored")


def result_of(exported: Path, height: int) -> dict[str, Any]:
    for value in orjson.loads((exported / "part1" / "blocks.json").read_bytes()):
        if value["header"]["height"] == height:
            block: dict[str, Any] = value
            return block
    raise AssertionError(height)


def test_blocks_need_a_genesis_config(tmp_path: Path, exported: Path) -> None:
    store = tmp_path / "new.sqlite"
    done = nearrpc("import", "blocks", exported / "part1", "--store", store)
    assert done.returncode == 1
    assert "the store holds no genesis config and the input has none" in done.stderr
    assert not store.exists()


def test_a_block_that_cannot_be_of_the_stores_chain_is_refused(tmp_path: Path, base_store: Path,
                                                               exported: Path) -> None:
    # a block names no chain; one produced for a protocol older than the genesis one, or below
    # the genesis height, cannot be of this chain
    genesis = orjson.loads((exported / "configs" / "genesis.json").read_bytes())["result"]
    old_producer = result_of(exported, 30)
    old_producer["header"]["latest_protocol_version"] = genesis["protocol_version"] - 1
    older = tmp_path / "older.jsonl"
    _lines(older, [result_of(exported, 31), old_producer])
    _fails(base_store, older, rf"older.jsonl: line 2: block {old_producer['header']['hash']} at height 30 is not "
                              rf"of chain 'nearrpc-localnet': its producer runs protocol version "
                              rf"{genesis['protocol_version'] - 1}, older than the genesis protocol version "
                              rf"{genesis['protocol_version']}$")
    later_genesis = tmp_path / "later_genesis.jsonl"
    below = result_of(exported, 5)
    _lines(later_genesis, [_response({**genesis, "genesis_height": 10}), result_of(exported, 12), below])
    store = tmp_path / "new.sqlite"
    done = nearrpc("import", "blocks", later_genesis, "--store", store)
    assert done.returncode == 1 and not store.exists()
    assert done.stderr == (f"nearrpc import blocks: {later_genesis}: line 3: block {below['header']['hash']} at "
                           "height 5 is not of chain 'nearrpc-localnet', whose genesis height is 10\n")


def export_access_keys_and_code(url: str, facts: SampleFacts, folder: Path) -> None:
    """Each of ACCOUNTS' key lists at every block (as exchanges: a list names its account only in
    the request), half through query, half through the EXPERIMENTAL view; the contract's code."""
    values: list[Any] = []
    for h in facts.block_heights:
        for index, account in enumerate(ACCOUNTS):
            params: dict[str, Any] = {"block_id": h, "account_id": account}
            method = "EXPERIMENTAL_view_access_key_list"
            if index % 2:
                method, params = "query", {**params, "request_type": "view_access_key_list"}
            request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            values.append({"request": request, "response": _raw(url, method, params)})
    code = _raw(url, "EXPERIMENTAL_view_code", {"finality": "final", "account_id": facts.contract_account})
    values.append(code)
    _lines(folder / "keys.jsonl", values)


@pytest.mark.long(0.4)  # started first (tests/conftest.py)
def test_saved_key_lists_and_code_are_served_as_recorded(tmp_path: Path, server_a: LiveServer) -> None:
    """Beyond interface 1.2.14: key lists become key states (a key missing from a later list is
    deleted there), code is stored by its hash; the answers come back byte for byte."""
    facts = sample_facts()
    folder = tmp_path / "export"
    export_configs_and_blocks(server_a.url, facts, folder)
    export_epochs(server_a.url, facts, folder)
    export_accounts(server_a.url, facts, folder)
    export_access_keys_and_code(server_a.url, facts, folder)
    store = tmp_path / "b.sqlite"
    done = nearrpc("import", "blocks", folder, "--store", store)
    assert done.returncode == 0, done.stderr
    assert "1 contract codes" in done.stdout
    with running_server(store, tmp_path / "b.log") as b:
        requests: list[tuple[str, Any]] = [
            ("EXPERIMENTAL_view_access_key_list", {"block_id": h, "account_id": a})
            for h in facts.block_heights for a in ACCOUNTS
        ]  # fmt: skip
        requests.append(("EXPERIMENTAL_view_code", {"finality": "final", "account_id": facts.contract_account}))
        print(f"compared {compare(server_a, b, requests)} requests: identical")
