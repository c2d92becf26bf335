"""Contract view calls up to the point their code runs: query `call_function` / `view_state`
(object and legacy forms) and EXPERIMENTAL_call_function / EXPERIMENTAL_view_state reach the same
two handler steps, and answer what nearcore answers before any code runs or any state is read
(the executed calls: test_view_call_results.py):
- the account first (runtime state_viewer `call_function` / `view_state`: AccountDoesNotExist),
  UNKNOWN_ACCOUNT with the same info and text on every form;
- a call on an account without code fails in the VM (CompilationError(CodeDoesNotExist)): query
  answers a result with the state viewer's `error` text (chain/jsonrpc lib.rs
  process_query_response), EXPERIMENTAL_call_function CONTRACT_EXECUTION_ERROR
  (jsonrpc-primitives types/call_function.rs).
"""

from __future__ import annotations

import base64
import time
from typing import Any

import base58
import httpx
import pytest

from nearrpc.methods.errors import RpcError
from nearrpc.methods.params.query import QUERY_DATA_MAX_SIZE, legacy_query
from tests.support.rpc import call, checked
from tests.support.sample_facts import SampleFacts, sample_facts

FACTS: SampleFacts = sample_facts()
MISSING = "no.localnet"
ARGS = b'{"account_id":"alice.localnet"}'


def _legacy(path: str, data: str) -> dict[str, Any]:
    return legacy_query(path, data)


def _refusal(path: str, data: str) -> str:
    with pytest.raises(RpcError) as refused:
        legacy_query(path, data)
    assert refused.value.kind.cause == "PARSE_ERROR"
    assert isinstance(refused.value.data, str)
    return refused.value.data


# ------------------------------------------------------------------ request forms (no server)
# chain/jsonrpc/src/api/query.rs parse_path_data / parse_bs58_data


def test_the_legacy_call_path_is_call_function_at_the_optimistic_head() -> None:
    assert _legacy("call/counter.localnet/get_num", base58.b58encode(ARGS).decode()) == {
        "finality": "optimistic", "account_id": "counter.localnet", "request_type": "call_function",
        "method_name": "get_num", "args_base64": base64.b64encode(ARGS).decode(),
    }  # fmt: skip
    # the method is the rest of the path, slashes included (splitn(3, '/')); empty data: no args
    assert _legacy("call/counter.localnet/a/b", "")["method_name"] == "a/b"
    assert _legacy("call/counter.localnet/get_num", "")["args_base64"] == ""


def test_the_legacy_contract_path_is_view_state_without_proof() -> None:
    assert _legacy("contract/counter.localnet", base58.b58encode(b"STATE").decode()) == {
        "finality": "optimistic", "account_id": "counter.localnet", "request_type": "view_state",
        "prefix_base64": base64.b64encode(b"STATE").decode(), "include_proof": False,
    }  # fmt: skip
    assert _legacy("contract/counter.localnet/ignored", "")["prefix_base64"] == ""


@pytest.mark.parametrize(
    ("path", "data", "text"),
    [
        ("call/counter.localnet/get_num", "0OIl", "provided string contained invalid character '0' at byte 0"),
        ("contract/counter.localnet", "zz!", "provided string contained invalid character '!' at byte 2"),
        ("call/counter.localnet", "", "Method name is missing"),
        ("data/counter.localnet", "", "Unknown path data"),  # view_state's legacy path is contract/
        ("call/Ab.localnet/get", "", "the Account ID contains an invalid character 'A' at index 0"),
    ],
)
def test_legacy_refusals_are_nearcores_bare_texts(path: str, data: str, text: str) -> None:
    assert _refusal(path, data) == text


def test_legacy_data_is_bounded_by_nearcores_budget_less_the_path() -> None:
    """10 KiB less the path's bytes: data that decodes onto the budget is taken, one byte more
    is "Query data size is too large" (the bs58 buffer overflow)."""
    path = "call/counter.localnet/get_num"
    budget = QUERY_DATA_MAX_SIZE - len(path)
    fits = base58.b58encode(b"\xff" * budget).decode()
    assert base64.b64decode(_legacy(path, fits)["args_base64"]) == b"\xff" * budget
    assert _refusal(path, base58.b58encode(b"\xff" * (budget + 1)).decode()) == "Query data size is too large"
    # leading 1s are zero bytes: as many as the budget holds, and no more
    assert base64.b64decode(_legacy(path, "1" * budget)["args_base64"]) == bytes(budget)
    assert _refusal(path, "1" * (budget + 1)) == "Query data size is too large"


@pytest.mark.parametrize("data", ["z" * 9_000_000, "z" * 20_000 + "!", "2" + "1" * 9_000_000])
def test_oversized_legacy_data_is_refused_without_decoding_it(data: str) -> None:
    started = time.perf_counter()
    assert _refusal("contract/counter.localnet", data) == "Query data size is too large"
    assert time.perf_counter() - started < 0.25  # the decode of what could fit, not of 9 MB


# ------------------------------------------------------------------ on the wire


def _forms(account_id: str) -> list[tuple[str, Any]]:
    """Every request form of a view call on `account_id` at the head (the legacy ones read the
    optimistic head, which is the sample's head)."""
    args = base64.b64encode(ARGS).decode()
    call_members = {"account_id": account_id, "method_name": "get_num", "args_base64": args}
    state_members = {"account_id": account_id, "prefix_base64": ""}
    return [
        ("query", {"request_type": "call_function", **call_members, "finality": "optimistic"}),
        ("query", [f"call/{account_id}/get_num", base58.b58encode(ARGS).decode()]),
        ("EXPERIMENTAL_call_function", {**call_members, "finality": "optimistic"}),
        ("query", {"request_type": "view_state", **state_members, "finality": "optimistic"}),
        ("query", {"request_type": "view_state", **state_members, "include_proof": True,
                   "block_id": FACTS.head_height}),
        ("query", [f"contract/{account_id}", ""]),
        ("EXPERIMENTAL_view_state", {**state_members, "finality": "optimistic"}),
        ("EXPERIMENTAL_view_state", {**state_members, "include_proof": True, "block_id": FACTS.head_hash}),
    ]  # fmt: skip


