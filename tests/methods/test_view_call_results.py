"""Contract view calls executed on the sample chain's stored state, through a real `nearrpc serve`
on each backend (SQLite, the suite's PostgreSQL):
- the same call through POST /, POST /query, the legacy form and EXPERIMENTAL_call_function
  answers the same CallResult (jsonrpc-primitives RpcCallFunctionResponse; query's
  RpcQueryResponse flattens the same CallResult);
- the values are the state's at the block asked for (the counter at two heights, each sample
  account's token balance, the total supply);
- failures as nearcore reports them: query's legacy result with the state viewer's `error` text
  (runtime state_viewer `call_function`, chain/jsonrpc lib.rs `process_query_response`) and
  EXPERIMENTAL_call_function's CONTRACT_EXECUTION_ERROR with the RpcFunctionCallError JSON
  (runtime conversions.rs, jsonrpc-primitives types/call_function.rs);
- view_state lists the stored rows (state_viewer `view_state`), pages with limit/after_key;
- every answer is one nearcore's upstream OpenAPI document 1.2.13 allows.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import base58
import httpx
import orjson
import pytest

from tests.support.rpc import Answer, call, checked
from tests.support.sample_facts import SampleFacts, sample_facts
from tests.support.upstream_schema import check_upstream

FACTS: SampleFacts = sample_facts()
COUNTER = FACTS.contract_account
TOKEN = FACTS.token_account
pytestmark = pytest.mark.live


def _value_at(account_id: str, key: bytes, height: int) -> bytes | None:
    """The stored value of a key as of `height` (its latest row at or below it)."""
    value = None
    for row in FACTS.contract_data:
        if row.account_id == account_id and row.key == key and row.height <= height:
            value = row.value
    return value


def _count_at(height: int) -> int:
    value = _value_at(COUNTER, b"STATE", height)
    return 0 if value is None else int.from_bytes(value, "little", signed=True)


def _amount_at(key: bytes, height: int) -> int:
    value = _value_at(TOKEN, key, height)
    return 0 if value is None else int.from_bytes(value, "little")


def _holders() -> list[str]:
    rows = [row for row in FACTS.contract_data if row.account_id == TOKEN and row.key[:1] == b"b"]
    return sorted({row.key[1:].decode() for row in rows})


def _args(value: object) -> str:
    return base64.b64encode(orjson.dumps(value)).decode()


def _ask(http: httpx.Client, reference: Path, method: str, params: Any) -> Answer:
    """The answer at POST / (also at POST /<method>, the same bytes), valid against this
    project's spec and upstream's 1.2.13 document. Upstream's RpcQueryResponse has no member
    for query's legacy `{"error", "logs"}` result (nearcore answers it all the same, lib.rs
    process_query_response; this project's spec describes it): that one is held to the project's
    spec only."""
    answer = checked(call(http, method, params), method)
    at_path = checked(call(http, method, params, path=f"/{method}"), method)
    assert (answer.status, answer.raw) == (at_path.status, at_path.raw)
    if not (method == "query" and "error" in answer.body.get("result", {})):
        check_upstream(reference, method, answer.body)
    return answer


def _call(http: httpx.Client, reference: Path, account_id: str, method_name: str, args: str, **ref: Any) -> Any:
    params = {"request_type": "call_function", "account_id": account_id, "method_name": method_name,
              "args_base64": args, **ref}  # fmt: skip
    return _ask(http, reference, "query", params).result


def _returned(result: dict[str, Any]) -> Any:
    assert result["logs"] == []
    return orjson.loads(bytes(result["result"]))


def test_every_form_of_a_call_answers_the_same(http: httpx.Client, reference: Path) -> None:
    args = {"account_id": _holders()[0]}
    object_form = {"account_id": TOKEN, "method_name": "ft_balance_of", "args_base64": _args(args),
                   "finality": "optimistic"}  # fmt: skip
    answers = [
        _ask(http, reference, "query", {"request_type": "call_function", **object_form}),
        _ask(http, reference, "query", [f"call/{TOKEN}/ft_balance_of", base58.b58encode(orjson.dumps(args)).decode()]),
        _ask(http, reference, "EXPERIMENTAL_call_function", object_form),
    ]
    assert answers[0].raw == answers[1].raw == answers[2].raw
    result = answers[0].result
    assert list(result) == ["result", "logs", "block_height", "block_hash"]  # nearcore's member order
    assert (result["block_height"], result["block_hash"]) == (FACTS.head_height, FACTS.head_hash)
    assert _returned(result) == str(_amount_at(b"b" + args["account_id"].encode(), FACTS.head_height))


def test_the_counter_answers_the_state_at_each_height(http: httpx.Client, reference: Path) -> None:
    changes = sorted({row.height for row in FACTS.contract_data if row.account_id == COUNTER})
    first, later = changes[0], changes[1]
    assert _count_at(first) != _count_at(later)
    for height in (first, later, FACTS.head_height):
        result = _call(http, reference, COUNTER, "get_num", "", block_id=height)
        assert _returned(result) == _count_at(height) and result["block_height"] == height
    # before the first change nothing is stored: the contract reads an absent key as 0
    assert _returned(_call(http, reference, COUNTER, "get_num", "", sync_checkpoint="genesis")) == _count_at(0)


def test_each_token_balance_is_the_stored_one(http: httpx.Client, reference: Path) -> None:
    changes = sorted({row.height for row in FACTS.contract_data if row.account_id == TOKEN and row.key[:1] == b"b"})
    for height in (changes[0], changes[-1], FACTS.head_height):
        for holder in [*_holders(), "nobody.localnet"]:
            result = _call(http, reference, TOKEN, "ft_balance_of", _args({"account_id": holder}), block_id=height)
            assert _returned(result) == str(_amount_at(b"b" + holder.encode(), height)), (holder, height)
        supply = _call(http, reference, TOKEN, "ft_total_supply", "", block_id=height)
        assert _returned(supply) == str(_amount_at(b"t", height))


def test_ft_metadata_is_the_contracts_json(http: httpx.Client, reference: Path) -> None:
    metadata = _returned(_call(http, reference, TOKEN, "ft_metadata", "", finality="final"))
    assert metadata["spec"] == "ft-1.0.0" and metadata["decimals"] == 18


FAILURES = [
    # (method_name, args, the VM's Debug text, RpcFunctionCallError JSON, its Debug text)
    ("no_such_method", "", "MethodResolveError(MethodNotFound)", {"MethodResolveError": "MethodNotFound"},
     "MethodResolveError(MethodNotFound)"),
    ("ft_balance_of", base64.b64encode(b"not json").decode(),
     'HostError(GuestPanic { panic_msg: "Failed to deserialize input from JSON." })',
     {"ExecutionError": "Smart contract panicked: Failed to deserialize input from JSON."},
     'ExecutionError(String("Smart contract panicked: Failed to deserialize input from JSON."))'),
    ("ft_transfer", "", 'HostError(ProhibitedInView { method_name: "predecessor_account_id" })',
     {"ExecutionError": "predecessor_account_id is not allowed in view calls"},
     'ExecutionError(String("predecessor_account_id is not allowed in view calls"))'),
]  # fmt: skip


@pytest.mark.parametrize(("method_name", "args", "debug", "vm_error", "rpc_debug"), FAILURES)
def test_a_failed_call_is_nearcores_result_or_error(
    http: httpx.Client, reference: Path, method_name: str, args: str, debug: str, vm_error: object, rpc_debug: str
) -> None:
    result = _call(http, reference, TOKEN, method_name, args, finality="final")
    assert result == {"error": f"wasm execution failed with error: {debug}", "logs": [],
                      "block_height": FACTS.final_height, "block_hash": FACTS.final_hash}  # fmt: skip
    params = {"account_id": TOKEN, "method_name": method_name, "args_base64": args, "finality": "final"}
    answer = _ask(http, reference, "EXPERIMENTAL_call_function", params)
    assert answer.status == 200 and answer.error == {
        "name": "HANDLER_ERROR",
        "cause": {"name": "CONTRACT_EXECUTION_ERROR", "info": {
            "vm_error": vm_error, "block_height": FACTS.final_height, "block_hash": FACTS.final_hash,
        }},
        "code": -32000, "message": "Server error", "data": f"Function call returned an error: {rpc_debug}",
    }  # fmt: skip


def test_a_write_in_a_view_is_prohibited(http: httpx.Client, reference: Path) -> None:
    result = _call(http, reference, COUNTER, "increment", "", finality="final")
    assert result["error"] == (
        'wasm execution failed with error: HostError(ProhibitedInView { method_name: "storage_write" })'
    )


def _state(http: httpx.Client, reference: Path, method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "query":
        params = {"request_type": "view_state", **params}
    result: dict[str, Any] = _ask(http, reference, method, params).result
    return result


def _rows_at(account_id: str, prefix: bytes, height: int) -> list[dict[str, str]]:
    rows = [row for row in FACTS.contract_data if row.account_id == account_id and row.key.startswith(prefix)]
    keys = sorted({row.key for row in rows})
    live = [(key, _value_at(account_id, key, height)) for key in keys]
    return [{"key": base64.b64encode(key).decode(), "value": base64.b64encode(value).decode()}
            for key, value in live if value is not None]  # fmt: skip


@pytest.mark.parametrize("method", ["query", "EXPERIMENTAL_view_state"])
@pytest.mark.parametrize(("account_id", "prefix"), [(COUNTER, b""), (TOKEN, b""), (TOKEN, b"b"), (TOKEN, b"t")])
def test_view_state_lists_the_stored_rows(
    http: httpx.Client, reference: Path, method: str, account_id: str, prefix: bytes
) -> None:
    for height in (FACTS.head_height, FACTS.genesis_height + 25):
        params = {"account_id": account_id, "prefix_base64": base64.b64encode(prefix).decode(), "block_id": height}
        result = _state(http, reference, method, params)
        assert list(result) == ["values", "block_height", "block_hash"]
        assert result["values"] == _rows_at(account_id, prefix, height)
        assert result["block_height"] == height


def test_the_legacy_contract_form_is_view_state(http: httpx.Client, reference: Path) -> None:
    legacy = _ask(http, reference, "query", [f"contract/{TOKEN}", base58.b58encode(b"b").decode()]).result
    assert legacy["values"] == _rows_at(TOKEN, b"b", FACTS.head_height)


def test_view_state_pages_resume_after_the_last_key(http: httpx.Client, reference: Path) -> None:
    rows = _rows_at(TOKEN, b"", FACTS.head_height)
    assert len(rows) >= 3
    seen: list[dict[str, str]] = []
    params: dict[str, Any] = {"account_id": TOKEN, "prefix_base64": "", "limit": 2, "finality": "optimistic"}
    while True:
        page = _state(http, reference, "EXPERIMENTAL_view_state", params)
        seen += page["values"]
        if "last_key" not in page:
            break
        assert page["last_key"] == page["values"][-1]["key"]
        params["after_key_base64"] = page["last_key"]
    assert seen == rows


def test_call_answers_are_counted_in_metrics(http: httpx.Client, reference: Path) -> None:
    _call(http, reference, COUNTER, "get_num", "", finality="final")
    text = http.get("/metrics").text
    assert 'nearrpc_view_calls_total{path="local",reason="executed"}' in text
    stored = next(line for line in text.splitlines() if line.startswith("nearrpc_store_contract_data "))
    assert float(stored.split()[1]) == len(FACTS.contract_data)
