"""`nearrpc import genesis`: nearcore genesis files into stores, in real processes.

Covers the projection of the config, account records at the genesis height, other record
kinds counted, record order variants, a separate records file, bounded memory on a large file
(peak RSS measured with wait4), bad input (clear one-line errors, store unchanged), a SIGKILL
mid-import, and what a live server answers for a store without blocks.
"""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from nearrpc.ingest.genesis_import import code_hash
from nearrpc.nearcore.genesis_fields import GENESIS_DEFAULTS, GENESIS_FIELD_ORDER
from nearrpc.sample import sample_chain
from nearrpc.store import open_store
from nearrpc.store.sqlite import staging_path
from tests.ingest.conftest import REPO, call, digest
from tests.ingest.genesis_files import (
    CHAIN_ID,
    GENESIS_HEIGHT,
    expected_view,
    genesis_members,
    some_records,
    write_big_genesis,
    write_genesis,
)
from tests.store.sqlite_files import count_rows, dump
from tests.support.cli import nearrpc
from tests.support.live_server import running_server

pytestmark = pytest.mark.live


def expected_config(members: dict[str, Any]) -> dict[str, Any]:
    return {field: members[field] if field in members else GENESIS_DEFAULTS[field] for field in GENESIS_FIELD_ORDER}


def client_config_file(path: Path, chain_id: str = CHAIN_ID) -> Path:
    """A saved client_config JSON-RPC response (the sample node's, for this chain)."""
    config = orjson.loads(sample_chain().client_config_json)
    config["chain_id"] = chain_id
    path.write_bytes(orjson.dumps({"jsonrpc": "2.0", "result": config, "id": "dontcare"}, option=orjson.OPT_INDENT_2))
    return path


def imported(tmp_path: Path, records: list[dict[str, Any]] | None = None, **kwargs: Any) -> Path:
    records = some_records() if records is None else records
    genesis = write_genesis(tmp_path / "genesis.json", genesis_members(), records, **kwargs)
    store = tmp_path / "store.sqlite"
    done = nearrpc("import", "genesis", genesis, "--store", store,
                   "--client-config", client_config_file(tmp_path / "client.json"))
    assert done.returncode == 0, done.stderr
    return store


def test_genesis_file_becomes_config_and_account_states(tmp_path: Path) -> None:
    records = some_records()
    genesis = write_genesis(tmp_path / "genesis.json", genesis_members(), records)
    store = tmp_path / "store.sqlite"
    done = nearrpc("import", "genesis", genesis, "--store", store,
                   "--client-config", client_config_file(tmp_path / "client.json"))
    print(done.stdout)
    assert done.returncode == 0, done.stderr
    accounts = [r for r in records if "Account" in r]
    keys = [r["AccessKey"] for r in records if "AccessKey" in r]
    contracts = [r["Contract"] for r in records if "Contract" in r]
    data = [r["Data"] for r in records if "Data" in r]
    assert keys and contracts and len(data) >= 2
    assert (
        f"records: {len(records)}; account states written: {len(accounts)}; access keys: {len(keys)}; "
        f"contract codes: {len(contracts)}; contract state keys: {len(data)}; other records" in done.stdout
    )
    assert "AccessKey" not in done.stdout and "Contract" not in done.stdout and "PostponedReceipt" in done.stdout
    assert "Data" not in done.stdout.replace("ReceivedData", "")
    assert "num_block_producer_seats_per_shard, avg_hidden_validator_seats_per_shard" in done.stdout

    reader = open_store(store, "read")
    try:
        stored = reader.genesis_config_json()
        assert stored == orjson.dumps(expected_config(genesis_members()))
        assert list(orjson.loads(stored)) == list(GENESIS_FIELD_ORDER)
        for record in accounts:
            account_id = record["Account"]["account_id"]
            view = reader.account_json(account_id, GENESIS_HEIGHT)
            assert view == orjson.dumps(expected_view(record)), account_id
            assert reader.account_json(account_id, GENESIS_HEIGHT - 1) is None
        for key in keys:  # stored at the genesis height, as the record has it
            stored = reader.access_key_json(key["account_id"], key["public_key"], GENESIS_HEIGHT)
            assert stored == orjson.dumps(key["access_key"]), key
            assert reader.access_key_json(key["account_id"], key["public_key"], GENESIS_HEIGHT - 1) is None
        for contract in contracts:
            code = base64.b64decode(contract["code"])
            assert reader.contract_code(code_hash(code)) == code
        for entry in data:  # one storage key each, at the genesis height
            account_id, key = entry["account_id"], base64.b64decode(entry["data_key"])
            assert reader.contract_value(account_id, key, GENESIS_HEIGHT) == base64.b64decode(entry["value"])
            assert reader.contract_value(account_id, key, GENESIS_HEIGHT - 1) is None
            assert reader.contract_state(account_id, b"", GENESIS_HEIGHT, 10) == [
                (key, base64.b64decode(entry["value"]))
            ]
        info = reader.info()
        assert (info.access_key_count, info.contract_code_count) == (len(keys), len(contracts))
        assert info.contract_data_count == len(data)
        assert (info.chain_id, info.genesis_height, info.block_count, info.epoch_count) == (CHAIN_ID, 1000, 0, 0)
        assert info.account_state_count == len(accounts)
    finally:
        reader.close()
    assert not staging_path(store).exists()
    assert not Path(f"{store}-wal").exists()  # a new store is left with a rollback journal


