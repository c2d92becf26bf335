"""View calls at their limits, on a test-only store: the sample chain plus accounts written with
the store API (as an import writes them), served by a real `nearrpc serve` on each backend.

- a contract that loops forever ends at the view's gas limit with nearcore's GasLimitExceeded
  (near-vm-runner logic/gas_counter.rs; Display text in logic/errors.rs), and the server answers
  other requests, view calls included, while it runs;
- view_state of a state over the client config's trie_viewer_state_size_limit (storage usage
  less the code) is TOO_LARGE_CONTRACT_STATE without pagination, a page with it (runtime
  state_viewer `view_state`);
- a recording's mark that it could not get an account's contract state at a block is answered
  as the store's other not-held answers are (UNAVAILABLE_SHARD / INTERNAL_ERROR), never as an
  empty state.
"""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import base58
import httpx
import orjson
import pytest
import wasmtime

from nearrpc.sample import sample_chain
from nearrpc.store import ACCOUNTS_CHOSEN, contract_state_not_held, held_account, open_store
from tests.support.backends import BACKENDS, store_on
from tests.support.live_server import running_server
from tests.support.rpc import call, checked
from tests.support.sample_facts import SampleFacts, sample_facts
from tests.support.upstream_schema import check_upstream

pytestmark = pytest.mark.live

FACTS: SampleFacts = sample_facts()
LOOP = "loop.localnet"
LARGE = "large.localnet"
UNRECORDED = "unrecorded.localnet"
# view methods that never return: only the gas limit ends them. A bare wasm loop burns 300 Tgas in
# tens of milliseconds once compiled, so each turn makes host calls, whose gas buys more time:
# `spin` (four register_len and a sha256 of nothing a turn) ends at its gas limit in about half a
# second in process, `crawl` (register_len alone) in seconds, for the tests that stop a call first
LOOP_WAT = """(module
  (import "env" "register_len" (func $len (param i64) (result i64)))
  (import "env" "sha256" (func $sha256 (param i64 i64 i64)))
  (memory (export "memory") 1)
  (func (export "spin")
    (loop $again
      (drop (call $len (i64.const 0))) (drop (call $len (i64.const 0)))
      (drop (call $len (i64.const 0))) (drop (call $len (i64.const 0)))
      (call $sha256 (i64.const 0) (i64.const 0) (i64.const 0))
      (br $again)))
  (func (export "crawl") (loop $again (drop (call $len (i64.const 0))) (br $again))))"""
SIZE_LIMIT: int = orjson.loads(sample_chain().client_config_json)["trie_viewer_state_size_limit"]


def _code_hash(code: bytes) -> str:
    return base58.b58encode(hashlib.sha256(code).digest()).decode()


def _write_accounts(path: Path) -> None:
    """Three accounts at the head, beside the sample's: a looping contract, a contract whose
    state is over the size limit, and one whose state the "recording" could not get."""
    code = bytes(wasmtime.wat2wasm(LOOP_WAT))
    counter = [row for row in sample_chain().account_states if row.account_id == FACTS.contract_account]
    base = {**orjson.loads(counter[-1].view_json or b"{}"), "code_hash": _code_hash(code)}
    with open_store(path, "write") as writer, writer.batch() as batch:
        batch.put_contract_code(_code_hash(code), code)
        batch.put_account_state(LOOP, FACTS.head_height, orjson.dumps(base))
        large = {**base, "storage_usage": len(code) + SIZE_LIMIT + 1}
        batch.put_account_state(LARGE, FACTS.head_height, orjson.dumps(large))
        for key in (b"a", b"b", b"c"):
            batch.put_contract_data(LARGE, key, FACTS.head_height, key * 3)
        batch.put_account_state(UNRECORDED, FACTS.head_height, orjson.dumps(base))
        # a recording of chosen accounts: every account the tests ask about is held...
        batch.put_fetched(ACCOUNTS_CHOSEN)
        for account in (*FACTS.all_accounts, LOOP, LARGE, UNRECORDED):
            batch.put_fetched(held_account(account))
        # ...but the state of one could not be had at the head
        batch.put_fetched(contract_state_not_held(UNRECORDED, FACTS.head_height))


