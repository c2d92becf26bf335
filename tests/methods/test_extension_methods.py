"""The methods beyond interface 1.2.14 (status, gas_price, query, the EXPERIMENTAL views), on
the wire, as nearcore answers them: each request form, each error with its texts and HTTP
status. Each rule names the nearcore source it was written from (docs/research/...)."""

from __future__ import annotations

import base64
from typing import Any

import httpx
import orjson
import pytest

from nearrpc.methods.node_key import node_public_key
from nearrpc.sample import sample_chain, scenario, wasm
from nearrpc.sample.scenario import NEAR
from nearrpc.store.base import access_key_order
from tests.support.rpc import call, checked
from tests.support.sample_facts import SampleFacts, sample_facts

pytestmark = pytest.mark.live
FACTS: SampleFacts = sample_facts()
UNOBSERVED = "Block either has never been observed on the node or has been garbage collected: "
NO_KEY = "ed25519:" + "1" * 32  # a well-formed key of 32 zero bytes that no account has


def _result(http: httpx.Client, method: str, params: Any, path: str = "/") -> Any:
    answer = checked(call(http, method, params, path=path), method)
    assert answer.status == 200 and "result" in answer.body, answer
    return answer.result


def _error(http: httpx.Client, method: str, params: Any, status: int) -> Any:
    answer = checked(call(http, method, params), method)
    assert answer.status == status, answer
    return answer.error


def _header(http: httpx.Client, params: Any) -> Any:
    return _result(http, "block", params)["header"]


# ------------------------------------------------------------------ status
# chain/jsonrpc lib.rs: `status` ignores its params; GET /status is the same StatusResponse


@pytest.mark.parametrize("params", [None, [], {}, "text"])
def test_status_ignores_params_and_is_get_status(http: httpx.Client, params: Any) -> None:
    result = _result(http, "status", params)
    document = http.get("/status").json()
    document.pop("nearrpc")
    assert {k: v for k, v in result.items() if k != "uptime_sec"} == {
        k: v for k, v in document.items() if k != "uptime_sec"
    }
    assert result["chain_id"] == FACTS.chain_id and result["genesis_hash"] == FACTS.genesis_hash
    assert result["sync_info"]["latest_block_height"] == FACTS.head_height
    assert result["validators"] == [{"account_id": v} for v in FACTS.validators]
    assert result["node_public_key"] == node_public_key(FACTS.genesis_hash)


def test_status_through_its_path(http: httpx.Client) -> None:
    assert _result(http, "status", None, path="/status")["chain_id"] == FACTS.chain_id


# ------------------------------------------------------------------ gas_price
# chain/jsonrpc/src/api/gas_price.rs: a `(MaybeBlockId,)` tuple; view_client_actor.rs
# GetGasPrice: the header's next gas price (what the block view calls gas_price)


@pytest.mark.parametrize(
    ("params", "block"),
    [
        ([None], {"finality": "optimistic"}),
        ([FACTS.genesis_height], {"block_id": FACTS.genesis_height}),
        ([FACTS.final_height], {"block_id": FACTS.final_height}),
        ([FACTS.head_hash], {"block_id": FACTS.head_hash}),
        ({"block_id": None}, {"finality": "optimistic"}),
        ({}, {"finality": "optimistic"}),
        ({"block_id": FACTS.final_height}, {"block_id": FACTS.final_height}),
    ],
)
def test_gas_price_is_the_headers(http: httpx.Client, params: Any, block: Any) -> None:
    assert _result(http, "gas_price", params) == {"gas_price": _header(http, block)["gas_price"]}


def test_the_top_blocks_gas_prices_differ(http: httpx.Client) -> None:
    """So the cases above tell the head from the final blocks: `[null]` read at `final` or
    `near-final` would answer another price."""
    prices = [_header(http, {"finality": finality})["gas_price"] for finality in ("optimistic", "near-final", "final")]
    assert len(set(prices)) == 3, prices


@pytest.mark.parametrize(
    ("params", "text"),
    [
        (None, "invalid type: null, expected a tuple of size 1"),
        ([], "invalid length 0, expected a tuple of size 1"),
        ([1, 2], "invalid length 2, expected a tuple of size 1"),
        (["nope"], "data did not match any variant of untagged enum BlockId"),
    ],
)
def test_gas_price_parse_errors(http: httpx.Client, params: Any, text: str) -> None:
    error = _error(http, "gas_price", params, 400)
    assert error["cause"]["name"] == "PARSE_ERROR" and error["data"] == f"Failed parsing args: {text}"