def _answers(http: httpx.Client, method: str, params: Any) -> Any:
    """The answer at POST / and at POST /<method>, which must be the same bytes."""
    at_root = checked(call(http, method, params), method)
    at_path = checked(call(http, method, params, path=f"/{method}"), method)
    assert (at_root.status, at_root.body) == (at_path.status, at_path.body)
    return at_root


@pytest.mark.live
@pytest.mark.parametrize(("method", "params"), _forms(MISSING))
def test_an_unknown_account_is_unknown_account_on_every_form(http: httpx.Client, method: str, params: Any) -> None:
    answer = _answers(http, method, params)
    assert answer.status == 200
    assert answer.error == {
        "name": "HANDLER_ERROR",
        "cause": {"name": "UNKNOWN_ACCOUNT", "info": {
            "requested_account_id": MISSING, "block_height": FACTS.head_height, "block_hash": FACTS.head_hash,
        }},
        "code": -32000, "message": "Server error", "data": f"account {MISSING} does not exist while viewing",
    }  # fmt: skip


@pytest.mark.live
def test_a_call_on_an_account_without_code_fails_as_the_vm_fails_it(http: httpx.Client) -> None:
    account = FACTS.validators[0]
    debug = f'CompilationError(CodeDoesNotExist {{ account_id: AccountId("{account}") }})'
    for method, params in _forms(account)[:2]:
        answer = _answers(http, method, params)
        assert answer.status == 200 and answer.result == {
            "error": f"wasm execution failed with error: {debug}", "logs": [],
            "block_height": FACTS.head_height, "block_hash": FACTS.head_hash,
        }  # fmt: skip
    method, params = _forms(account)[2]
    answer = _answers(http, method, params)
    assert answer.status == 200 and answer.error == {
        "name": "HANDLER_ERROR",
        "cause": {"name": "CONTRACT_EXECUTION_ERROR", "info": {
            "vm_error": {"CompilationError": {"CodeDoesNotExist": {"account_id": account}}},
            "block_height": FACTS.head_height, "block_hash": FACTS.head_hash,
        }},
        "code": -32000, "message": "Server error", "data": f"Function call returned an error: {debug}",
    }  # fmt: skip


@pytest.mark.live
def test_the_experimental_methods_read_the_block_reference(http: httpx.Client) -> None:
    skipped = FACTS.skipped_heights[0]
    for method, params in _forms(MISSING):
        if method == "query" or "block_id" in params:
            continue
        reference = {k: v for k, v in params.items() if k != "finality"}
        answer = checked(call(http, method, {**reference, "block_id": skipped}), method)
        assert answer.status == 422
        assert answer.error["cause"] == {"name": "UNKNOWN_BLOCK", "info": {"block_reference": {"block_id": skipped}}}
        assert answer.error["data"].endswith(f"BlockId(Height({skipped}))")
        genesis = checked(call(http, method, {**reference, "sync_checkpoint": "genesis"}), method)
        assert genesis.error["cause"]["info"]["block_height"] == FACTS.genesis_height


@pytest.mark.live
@pytest.mark.parametrize(
    ("method", "params", "text"),
    [
        ("EXPERIMENTAL_call_function", {"account_id": MISSING, "args_base64": "", "finality": "final"},
         "missing field `method_name`"),
        ("EXPERIMENTAL_call_function", {"account_id": MISSING, "method_name": "m", "finality": "final"},
         "missing field `args_base64`"),
        ("EXPERIMENTAL_view_state", {"account_id": MISSING, "finality": "final"}, "missing field `prefix_base64`"),
        ("EXPERIMENTAL_view_state", {"account_id": MISSING, "prefix_base64": "", "include_proof": None,
                                     "finality": "final"}, "invalid type: expected a boolean for `include_proof`"),
        ("EXPERIMENTAL_call_function", {"account_id": "A", "method_name": "m", "args_base64": "", "finality": "final"},
         "invalid value"),
        ("query", ["call/counter.localnet/get_num", "z" * 100_000], "Query data size is too large"),
        ("query", ["contract/counter.localnet", "0"], "provided string contained invalid character '0' at byte 0"),
    ],
)  # fmt: skip
def test_bad_requests_are_parse_errors(http: httpx.Client, method: str, params: Any, text: str) -> None:
    answer = _answers(http, method, params)
    assert answer.status == 400 and answer.error["cause"]["name"] == "PARSE_ERROR"
    assert text in answer.error["cause"]["info"]["error_message"]


@pytest.mark.live
def test_an_integral_float_limit_is_that_integer(http: httpx.Client) -> None:
    """JSON Schema reads 3.0 as the integer 3 (the contract run found it refused)."""
    for method, params in (
        ("EXPERIMENTAL_view_state", {"account_id": MISSING, "prefix_base64": "", "limit": 3.0, "finality": "final"}),
        ("query", {"request_type": "view_state", "account_id": MISSING, "prefix_base64": "", "limit": 3.0,
                   "finality": "final"}),
    ):  # fmt: skip
        assert _answers(http, method, params).error["cause"]["name"] == "UNKNOWN_ACCOUNT"