@pytest.fixture(scope="module", params=BACKENDS)
def http(
    request: pytest.FixtureRequest, sample_store: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[httpx.Client]:
    folder = tmp_path_factory.mktemp("limits")
    path = folder / "limits.sqlite"
    path.write_bytes(sample_store.read_bytes())
    _write_accounts(path)
    store = store_on(request.param, path, request)
    with running_server(store, folder / "server.log") as live, httpx.Client(base_url=live.url, timeout=120) as client:
        yield client


def _query_call(account_id: str, method_name: str) -> dict[str, Any]:
    return {"request_type": "call_function", "account_id": account_id, "method_name": method_name,
            "args_base64": "", "finality": "optimistic"}  # fmt: skip


def test_an_infinite_loop_ends_at_the_gas_limit_and_blocks_nobody(http: httpx.Client, reference: Path) -> None:
    # twice (another block reference, so not the kept answer): the first call compiles the
    # module on a worker thread and runs there; the second starts on the event loop (a compiled
    # module over SQLite), runs out of its slice and is run again on a worker
    for at in ({}, {"finality": None, "block_id": FACTS.head_height}):
        spin = {key: value for key, value in {**_query_call(LOOP, "spin"), **at}.items() if value is not None}
        with ThreadPoolExecutor(1) as pool:
            looping = pool.submit(call, http, "query", spin)
            time.sleep(0.05)  # the loop is running
            started = time.perf_counter()
            answered = 0
            while not looping.done() and answered < 20:
                # a plain read and a view call on the other worker thread, both answered meanwhile
                height = FACTS.block_heights[answered]
                block = checked(call(http, "block", {"block_id": height}), "block")
                get_num_at = {**_query_call(FACTS.contract_account, "get_num"), "block_id": height}
                get_num = checked(call(http, "query", get_num_at), "query")
                assert block.status == 200 and "result" in get_num.result
                answered += 1
            assert answered > 0 and time.perf_counter() - started < 60
            answer = checked(looping.result(timeout=120), "query")
        assert answer.result == {
            "error": "wasm execution failed with error: HostError(GasLimitExceeded)", "logs": [],
            "block_height": FACTS.head_height, "block_hash": FACTS.head_hash,
        }  # fmt: skip
    params = {"account_id": LOOP, "method_name": "spin", "args_base64": "", "block_id": FACTS.head_height}
    experimental = checked(call(http, "EXPERIMENTAL_call_function", params), "EXPERIMENTAL_call_function")
    check_upstream(reference, "EXPERIMENTAL_call_function", experimental.body)
    text = "Exceeded the maximum amount of gas allowed to burn per contract."
    assert experimental.error["cause"]["info"]["vm_error"] == {"ExecutionError": text}
    assert experimental.error["data"] == f'Function call returned an error: ExecutionError(String("{text}"))'


@pytest.mark.parametrize("method", ["query", "EXPERIMENTAL_view_state"])
def test_a_state_over_the_size_limit_is_refused_unless_paged(http: httpx.Client, reference: Path, method: str) -> None:
    params: dict[str, Any] = {"account_id": LARGE, "prefix_base64": "", "finality": "optimistic"}
    if method == "query":
        params["request_type"] = "view_state"
    refused = checked(call(http, method, params), method)
    check_upstream(reference, method, refused.body)
    assert refused.status == 200 and refused.error == {
        "name": "HANDLER_ERROR",
        "cause": {"name": "TOO_LARGE_CONTRACT_STATE", "info": {
            "contract_account_id": LARGE, "block_height": FACTS.head_height, "block_hash": FACTS.head_hash,
        }},
        "code": -32000, "message": "Server error", "data": f"State of contract {LARGE} is too large to be viewed",
    }  # fmt: skip
    page = checked(call(http, method, {**params, "limit": 2}), method)
    check_upstream(reference, method, page.body)
    b64 = [base64.b64encode(key).decode() for key in (b"a", b"b")]
    assert page.result["values"] == [
        {"key": b64[0], "value": base64.b64encode(b"aaa").decode()},
        {"key": b64[1], "value": base64.b64encode(b"bbb").decode()},
    ]
    assert page.result["last_key"] == b64[1]
    rest = checked(call(http, method, {**params, "after_key_base64": b64[1]}), method)
    assert [item["key"] for item in rest.result["values"]] == [base64.b64encode(b"c").decode()]
    assert "last_key" not in rest.result


def test_state_a_recording_could_not_get_is_not_answered_as_empty(http: httpx.Client) -> None:
    state = {"account_id": UNRECORDED, "prefix_base64": "", "finality": "optimistic"}
    for method, params in (
        ("query", {"request_type": "view_state", **state}),
        ("query", _query_call(UNRECORDED, "spin")),
        ("EXPERIMENTAL_view_state", state),
    ):
        answer = checked(call(http, method, params), method)
        text = f"could not get the contract state of {UNRECORDED} at this block"
        if method == "query":
            assert answer.error["cause"]["name"] == "UNAVAILABLE_SHARD" and text in answer.error["data"]
        else:
            assert answer.status == 500 and text in answer.error["cause"]["info"]["error_message"]


@pytest.mark.parametrize("method", ["query", "EXPERIMENTAL_view_state"])
def test_page_arguments_nearcore_cannot_serve_are_parse_errors(http: httpx.Client, method: str) -> None:
    """nearcore's jsonrpc refuses a proof with paging, and an after_key outside the prefix, while it
    parses the request (`validate_view_state_pagination`): PARSE_ERROR, before any block is read
    (a block no store holds does not change the answer)."""
    base: dict[str, Any] = {"account_id": LARGE, "prefix_base64": base64.b64encode(b"a").decode(),
                            "block_id": 10**12}  # fmt: skip
    if method == "query":
        base["request_type"] = "view_state"
    cases = {
        "include_proof is not supported with paginated view_state (after_key_base64 / limit)": [
            {**base, "include_proof": True, "limit": 1},
            {**base, "include_proof": True, "after_key_base64": base64.b64encode(b"a1").decode()},
        ],
        "after_key_base64 must start with prefix_base64": [
            {**base, "after_key_base64": base64.b64encode(b"b").decode()},
        ],
    }
    for text, requests in cases.items():
        for params in requests:
            refused = checked(call(http, method, params), method)
            assert refused.error is not None and refused.error["cause"]["name"] == "PARSE_ERROR", refused
            assert refused.error["cause"]["info"] == {"error_message": text}