def test_gas_price_unknown_block(http: httpx.Client) -> None:
    skipped = FACTS.skipped_heights[0]
    error = _error(http, "gas_price", [skipped], 200)  # positional: never 422
    assert error["cause"] == {"name": "UNKNOWN_BLOCK", "info": {}}
    assert error["data"] == f"DB Not Found Error: BLOCK HEIGHT: {skipped} \n Cause: Unknown"
    assert _error(http, "gas_price", {"block_id": skipped}, 422)["cause"]["name"] == "UNKNOWN_BLOCK"


# ------------------------------------------------------------------ query
# chain/jsonrpc/src/api/query.rs (parsing), view_client_actor.rs handle_query, lib.rs
# process_query_response (UNKNOWN_ACCESS_KEY as a result, the legacy UNKNOWN_BLOCK text)


def _account_view(http: httpx.Client, account_id: str, reference: dict[str, Any]) -> Any:
    return _result(http, "EXPERIMENTAL_view_account", {"account_id": account_id, **reference})


@pytest.mark.parametrize(
    "reference",
    [{"finality": "final"}, {"block_id": FACTS.final_height}, {"block_id": FACTS.final_hash},
     {"sync_checkpoint": "genesis"}],
)  # fmt: skip
def test_query_view_account_is_experimental_view_account(http: httpx.Client, reference: dict[str, Any]) -> None:
    account = FACTS.validators[0]
    query = _result(http, "query", {"request_type": "view_account", "account_id": account, **reference})
    assert query == _account_view(http, account, reference)


def test_query_legacy_path_form_reads_the_optimistic_head(http: httpx.Client) -> None:
    account = FACTS.validators[0]
    assert _result(http, "query", [f"account/{account}", ""]) == _account_view(
        http, account, {"finality": "optimistic"}
    )


@pytest.mark.parametrize(
    ("params", "text"),
    [
        (["account", ""], "Not enough query parameters provided"),
        (["balance/alice.near", ""], "Unknown path balance"),
        (["call/alice.near", ""], "Method name is missing"),
        (["access_key/alice.near/nokey", ""], "Invalid public key"),
        (["account/x", ""], "the Account ID is too short"),
    ],
)
def test_query_legacy_path_errors_are_bare_texts(http: httpx.Client, params: Any, text: str) -> None:
    error = _error(http, "query", params, 400)
    assert error["cause"] == {"name": "PARSE_ERROR", "info": {"error_message": text}}


@pytest.mark.parametrize(
    ("params", "text"),
    [
        ({"finality": "final"}, "missing field `request_type`"),
        ({"finality": "final", "request_type": "view_balance"}, "unknown variant `view_balance`"),
        ({"finality": "final", "request_type": "view_account"}, "missing field `account_id`"),
        ({"request_type": "view_account", "account_id": "alice.near"}, "no variant of enum BlockReference"),
        (
            {
                "finality": "final",
                "request_type": "view_access_key",
                "account_id": "alice.near",
                "public_key": "ed25519:1",
            },
            "invalid key length: expected the input of 32 bytes, but 1 was given",
        ),
        ([1], "invalid type: sequence, expected struct RpcQueryRequest"),
    ],
)
def test_query_parse_errors(http: httpx.Client, params: Any, text: str) -> None:
    error = _error(http, "query", params, 400)
    assert error["cause"]["name"] == "PARSE_ERROR" and text in error["data"]


def test_query_unknown_block_texts_and_statuses(http: httpx.Client) -> None:
    view = {"request_type": "view_account", "account_id": FACTS.validators[0]}
    skipped = FACTS.skipped_heights[0]
    error = _error(http, "query", {**view, "block_id": skipped}, 422)
    assert error["cause"] == {"name": "UNKNOWN_BLOCK", "info": {"block_reference": {"block_id": skipped}}}
    assert error["data"] == f"DB Not Found Error: BLOCK HEIGHT: {skipped} \n Cause: Unknown"
    missing_hash = "1" * 32
    error = _error(http, "query", {**view, "block_id": missing_hash}, 200)
    assert error["data"] == f"DB Not Found Error: BLOCK HEADER: {missing_hash}"
    assert _error(http, "query", {**view, "block_id": FACTS.head_height + 5}, 200)["cause"]["name"] == "UNKNOWN_BLOCK"


def test_query_unknown_account(http: httpx.Client) -> None:
    error = _error(
        http, "query", {"request_type": "view_account", "account_id": "no.localnet", "finality": "final"}, 200
    )
    assert error["cause"]["name"] == "UNKNOWN_ACCOUNT"
    assert error["cause"]["info"] == {
        "requested_account_id": "no.localnet", "block_height": FACTS.final_height, "block_hash": FACTS.final_hash,
    }  # fmt: skip
    assert error["data"] == "account no.localnet does not exist while viewing"


