"""Every request form of every method, against the live server, validated against the spec."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from tests.support.rpc import call, checked
from tests.support.sample_facts import SampleFacts, sample_facts

pytestmark = pytest.mark.live
FACTS: SampleFacts = sample_facts()
PATHS = ["/", "/block"]


def block_at(http: httpx.Client, params: Any) -> dict[str, Any]:
    answer = checked(call(http, "block", params), "block")
    assert answer.status == 200, answer
    result: dict[str, Any] = answer.result
    return result


# ------------------------------------------------------------------ parameterless methods


@pytest.mark.parametrize("method", ["genesis_config", "EXPERIMENTAL_genesis_config"])
@pytest.mark.parametrize("params", [None, [], {}, {"whatever": 1}, "text"])
def test_genesis_config_ignores_params(http: httpx.Client, method: str, params: Any) -> None:
    answer = checked(call(http, method, params), "genesis_config")
    assert answer.status == 200
    genesis = answer.result
    assert genesis["chain_id"] == FACTS.chain_id
    assert genesis["genesis_height"] == FACTS.genesis_height
    assert genesis["protocol_version"] == FACTS.genesis_protocol_version  # the genesis version, not today's
    assert "records" not in genesis
    assert list(genesis)[:4] == ["protocol_version", "genesis_time", "chain_id", "genesis_height"]


def test_genesis_config_without_params_member(http: httpx.Client) -> None:
    answer = checked(call(http, "genesis_config", omit_params=True), "genesis_config")
    assert answer.status == 200 and answer.result["chain_id"] == FACTS.chain_id


@pytest.mark.parametrize("params", [None, [], {}])
def test_client_config(http: httpx.Client, params: Any) -> None:
    config = checked(call(http, "client_config", params), "client_config").result
    assert config["chain_id"] == FACTS.chain_id
    # nearcore's encodings: plain durations as [secs, nanos], mutable values as JSON in a string
    assert isinstance(config["sync_check_period"], list) and len(config["sync_check_period"]) == 2
    assert isinstance(config["min_block_production_delay"], str)
    assert orjson.loads(config["min_block_production_delay"]) == [0, 600_000_000] or isinstance(
        orjson.loads(config["min_block_production_delay"]), list
    )
    assert set(config["gc"]["gc_step_period"]) == {"secs", "nanos"}
    assert "log_summary_style" not in config and "protocol_version_check" not in config  # gone in 1.2.14


# ------------------------------------------------------------------ block


@pytest.mark.parametrize("height", FACTS.block_heights[:: max(1, len(FACTS.block_heights) // 12)])
def test_block_by_height_and_hash_agree(http: httpx.Client, height: int) -> None:
    by_height = block_at(http, {"block_id": height})
    assert by_height["header"]["height"] == height
    block_hash = by_height["header"]["hash"]
    assert block_at(http, {"block_id": block_hash}) == by_height
    assert block_at(http, [height]) == by_height  # positional forms
    assert block_at(http, [block_hash]) == by_height


def test_block_finalities(http: httpx.Client) -> None:
    optimistic = block_at(http, {"finality": "optimistic"})["header"]
    near_final = block_at(http, {"finality": "near-final"})["header"]
    final = block_at(http, {"finality": "final"})["header"]
    assert (optimistic["height"], optimistic["hash"]) == (FACTS.head_height, FACTS.head_hash)
    assert (near_final["height"], near_final["hash"]) == (FACTS.near_final_height, FACTS.near_final_hash)
    assert (final["height"], final["hash"]) == (FACTS.final_height, FACTS.final_hash)
    # as nearcore resolves them: from the head's header
    assert optimistic["last_ds_final_block"] == near_final["hash"]
    assert optimistic["last_final_block"] == final["hash"]
    assert final["height"] < near_final["height"] <= optimistic["height"]


def test_block_sync_checkpoints(http: httpx.Client) -> None:
    genesis = block_at(http, {"sync_checkpoint": "genesis"})
    earliest = block_at(http, {"sync_checkpoint": "earliest_available"})
    assert genesis["header"]["hash"] == FACTS.genesis_hash and genesis["header"]["height"] == FACTS.genesis_height
    assert earliest == genesis  # the sample store keeps everything, like an archival node


def test_block_parent_links_across_skipped_heights(http: httpx.Client) -> None:
    skipped = FACTS.skipped_heights[0]
    after = min(h for h in FACTS.block_heights if h > skipped)
    child = block_at(http, {"block_id": after})["header"]
    parent = block_at(http, {"block_id": child["prev_hash"]})["header"]
    assert parent["height"] == child["prev_height"] < skipped < child["height"]


@pytest.mark.parametrize("path", PATHS)
def test_skipped_height_below_head_is_unknown_block_422(http: httpx.Client, path: str) -> None:
    height = FACTS.skipped_heights[0]
    answer = checked(call(http, "block", {"block_id": height}, path=path), "block")
    assert answer.status == 422
    assert answer.error["name"] == "HANDLER_ERROR"
    assert answer.error["cause"] == {"name": "UNKNOWN_BLOCK", "info": {}}
    assert answer.error["data"] == f"DB Not Found Error: BLOCK HEIGHT: {height} \n Cause: Unknown"


def test_unknown_block_statuses_follow_nearcores_rule(http: httpx.Client) -> None:
    skipped = FACTS.skipped_heights[0]
    above_head = FACTS.head_height + 100
    unknown_hash = "4reLvkAWfqk5fsqio1KLudk46cqRz9erQdaHkWZKMJDZ"
    assert call(http, "block", [skipped]).status == 200  # positional: 200
    assert call(http, "block", {"block_id": above_head}).status == 200  # at or above head: 200
    hashed = checked(call(http, "block", {"block_id": unknown_hash}), "block")
    assert hashed.status == 200
    assert hashed.error["data"] == f"DB Not Found Error: BLOCK: {unknown_hash} \n Cause: Unknown"


@pytest.mark.parametrize("height", [2**63 - 1, 2**63, 2**64 - 1], ids=["i64-max", "2^63", "u64-max"])
def test_the_top_of_the_height_range_is_an_unknown_block(http: httpx.Client, height: int) -> None:
    """Heights are u64: up to 2^64-1 a height is well formed (UNKNOWN_BLOCK, HTTP 200 above the
    head), also past the signed 64-bit integers the stores hold; 2^64 is a parse error."""
    answer = checked(call(http, "block", {"block_id": height}), "block")
    assert answer.status == 200, answer
    assert answer.error["cause"] == {"name": "UNKNOWN_BLOCK", "info": {}}
    assert answer.error["data"] == f"DB Not Found Error: BLOCK HEIGHT: {height} \n Cause: Unknown"
    view = checked(call(http, "EXPERIMENTAL_view_account", {"account_id": "node0", "block_id": height}),
                   "EXPERIMENTAL_view_account")  # fmt: skip
    assert view.error["cause"] == {"name": "UNKNOWN_BLOCK", "info": {"block_reference": {"block_id": height}}}
    assert call(http, "block", {"block_id": height + 2**64}).error["cause"]["name"] == "PARSE_ERROR"


# ------------------------------------------------------------------ protocol config


def protocol_config(http: httpx.Client, params: Any) -> dict[str, Any]:
    answer = checked(call(http, "EXPERIMENTAL_protocol_config", params), "EXPERIMENTAL_protocol_config")
    assert answer.status == 200, answer
    result: dict[str, Any] = answer.result
    return result


def test_protocol_config_follows_the_epoch(http: httpx.Client) -> None:
    for epoch in FACTS.epochs:
        config = protocol_config(
            http,
            {
                "block_id": epoch.first_height
                if epoch.first_height in FACTS.block_heights
                else min(h for h in FACTS.block_heights if h >= epoch.first_height)
            },
        )
        assert config["protocol_version"] == epoch.protocol_version
        assert config["chain_id"] == FACTS.chain_id
        assert "validators" not in config and "total_supply" not in config
        assert next(iter(config)) == "protocol_version" and list(config)[-1] == "shard_layout"
    versions = {
        protocol_config(http, {"block_id": h})["protocol_version"] for h in (FACTS.genesis_height, FACTS.head_height)
    }
    assert versions == set(FACTS.protocol_versions)


def test_protocol_config_runtime_config_differs_across_the_upgrade(http: httpx.Client) -> None:
    before = protocol_config(http, {"sync_checkpoint": "genesis"})
    after = protocol_config(http, {"finality": "final"})
    assert before["protocol_version"] < after["protocol_version"]
    assert before["runtime_config"] != after["runtime_config"]
    wasm = after["runtime_config"]["wasm_config"]
    assert "storage_get_mode" not in wasm and "sha3_host_fns" in wasm  # the 1.2.14 field set


def test_protocol_config_by_hash_equals_by_height(http: httpx.Client) -> None:
    header = block_at(http, {"block_id": FACTS.first_upgraded_height})["header"]
    assert protocol_config(http, {"block_id": header["hash"]}) == protocol_config(
        http, {"block_id": FACTS.first_upgraded_height}
    )


def test_protocol_config_unknown_block(http: httpx.Client) -> None:
    height = FACTS.skipped_heights[-1]
    answer = checked(call(http, "EXPERIMENTAL_protocol_config", {"block_id": height}), "EXPERIMENTAL_protocol_config")
    assert answer.status == 422
    assert answer.error["cause"] == {"name": "UNKNOWN_BLOCK", "info": {}}
    assert answer.error["data"] == f"Block Not Found: BLOCK HEIGHT: {height}"


# ------------------------------------------------------------------ view account


def view(http: httpx.Client, account_id: str, **reference: Any) -> Any:
    answer = checked(
        call(http, "EXPERIMENTAL_view_account", {"account_id": account_id, **reference}), "EXPERIMENTAL_view_account"
    )
    return answer


def test_view_account_at_every_reference_form(http: httpx.Client) -> None:
    account = FACTS.contract_account
    at_head = view(http, account, finality="optimistic").result
    assert at_head["block_height"] == FACTS.head_height and at_head["block_hash"] == FACTS.head_hash
    assert at_head["code_hash"] == FACTS.contract_code_hash and at_head["storage_usage"] > 0
    assert list(at_head)[:5] == ["amount", "locked", "code_hash", "storage_usage", "storage_paid_at"]
    assert list(at_head)[-2:] == ["block_height", "block_hash"]
    assert "state" not in at_head and "bootstrap_nonce" not in at_head  # omitted for initialized accounts
    assert view(http, account, finality="final").result["block_height"] == FACTS.final_height
    assert view(http, account, finality="near-final").result["block_height"] == FACTS.near_final_height
    assert view(http, account, sync_checkpoint="genesis").result["block_hash"] == FACTS.genesis_hash
    assert view(http, account, sync_checkpoint="earliest_available").result["block_height"] == FACTS.genesis_height
    assert view(http, account, block_id=FACTS.head_hash).result == at_head
    assert view(http, account, block_id=FACTS.head_height).result == at_head


def test_view_account_history_changes_balances(http: httpx.Client) -> None:
    account, heights = next((a, h) for a, h in FACTS.state_heights if len(h) >= 4 and a in FACTS.accounts_at_genesis)
    amounts = [view(http, account, block_id=h).result["amount"] for h in heights if h in FACTS.block_heights]
    assert len(set(amounts)) > 1


def test_account_created_mid_chain(http: httpx.Client) -> None:
    account, created = FACTS.created_accounts[0]
    before = max(h for h in FACTS.block_heights if h < created)
    missing = view(http, account, block_id=before)
    assert missing.status == 200
    assert missing.error["cause"] == {
        "name": "UNKNOWN_ACCOUNT",
        "info": {
            "requested_account_id": account,
            "block_height": before,
            "block_hash": block_at(http, {"block_id": before})["header"]["hash"],
        },
    }
    assert missing.error["data"] == f"account {account} does not exist while viewing"
    at = min(h for h in FACTS.block_heights if h >= created)
    assert view(http, account, block_id=at).status == 200 and "result" in view(http, account, block_id=at).body


def test_account_deleted_mid_chain(http: httpx.Client) -> None:
    account, deleted = next((a, h) for a, h in FACTS.deleted_accounts if a in FACTS.accounts_at_genesis)
    before = max(h for h in FACTS.block_heights if h < deleted)
    after = min(h for h in FACTS.block_heights if h >= deleted)
    assert "result" in view(http, account, block_id=before).body
    assert view(http, account, block_id=after).error["cause"]["name"] == "UNKNOWN_ACCOUNT"


def test_view_account_unknown_block_echoes_the_reference(http: httpx.Client) -> None:
    height = FACTS.skipped_heights[0]
    answer = view(http, FACTS.validators[0], block_id=height)
    assert answer.status == 422
    assert answer.error["cause"] == {"name": "UNKNOWN_BLOCK", "info": {"block_reference": {"block_id": height}}}
    assert answer.error["data"].endswith(f"garbage collected: BlockId(Height({height}))")
    unknown_hash = "4reLvkAWfqk5fsqio1KLudk46cqRz9erQdaHkWZKMJDZ"
    by_hash = view(http, FACTS.validators[0], block_id=unknown_hash)
    assert by_hash.status == 200
    assert by_hash.error["cause"]["info"] == {"block_reference": {"block_id": unknown_hash}}


# ------------------------------------------------------------------ endpoints


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("genesis_config", None),
        ("client_config", []),
        ("block", {"finality": "final"}),
        ("block", [FACTS.skipped_heights[0]]),
        ("EXPERIMENTAL_protocol_config", {"sync_checkpoint": "genesis"}),
        ("EXPERIMENTAL_view_account", {"account_id": "nobody.localnet", "finality": "final"}),
        ("EXPERIMENTAL_view_account", {"account_id": "BAD", "finality": "final"}),
    ],
)
def test_root_and_method_paths_answer_identically(http: httpx.Client, method: str, params: Any) -> None:
    via_root = call(http, method, params)
    via_path = call(http, method, params, path=f"/{method}")
    assert (via_root.status, via_root.raw) == (via_path.status, via_path.raw)


# integers around the 64-bit limits of JSON parsers: 2**64 - 1 is the largest orjson keeps
BIG_IDS = [2**63, 2**64 - 1, 2**64, -(2**63) - 1, 10**19, 2**70]


@pytest.mark.parametrize("request_id", ["dontcare", 7, -1.5, None, {"nested": [1, "x"]}, [1, 2], True, *BIG_IDS])
def test_id_is_echoed_as_sent(http: httpx.Client, request_id: Any) -> None:
    answer = call(http, "block", {"finality": "final"}, request_id=request_id)
    assert answer.status == 200
    expected = b"%d" % request_id if request_id in BIG_IDS else orjson.dumps(request_id)
    assert answer.raw.endswith(b',"id":' + expected + b"}")