def test_record_order_and_separate_records_file_give_the_same_store(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    normal = imported(tmp_path / "a")
    (tmp_path / "b").mkdir()
    records_first = imported(tmp_path / "b", records_first=True, indent=False)
    assert dump(records_first) == dump(normal)

    (tmp_path / "c").mkdir()
    genesis = write_genesis(tmp_path / "c" / "genesis.json", genesis_members(), [])
    records = tmp_path / "c" / "records.json"
    records.write_bytes(orjson.dumps(some_records()))
    store = tmp_path / "c" / "store.sqlite"
    done = nearrpc("import", "genesis", genesis, "--records", records, "--store", store,
                   "--client-config", client_config_file(tmp_path / "c" / "client.json"))
    assert done.returncode == 0, done.stderr
    assert dump(store) == dump(normal)


def test_store_without_blocks_is_served_with_the_documented_errors(tmp_path: Path) -> None:
    """A genesis-only store: configs are served; every block-reading method answers as a node
    without blocks does (UNKNOWN_BLOCK; for `earliest_available`: NOT_SYNCED_YET from `block`,
    INTERNAL_ERROR from EXPERIMENTAL_view_account)."""
    store = imported(tmp_path)
    with running_server(store, tmp_path / "serve.log") as server:
        status, body = call(server.url, "genesis_config", None)
        assert status == 200
        assert body == b'{"jsonrpc":"2.0","result":' + orjson.dumps(expected_config(genesis_members())) + b',"id":"t"}'
        answers = {
            ("block", "finality"): call(server.url, "block", {"finality": "final"}),
            ("block", "height"): call(server.url, "block", {"block_id": GENESIS_HEIGHT}),
            ("block", "genesis"): call(server.url, "block", {"sync_checkpoint": "genesis"}),
            ("block", "earliest"): call(server.url, "block", {"sync_checkpoint": "earliest_available"}),
            ("protocol_config", "finality"): call(server.url, "EXPERIMENTAL_protocol_config", {"finality": "final"}),
            ("protocol_config", "earliest"): call(server.url, "EXPERIMENTAL_protocol_config",
                                                  {"sync_checkpoint": "earliest_available"}),
            ("view_account", "earliest"): call(server.url, "EXPERIMENTAL_view_account",
                                               {"sync_checkpoint": "earliest_available", "account_id": "alice.near"}),
            ("view_account", "finality"): call(server.url, "EXPERIMENTAL_view_account",
                                               {"finality": "final", "account_id": "alice.near"}),
        }
        for key, (status, body) in answers.items():
            print(key, status, body.decode())
        causes = {key: orjson.loads(body)["error"]["cause"]["name"] for key, (_, body) in answers.items()}
        assert causes == {
            ("block", "finality"): "UNKNOWN_BLOCK",
            ("block", "height"): "UNKNOWN_BLOCK",
            ("block", "genesis"): "UNKNOWN_BLOCK",
            ("block", "earliest"): "NOT_SYNCED_YET",
            ("protocol_config", "finality"): "UNKNOWN_BLOCK",
            ("protocol_config", "earliest"): "UNKNOWN_BLOCK",
            ("view_account", "finality"): "UNKNOWN_BLOCK",
            ("view_account", "earliest"): "INTERNAL_ERROR",  # nearcore: "no fully synchronized blocks"
        }


# Runs the CLI in a child and reports the child's peak RSS (getrusage RUSAGE_CHILDREN). The
# extra process level matters: Linux carries the high-water RSS of the process that spawned a
# program into that program's ru_maxrss, so measuring a direct child of pytest would report
# pytest's own size. This launcher is small, so its children's figure is their own.
_MEASURE = """
import resource, subprocess, sys
done = subprocess.run([sys.executable, "-m", "nearrpc", *sys.argv[1:]], capture_output=True, text=True)
sys.stdout.write(done.stdout)
sys.stderr.write(done.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
sys.exit(done.returncode)
"""


def _peak_rss(args: list[str]) -> tuple[int, float, str]:
    """Run the CLI in a process of its own; (peak RSS in bytes, seconds, stdout)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEARRPC_")}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", _MEASURE, *args], cwd=REPO, env=env, capture_output=True,
                          text=True, check=False)
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    *lines, rss = done.stdout.splitlines()
    return int(rss), seconds, "\n".join(lines)


def test_large_genesis_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    small, large = tmp_path / "small.json", tmp_path / "large.json"
    small_count, small_size = write_big_genesis(small, 200, code_bytes=100_000, data=7)
    large_count, large_size = write_big_genesis(large, 21_200, code_bytes=100_000, data=7)
    assert large_count >= 200_000
    small_rss, small_seconds, _ = _peak_rss(["import", "genesis", str(small), "--store", str(tmp_path / "s.sqlite")])
    large_rss, large_seconds, out = _peak_rss(["import", "genesis", str(large), "--store", str(tmp_path / "l.sqlite")])
    mib = 1 << 20
    print(
        f"\nsmall: {small_count} records, {small_size / mib:.1f} MiB file, peak RSS {small_rss / mib:.1f} MiB, "
        f"{small_seconds:.1f} s\nlarge: {large_count} records, {large_size / mib:.1f} MiB file, peak RSS "
        f"{large_rss / mib:.1f} MiB, {large_seconds:.1f} s ({large_count / large_seconds:.0f} records/s)\n{out}"
    )
    assert f"records: {large_count}; account states written: 21200" in out
    # 100x the records, about the same memory: what the process holds beyond its start-up
    # (interpreter, pydantic, jsonschema) does not grow with the file
    assert large_rss - small_rss < 8 * mib < large_size / 8


# -- bad input: one line naming the file and the position; the store is left as it was


@pytest.fixture
def existing_store(tmp_path: Path) -> Path:
    base = tmp_path / "base"
    base.mkdir()
    return imported(base)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda r: r.__setitem__(7, {"Account": {"account_id": "bad..id", "account": r[7]["Account"]["account"]}}),
         r"records\[7\] \(Account bad\.\.id\): AccountId"),
        (lambda r: r[5]["Account"]["account"].__setitem__("storage_usage", -3),
         r"records\[5\] \(Account widget\.near\): RpcViewAccountResponse at storage_usage"),
        (lambda r: r[6]["Account"]["account"].__setitem__("amount", "1.5"),
         r"records\[6\]: account\.amount must be a decimal string of yoctoNEAR, got '1\.5'"),
        (lambda r: r[3]["Account"]["account"].pop("storage_usage"),
         r"records\[3\]: Account counter\.near: account\.storage_usage is missing"),
        (lambda r: r.__setitem__(9, {"AccessKey": {}, "Data": {}}),
         r"records\[9\]: a record must be an object with exactly one member"),
        (lambda r: r.__setitem__(9, {"Data": {"account_id": "alice.near", "data_key": "S T", "value": ""}}),
         r"records\[9\]: Data of alice\.near: data_key must be a base64 string"),
        (lambda r: r.__setitem__(9, {"Data": {"account_id": "Bad", "data_key": "", "value": ""}}),
         r"records\[9\] \(Data of Bad\): contract state of 'Bad': not a valid account id"),
    ],
)
def test_bad_record_names_file_and_index_and_stores_nothing(
    tmp_path: Path, existing_store: Path, mutate: Any, message: str
) -> None:
    records = some_records()
    for record in records:  # new balances, so a partial import would show
        if "Account" in record:
            record["Account"]["account"]["amount"] = "1"
    mutate(records)
    genesis = write_genesis(tmp_path / "broken.json", genesis_members(), records)
    before = digest(existing_store)
    done = nearrpc("import", "genesis", genesis, "--store", existing_store)
    print(done.stderr)
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"nearrpc import genesis: {genesis}: ")
    import re

    assert re.search(message, done.stderr), done.stderr
    assert digest(existing_store) == before


def test_broken_json_and_bad_config_are_reported_with_their_position(tmp_path: Path, existing_store: Path) -> None:
    before = digest(existing_store)
    genesis = write_genesis(tmp_path / "g.json", genesis_members(), some_records(), indent=False)
    text = genesis.read_bytes()
    cut = text.index(b'{"Account":{"account_id":"counter.near"')
    truncated = tmp_path / "truncated.json"
    truncated.write_bytes(text[: cut + 30] + b"}}]}")
    done = nearrpc("import", "genesis", truncated, "--store", existing_store)
    print(done.stderr)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{truncated}: invalid JSON (near byte" in done.stderr and "(after records[2])" in done.stderr

    members = genesis_members()
    del members["epoch_length"]
    no_epoch_length = write_genesis(tmp_path / "no_epoch_length.json", members, some_records())
    done = nearrpc("import", "genesis", no_epoch_length, "--store", existing_store)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"nearrpc import genesis: {no_epoch_length}: genesis config: "
        "genesis config lacks required field(s) epoch_length"
    )

    members = genesis_members()
    members["gas_limit"] = "a lot"
    wrong_type = write_genesis(tmp_path / "wrong_type.json", members, some_records())
    done = nearrpc("import", "genesis", wrong_type, "--store", existing_store)
    assert done.returncode == 1 and f"{wrong_type}: genesis config: GenesisConfig at gas_limit" in done.stderr

    other_chain = write_genesis(tmp_path / "other.json", genesis_members("mainnet"), some_records())
    done = nearrpc("import", "genesis", other_chain, "--store", existing_store)
    assert done.returncode == 1
    assert f"holds chain '{CHAIN_ID}'; refusing a genesis config of chain 'mainnet'" in done.stderr

    done = nearrpc("import", "genesis", tmp_path / "missing.json", "--store", existing_store)
    assert done.returncode == 2  # the command names what is not there (cli/refusals.py)
    assert done.stderr.strip() == f"nearrpc import genesis: {tmp_path / 'missing.json'}: no such file"
    assert digest(existing_store) == before


def test_failed_import_into_a_new_store_leaves_no_file(tmp_path: Path) -> None:
    records = some_records()
    records[4]["Account"]["account"]["locked"] = "-1"
    genesis = write_genesis(tmp_path / "broken.json", genesis_members(), records)
    store = tmp_path / "new.sqlite"
    done = nearrpc("import", "genesis", genesis, "--store", store)
    assert done.returncode == 1 and "records[4]: account.locked must be a decimal string" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.json"]


def _read_position(pid: int, file: Path) -> int | None:
    """How far process `pid` has read into `file` (its descriptor's offset), from /proc."""
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            if os.readlink(fd) == str(file):
                for line in Path(f"/proc/{pid}/fdinfo/{fd.name}").read_text().splitlines():
                    if line.startswith("pos:"):
                        return int(line.split()[1])
    except OSError:  # the process or descriptor went away meanwhile
        return None
    return None


def _kill_half_way(args: list[str], source: Path) -> None:
    """Start an import and SIGKILL it once it has read half of `source`, so its batch is open
    and half written."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEARRPC_")}
    process = subprocess.Popen([sys.executable, "-m", "nearrpc", *args], cwd=REPO, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    size = source.stat().st_size
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, "the import ended before it could be killed"
        assert time.monotonic() < deadline
        position = _read_position(process.pid, source)
        if position is not None and position > size // 2:
            break
        time.sleep(0.005)
    os.kill(process.pid, signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL
    print(f"\nkilled the import after it had read {position / size:.0%} of {source.name}")


def test_sigkill_mid_import_leaves_the_store_unchanged_and_a_rerun_completes(
    tmp_path: Path, existing_store: Path
) -> None:
    big = tmp_path / "big.json"
    count, _ = write_big_genesis(big, 8_000, data=7)
    before = dump(existing_store)
    args = ["import", "genesis", str(big), "--store", str(existing_store)]
    _kill_half_way(args, big)
    assert dump(existing_store) == before  # SQLite ignores the uncommitted WAL frames

    done = nearrpc(*args)
    assert done.returncode == 0, done.stderr
    assert f"records: {count}; account states written: 8000" in done.stdout
    assert count_rows(existing_store, "account_states") == 8000 + len(before["account_states"])


def test_sigkill_while_creating_a_store_leaves_no_store_and_a_rerun_completes(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    write_big_genesis(big, 8_000, data=7)
    store = tmp_path / "new.sqlite"
    args = ["import", "genesis", str(big), "--store", str(store)]
    _kill_half_way(args, big)
    assert staging_path(store).exists()  # the half-built store, never renamed into place
    assert not store.exists()
    done = nearrpc(*args)
    assert done.returncode == 0, done.stderr
    assert store.exists() and not staging_path(store).exists()
    assert not Path(f"{staging_path(store)}-wal").exists()