def test_view_code_of_an_account_without_code(http: httpx.Client) -> None:
    account = FACTS.validators[0]
    for method, params in (
        ("query", {"request_type": "view_code", "account_id": account, "finality": "final"}),
        ("EXPERIMENTAL_view_code", {"account_id": account, "finality": "final"}),
    ):
        error = _error(http, method, params, 200)
        assert error["cause"]["name"] == "NO_CONTRACT_CODE"
        assert error["data"] == f"Contract code for contract ID #{account} has never been observed on the node"


@pytest.mark.parametrize(
    "request_members",
    [
        {"request_type": "view_gas_key_nonces", "account_id": "alice.localnet", "public_key": NO_KEY},
        {"request_type": "view_global_contract_code_by_account_id", "account_id": "alice.localnet"},
        {"request_type": "view_global_contract_code", "code_hash": FACTS.contract_code_hash},
    ],
)
def test_state_no_store_holds_is_an_unavailable_shard(http: httpx.Client, request_members: dict[str, Any]) -> None:
    error = _error(http, "query", {**request_members, "finality": "final"}, 200)
    shard_id = error["cause"]["info"]["requested_shard_id"]
    assert error["cause"]["name"] == "UNAVAILABLE_SHARD" and shard_id in FACTS.shard_ids
    assert error["data"] == f"The node does not track the shard ID {shard_id}"


def test_the_views_unknown_block_is_their_display_text(http: httpx.Client) -> None:
    skipped = FACTS.skipped_heights[0]
    for method, params in (
        ("EXPERIMENTAL_view_code", {"account_id": "alice.localnet"}),
        ("EXPERIMENTAL_view_access_key_list", {"account_id": "alice.localnet"}),
        ("EXPERIMENTAL_view_access_key", {"account_id": "alice.localnet", "public_key": NO_KEY}),
    ):
        error = _error(http, method, {**params, "block_id": skipped}, 422)
        assert error["cause"] == {"name": "UNKNOWN_BLOCK", "info": {"block_reference": {"block_id": skipped}}}
        assert error["data"] == f"{UNOBSERVED}BlockId(Height({skipped}))"


@pytest.mark.parametrize("key", ["ed25519:nokey0", "rsa:" + "1" * 32, "ed25519:" + "1" * 31])
def test_views_refuse_a_bad_public_key(http: httpx.Client, key: str) -> None:
    error = _error(http, "EXPERIMENTAL_view_access_key", {"account_id": "alice.localnet", "public_key": key,
                                                           "finality": "final"}, 400)  # fmt: skip
    assert error["cause"]["name"] == "PARSE_ERROR"


# ------------------------------------------------------------------ access keys and code
# runtime/runtime/src/state_viewer/mod.rs: view_access_key (no account check), view_access_keys
# (the account's key prefix: an unknown account lists none), view_contract_code (the account,
# then the code deployed on it)


def _expected_keys(account_id: str, height: int) -> list[dict[str, Any]]:
    """What the sample chain wrote for the account's keys, as of `height`, in listing order."""
    latest: dict[str, bytes | None] = {}
    for row in sample_chain().access_keys:
        if row.account_id == account_id and row.height <= height:
            latest[row.public_key] = row.view_json
    keys = sorted((key for key, view in latest.items() if view is not None), key=access_key_order)
    return [{"public_key": key, "access_key": orjson.loads(latest[key] or b"null")} for key in keys]


@pytest.mark.parametrize(
    "account_id", [scenario.CONTRACT, "alice.localnet", FACTS.validators[0], FACTS.implicit_accounts[0]]
)
@pytest.mark.parametrize("reference", [{"finality": "final"}, {"sync_checkpoint": "genesis"}, {"block_id": 45}])
def test_access_key_list_is_the_chains(http: httpx.Client, account_id: str, reference: dict[str, Any]) -> None:
    listed = _result(http, "query", {"request_type": "view_access_key_list", "account_id": account_id, **reference})
    height = listed["block_height"]
    assert listed["keys"] == _expected_keys(account_id, height) != []
    assert _result(http, "EXPERIMENTAL_view_access_key_list", {"account_id": account_id, **reference}) == listed
    for item in listed["keys"]:
        one = {"account_id": account_id, "public_key": item["public_key"], **reference}
        view = _result(http, "query", {"request_type": "view_access_key", **one})
        assert view == {**item["access_key"], "block_height": height, "block_hash": listed["block_hash"]}
        assert _result(http, "EXPERIMENTAL_view_access_key", one) == view


