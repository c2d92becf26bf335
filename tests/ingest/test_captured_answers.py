"""Real testnet answers (../shared/reference/captured/, from NEAR's public documentation, 2025):
imported and served back.

* `import blocks` of the captured `genesis_config` and `block` answers: the block comes back byte
  for byte by height, by hash and as the head; the genesis config as the node sent it, since saved
  answers are replayed as they were.
* `import genesis` of a genesis file holding the captured config: the config a current node
  answers with. The nodes of 2025 still sent `avg_hidden_validator_seats_per_shard`,
  `num_block_producer_seats_per_shard` and `num_chunk_only_producer_seats`; nearcore 2.12.0
  removed them from GenesisConfig and ProtocolConfigView (nearcore PR #15425, CHANGELOG "Removed
  deprecated fields"), and interface 1.2.14 has none of them, so the import drops exactly these
  three and keeps every other value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from nearrpc.nearcore.genesis_fields import GENESIS_FIELD_ORDER
from tests.ingest.conftest import call, digest, result
from tests.support.cli import nearrpc
from tests.support.live_server import running_server

pytestmark = pytest.mark.live

LEGACY_SEAT_FIELDS = ("avg_hidden_validator_seats_per_shard", "num_block_producer_seats_per_shard",
                      "num_chunk_only_producer_seats")  # fmt: skip


def _captured(reference: Path, name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = orjson.loads((reference / "captured" / name).read_bytes())
    return loaded


def _envelope(result_value: Any, request_id: str) -> bytes:
    return b'{"jsonrpc":"2.0","result":' + orjson.dumps(result_value) + b',"id":"' + request_id.encode() + b'"}'


def test_the_captured_block_and_genesis_config_are_served_back(reference: Path, tmp_path: Path) -> None:
    genesis_file = reference / "captured" / "genesis_config_testnet.json"
    block_file = reference / "captured" / "block_testnet_h187310138.json"
    block = _captured(reference, block_file.name)["result"]
    genesis = _captured(reference, genesis_file.name)["result"]
    assert set(LEGACY_SEAT_FIELDS) <= set(genesis)  # what these 2025 answers carry

    store = tmp_path / "testnet.sqlite"
    for path in (genesis_file, block_file):
        done = nearrpc("import", "blocks", path, "--store", store)
        print(done.stdout)
        assert done.returncode == 0, done.stderr
    header = block["header"]
    with running_server(store, tmp_path / "serve.log") as server:
        expected = _envelope(block, "captured")
        for params in ({"block_id": header["height"]}, {"block_id": header["hash"]}, [header["hash"]]):
            assert call(server.url, "block", params, request_id="captured") == (200, expected), params
        assert call(server.url, "block", {"finality": "optimistic"}, request_id="captured") == (200, expected)
        assert call(server.url, "genesis_config", None, request_id="captured") == (200, _envelope(genesis, "captured"))
        config = result(server.url, "EXPERIMENTAL_protocol_config", {"block_id": header["hash"]})
        assert (config["chain_id"], config["protocol_version"]) == ("testnet", header["latest_protocol_version"])
        assert not set(LEGACY_SEAT_FIELDS) & set(config)  # computed as a current node does


def test_a_genesis_file_with_the_captured_config_answers_as_a_current_node(reference: Path, tmp_path: Path) -> None:
    captured = _captured(reference, "genesis_config_testnet.json")["result"]
    genesis_file = tmp_path / "genesis.json"
    genesis_file.write_bytes(orjson.dumps({**captured, "records": []}))
    store = tmp_path / "genesis.sqlite"
    done = nearrpc("import", "genesis", genesis_file, "--store", store)
    print(done.stdout)
    assert done.returncode == 0, done.stderr
    dropped = [line for line in done.stdout.splitlines() if "dropped members" in line]
    assert dropped == [f"  dropped members that are not GenesisConfig fields: {', '.join(LEGACY_SEAT_FIELDS)}"]

    with running_server(store, tmp_path / "serve.log") as server:
        served = result(server.url, "genesis_config", None)
    assert list(served) == list(GENESIS_FIELD_ORDER)  # nearcore's struct order
    assert served == {key: value for key, value in captured.items() if key not in LEGACY_SEAT_FIELDS}


def test_the_captured_testnet_block_is_refused_by_a_localnet_store(
    reference: Path, sample_store: Path, tmp_path: Path
) -> None:
    store = tmp_path / "localnet.sqlite"
    store.write_bytes(sample_store.read_bytes())
    before = digest(store)
    block_file = reference / "captured" / "block_testnet_h187310138.json"
    done = nearrpc("import", "blocks", block_file, "--store", store)
    assert done.returncode == 1
    assert done.stderr.startswith(f"nearrpc import blocks: {block_file}: block ")
    assert "is not of chain 'nearrpc-localnet': its producer runs protocol version" in done.stderr
    assert done.stderr.count("\n") == 1 and digest(store) == before
