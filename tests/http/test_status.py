"""GET /status in nearcore's shape: its members and their order, filled from the store and the
service (the genesis validators, the service's own node key, no validator key), and our own
summary under `nearrpc`."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from nearrpc.methods.node_key import node_public_key
from nearrpc.methods.status import block_time
from nearrpc.version import INTERFACE_VERSION, SERVICE_VERSION
from tests.support.live_server import LiveServer
from tests.support.rpc import call
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.live

# The top-level members of a real nearcore status answer: testnet, nearcore 2.4.0-rc.1, as the
# NEAR documentation's network RPC page shows it.
REAL_STATUS_MEMBERS = {
    "chain_id", "genesis_hash", "latest_protocol_version", "node_key", "node_public_key", "protocol_version",
    "rpc_addr", "sync_info", "uptime_sec", "validator_account_id", "validator_public_key", "validators", "version",
}
# nearcore's StatusResponse and StatusSyncInfo field order (serde writes members in it)
NEARCORE_ORDER = [
    "version", "chain_id", "protocol_version", "latest_protocol_version", "rpc_addr", "validators", "sync_info",
    "validator_account_id", "validator_public_key", "node_public_key", "node_key", "uptime_sec", "genesis_hash",
]
SYNC_INFO_ORDER = [
    "latest_block_hash", "latest_block_height", "latest_state_root", "latest_block_time", "syncing",
    "earliest_block_hash", "earliest_block_height", "earliest_block_time", "epoch_id", "epoch_start_height",
]


@pytest.fixture(scope="module")
def status(http: httpx.Client) -> dict[str, Any]:
    answer = http.get("/status")
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    document: dict[str, Any] = answer.json()
    return document


def _nanoseconds(text: str) -> int:
    """Read a status time back: RFC 3339, UTC, up to 9 fraction digits."""
    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{3}|\d{6}|\d{9}))?Z", text)
    assert match, text
    seconds = int(datetime.strptime(match[1], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp())
    return seconds * 10**9 + int((match[2] or "").ljust(9, "0"))


def test_members_are_a_real_nodes(status: dict[str, Any]) -> None:
    assert set(status) - {"nearrpc"} == REAL_STATUS_MEMBERS
    assert list(status) == [*NEARCORE_ORDER, "nearrpc"]
    assert list(status["sync_info"]) == SYNC_INFO_ORDER
    assert list(status["version"]) == ["version", "build", "commit", "rustc_version"]


def test_values_come_from_the_store_and_the_service(
    status: dict[str, Any], http: httpx.Client, server: LiveServer
) -> None:
    facts = sample_facts()
    head = call(http, "block", {"block_id": facts.head_height}).result["header"]
    genesis = call(http, "block", {"block_id": facts.genesis_height}).result["header"]
    assert status["version"]["version"] == SERVICE_VERSION
    assert status["chain_id"] == facts.chain_id
    assert status["genesis_hash"] == facts.genesis_hash
    assert status["protocol_version"] == facts.epoch_at(facts.head_height).protocol_version
    assert status["latest_protocol_version"] == head["latest_protocol_version"]
    assert status["rpc_addr"] == server.url.removeprefix("http://")
    assert isinstance(status["uptime_sec"], int) and status["uptime_sec"] >= 0
    genesis_config = call(http, "genesis_config").result
    assert status["validators"] == [{"account_id": v["account_id"]} for v in genesis_config["validators"]]
    assert status["node_public_key"] == node_public_key(facts.genesis_hash)
    assert status["node_public_key"] not in {v["public_key"] for v in genesis_config["validators"]}
    assert status["validator_account_id"] is status["validator_public_key"] is status["node_key"] is None
    assert status["sync_info"] == {
        "latest_block_hash": facts.head_hash,
        "latest_block_height": facts.head_height,
        "latest_state_root": head["prev_state_root"],
        "latest_block_time": status["sync_info"]["latest_block_time"],
        "syncing": False,
        "earliest_block_hash": facts.genesis_hash,
        "earliest_block_height": facts.genesis_height,
        "earliest_block_time": status["sync_info"]["earliest_block_time"],
        "epoch_id": facts.epoch_at(facts.head_height).epoch_id,
        "epoch_start_height": facts.epoch_at(facts.head_height).first_height,
    }
    assert _nanoseconds(status["sync_info"]["latest_block_time"]) == int(head["timestamp_nanosec"])
    assert _nanoseconds(status["sync_info"]["earliest_block_time"]) == int(genesis["timestamp_nanosec"])
    ours = status["nearrpc"]
    assert ours["interface_version"] == INTERFACE_VERSION
    assert ours["store"]["blocks"] == len(facts.block_heights)
    assert any("validators" in gap for gap in ours["limitations"])
    assert http.head("/status").status_code == 200


@pytest.mark.parametrize(
    ("nanoseconds", "text"),
    [
        (0, "1970-01-01T00:00:00Z"),
        (1_500_000_000, "1970-01-01T00:00:01.500Z"),
        (1_000_001_000, "1970-01-01T00:00:01.000001Z"),
        (1_748_855_735_213_648_844, "2025-06-02T09:15:35.213648844Z"),
    ],
)
def test_block_times_have_as_few_fraction_digits_as_chrono_writes(nanoseconds: int, text: str) -> None:
    assert block_time(nanoseconds) == text


@pytest.mark.reference
def test_every_member_matches_nearcores_schema_for_it(status: dict[str, Any], reference: Path) -> None:
    """Validated against the upstream RpcStatusResponse, every required member present."""
    upstream = json.loads((reference / "nearcore-openapi.json").read_text(encoding="utf-8"))
    schemas = upstream["components"]["schemas"]
    schema = dict(schemas["RpcStatusResponse"])
    document = {k: v for k, v in status.items() if k != "nearrpc"}
    # the upstream $refs (#/components/schemas/...) resolve inside this one schema document
    validator = jsonschema.Draft202012Validator({**schema, "components": {"schemas": schemas}})
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]
    assert errors == []