def test_keys_have_both_permissions_and_nonces_move(http: httpx.Client) -> None:
    keys = _result(http, "EXPERIMENTAL_view_access_key_list", {"account_id": "alice.localnet", "finality": "final"})
    permissions = [k["access_key"]["permission"] for k in keys["keys"]]
    assert "FullAccess" in permissions
    (call_permission,) = [p["FunctionCall"] for p in permissions if isinstance(p, dict)]
    assert call_permission["receiver_id"] == scenario.CONTRACT and int(call_permission["allowance"]) < NEAR // 4
    genesis = _result(http, "EXPERIMENTAL_view_access_key_list", {"account_id": "alice.localnet", "block_id": 0})
    assert [k["access_key"]["nonce"] for k in genesis["keys"]] == [0, 0]
    assert all(k["access_key"]["nonce"] > 0 for k in keys["keys"])


def test_legacy_access_key_paths(http: httpx.Client) -> None:
    listed = _result(http, "query", ["access_key/alice.localnet", ""])
    assert listed == _result(http, "query", {"request_type": "view_access_key_list", "account_id": "alice.localnet",
                                             "finality": "optimistic"})  # fmt: skip
    key = listed["keys"][0]["public_key"]
    one = _result(http, "query", [f"access_key/alice.localnet/{key}", ""])
    assert one["nonce"] == listed["keys"][0]["access_key"]["nonce"]
    # a key without its type prefix is an ed25519 key, as nearcore parses it
    assert _result(http, "query", [f"access_key/alice.localnet/{key.removeprefix('ed25519:')}", ""]) == one


def test_a_deleted_accounts_keys_are_gone(http: httpx.Client) -> None:
    deleted = scenario.DELETIONS[0]
    before = {"account_id": deleted.account_id, "block_id": deleted.height - 1}
    after = {"account_id": deleted.account_id, "block_id": deleted.height}
    if FACTS.skipped_heights and deleted.height - 1 in FACTS.skipped_heights:
        before["block_id"] = deleted.height - 2
    assert len(_result(http, "EXPERIMENTAL_view_access_key_list", before)["keys"]) == 2
    assert _result(http, "EXPERIMENTAL_view_access_key_list", after)["keys"] == []


def test_unknown_access_key_is_a_result_for_query_and_an_error_for_the_view(http: httpx.Client) -> None:
    one = {"account_id": "alice.localnet", "public_key": NO_KEY, "finality": "final"}
    result = _result(http, "query", {"request_type": "view_access_key", **one})
    assert result == {
        "error": f"access key {NO_KEY} does not exist while viewing", "logs": [],
        "block_height": FACTS.final_height, "block_hash": FACTS.final_hash,
    }  # fmt: skip
    error = _error(http, "EXPERIMENTAL_view_access_key", one, 200)
    assert error["cause"] == {
        "name": "UNKNOWN_ACCESS_KEY",
        "info": {"public_key": NO_KEY, "block_height": FACTS.final_height, "block_hash": FACTS.final_hash},
    }
    assert error["data"] == f"Access key for public key {NO_KEY} has never been observed on the node"
    # an unknown account: no key (view_access_key does not look at the account), an empty list
    nobody = {"account_id": "no.localnet", "finality": "final"}
    assert _error(http, "EXPERIMENTAL_view_access_key", {**nobody, "public_key": NO_KEY}, 200)["cause"]["name"] == (
        "UNKNOWN_ACCESS_KEY"
    )
    assert _result(http, "EXPERIMENTAL_view_access_key_list", nobody)["keys"] == []


def test_view_code_is_the_deployed_wasm(http: httpx.Client) -> None:
    params = {"account_id": FACTS.contract_account, "finality": "final"}
    code = _result(http, "EXPERIMENTAL_view_code", params)
    assert base64.b64decode(code["code_base64"]) == wasm.COUNTER.code
    assert code["hash"] == FACTS.contract_code_hash
    assert _result(http, "query", {"request_type": "view_code", **params}) == code
    assert _result(http, "query", [f"code/{FACTS.contract_account}", ""])["hash"] == FACTS.contract_code_hash


def test_an_account_using_a_global_contract_has_no_code_of_its_own(http: httpx.Client) -> None:
    for account_id in FACTS.global_contract_accounts:
        error = _error(http, "EXPERIMENTAL_view_code", {"account_id": account_id, "finality": "final"}, 200)
        assert error["cause"]["name"] == "NO_CONTRACT_CODE"
