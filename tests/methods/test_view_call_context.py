"""What a view call sees of its account and block, and how view_state pages, over HTTP (the app in
process over a test store: the sample chain plus two accounts written as an import writes them).

- The VMContext nearcore builds for a view (runtime state_viewer `call_function`, ApplyState and
  the account): `account_balance` the account's amount and `account_locked_balance` its locked
  amount, both u128 little-endian (logic.rs `account_balance`, `account_locked_balance`);
  `storage_usage` the account's storage usage (logic.rs `storage_usage`); `block_timestamp` the
  block header's timestamp in nanoseconds (ApplyState `block_timestamp`); `random_seed` the state
  root (here the `prev_state_root` of the account's own shard's chunk: spec/DEVIATIONS.md).
- A call's logs are part of its CallResult (`result`, `logs`), as the contract wrote them, also
  where it returned a value.
- A paginated view_state page (state_viewer `view_state`) stops before an item once the bytes
  kept reach 50,000 (checked before each item, `>=`), where each item counts its whole trie key
  (the column byte, the account id, the separator, the storage key) and its value, and holds at
  most 10,000 items however large a `limit` is asked.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import base58
import httpx
import orjson
import pytest
import wasmtime

from nearrpc.http.app import build_app
from nearrpc.methods.view_calls import state_page
from nearrpc.sample import sample_chain
from nearrpc.store import open_store
from nearrpc.store.sqlite_serving import VERSION_CHECK_SECONDS
from tests.support.sample_facts import SampleFacts, sample_facts

FACTS: SampleFacts = sample_facts()
PROBE: Final = "probe.localnet"  # above the last boundary account: the last shard
PAGES: Final = "pages.localnet"
AMOUNT: Final = 10**25 + 7
LOCKED: Final = 3 * 10**24 + 5
STORAGE_USAGE: Final = 9_876
# a trie key is the column byte, the account id, a separator and the storage key (core
# primitives trie_key.rs, TrieKey::ContractData)
TRIE_OVERHEAD: Final = 1 + len(PAGES) + 1
PAGE_BYTES: Final = 50_000
ITEM_BYTES: Final = 100  # each pages.localnet item: its 5-byte key, its value and the overhead
ROWS: Final = 600
KEYS: Final = [b"p%04d" % i for i in range(ROWS)]
VALUE_LEN: Final = ITEM_BYTES - TRIE_OVERHEAD - len(KEYS[0])

PROBE_WAT: Final = """(module
 (import "env" "account_balance" (func $account_balance (param i64)))
 (import "env" "account_locked_balance" (func $account_locked_balance (param i64)))
 (import "env" "storage_usage" (func $storage_usage (result i64)))
 (import "env" "block_timestamp" (func $block_timestamp (result i64)))
 (import "env" "random_seed" (func $random_seed (param i64)))
 (import "env" "read_register" (func $read_register (param i64 i64)))
 (import "env" "value_return" (func $value_return (param i64 i64)))
 (import "env" "log_utf8" (func $log_utf8 (param i64 i64)))
 (import "env" "validator_total_stake" (func $validator_total_stake (param i64)))
 (memory 1)
 (data (i32.const 100) "first line")
 (data (i32.const 120) "second")
 (data (i32.const 140) "done")
 (func (export "balance") (call $account_balance (i64.const 0)) (call $value_return (i64.const 16) (i64.const 0)))
 (func (export "locked")
  (call $account_locked_balance (i64.const 0)) (call $value_return (i64.const 16) (i64.const 0)))
 (func (export "usage")
  (i64.store (i32.const 0) (call $storage_usage)) (call $value_return (i64.const 8) (i64.const 0)))
 (func (export "timestamp")
  (i64.store (i32.const 0) (call $block_timestamp)) (call $value_return (i64.const 8) (i64.const 0)))
 (func (export "seed")
  (call $random_seed (i64.const 0)) (call $read_register (i64.const 0) (i64.const 0))
  (call $value_return (i64.const 32) (i64.const 0)))
 (func (export "logs")
  (call $log_utf8 (i64.const 10) (i64.const 100)) (call $log_utf8 (i64.const 6) (i64.const 120))
  (call $value_return (i64.const 4) (i64.const 140)))
 (func (export "stake")
  (call $validator_total_stake (i64.const 0)) (call $value_return (i64.const 16) (i64.const 0))))"""


def _code_hash(code: bytes) -> str:
    return base58.b58encode(hashlib.sha256(code).digest()).decode()


def _head_view() -> dict[str, Any]:
    head = next(block for block in sample_chain().blocks if block.height == FACTS.head_height)
    view: dict[str, Any] = orjson.loads(head.view_json)
    return view


@pytest.fixture(scope="module")
def store(sample_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("context") / "context.sqlite"
    path.write_bytes(sample_store.read_bytes())
    code = bytes(wasmtime.wat2wasm(PROBE_WAT))
    probe = {"amount": str(AMOUNT), "locked": str(LOCKED), "code_hash": _code_hash(code),
             "storage_usage": STORAGE_USAGE, "storage_paid_at": 0}  # fmt: skip
    pages = {**probe, "code_hash": "11111111111111111111111111111111", "storage_usage": 100_000}
    with open_store(path, "write") as writer, writer.batch() as batch:
        batch.put_contract_code(_code_hash(code), code)
        batch.put_account_state(PROBE, FACTS.head_height, orjson.dumps(probe))
        batch.put_account_state(PAGES, FACTS.head_height, orjson.dumps(pages))
        for i, key in enumerate(KEYS):
            batch.put_contract_data(PAGES, key, FACTS.head_height, bytes([i % 256]) * VALUE_LEN)
    return path


@pytest.fixture(scope="module")
def answers(store: Path) -> Iterator[Any]:
    """`ask(method, params)`: the JSON-RPC answer of the app over the test store."""
    app = build_app(open_store(store, "serve"))
    loop = asyncio.new_event_loop()
    lifespan = app.router.lifespan_context(app)
    loop.run_until_complete(lifespan.__aenter__())
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://nearrpc")

    def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        answer: dict[str, Any] = loop.run_until_complete(client.post("/", json=body)).json()
        # the loop runs on a moment, so the reader's short read ends (a test may write between)
        loop.run_until_complete(asyncio.sleep(VERSION_CHECK_SECONDS * 5))
        return answer

    try:
        yield ask
    finally:
        loop.run_until_complete(client.aclose())
        loop.run_until_complete(lifespan.__aexit__(None, None, None))
        loop.close()


def _call(ask: Any, method_name: str) -> dict[str, Any]:
    params = {"request_type": "call_function", "account_id": PROBE, "method_name": method_name, "args_base64": "",
              "block_id": FACTS.head_height}  # fmt: skip
    answer = ask("query", params)
    assert "error" not in answer["result"], answer
    result: dict[str, Any] = answer["result"]
    return result


def _returned(ask: Any, method_name: str) -> bytes:
    return bytes(_call(ask, method_name)["result"])


def test_the_account_balances_are_the_accounts_amount_and_locked(answers: Any) -> None:
    assert _returned(answers, "balance") == AMOUNT.to_bytes(16, "little")
    assert _returned(answers, "locked") == LOCKED.to_bytes(16, "little")


def test_storage_usage_is_the_accounts(answers: Any) -> None:
    assert _returned(answers, "usage") == STORAGE_USAGE.to_bytes(8, "little")


def test_the_block_timestamp_is_the_headers_in_nanoseconds(answers: Any) -> None:
    timestamp = int(_head_view()["header"]["timestamp"])
    assert timestamp > 10**18  # nanoseconds since 1970
    assert _returned(answers, "timestamp") == timestamp.to_bytes(8, "little")


def test_the_random_seed_is_the_root_of_the_accounts_own_shard(answers: Any) -> None:
    chunks = _head_view()["chunks"]
    last_shard = max(FACTS.shard_ids)
    roots = {chunk["shard_id"]: base58.b58decode(chunk["prev_state_root"]) for chunk in chunks}
    assert chunks[0]["shard_id"] != last_shard and roots[chunks[0]["shard_id"]] != roots[last_shard]
    assert PROBE > FACTS.boundary_accounts[-1]  # the account is in the last shard
    assert _returned(answers, "seed") == roots[last_shard]


def test_a_calls_logs_are_in_its_result(answers: Any) -> None:
    result = _call(answers, "logs")
    assert (bytes(result["result"]), result["logs"]) == (b"done", ["first line", "second"])
    params = {"account_id": PROBE, "method_name": "logs", "args_base64": "", "block_id": FACTS.head_height}
    experimental = answers("EXPERIMENTAL_call_function", params)
    assert experimental["result"]["logs"] == ["first line", "second"]


def test_the_validators_total_stake_is_the_head_epochs(answers: Any, store: Path) -> None:
    """The epoch's stakes are read from its stored validators record: by the first call on a
    worker (a read on the event loop would wait), kept for the calls after it on the loop."""

    async def total() -> int:
        reader = open_store(store, "serve")
        try:
            record = await reader.validators(_head_view()["header"]["epoch_id"])
        finally:
            await reader.close()
        assert record is not None
        return sum(int(validator["stake"]) for validator in orjson.loads(record.view_json)["current_validators"])

    expected = asyncio.run(total())
    assert expected > 0
    assert _returned(answers, "stake") == _returned(answers, "stake") == expected.to_bytes(16, "little")


def _page(ask: Any, **page: Any) -> dict[str, Any]:
    params = {"account_id": PAGES, "prefix_base64": "", "block_id": FACTS.head_height, **page}
    answer = ask("EXPERIMENTAL_view_state", params)
    assert "result" in answer, answer
    result: dict[str, Any] = answer["result"]
    return result


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_a_page_ends_where_its_whole_trie_keys_and_values_reach_the_byte_budget(answers: Any) -> None:
    assert TRIE_OVERHEAD + len(KEYS[0]) + VALUE_LEN == ITEM_BYTES
    # 500 items reach exactly 50,000 bytes: the budget is reached, the 501st is not taken
    full = PAGE_BYTES // ITEM_BYTES
    for limit in (10_000, 20_000):  # a limit over 10,000 is capped (and the bytes end the page first)
        page = _page(answers, limit=limit)
        assert len(page["values"]) == full
        assert [item["key"] for item in page["values"]] == [_b64(key) for key in KEYS[:full]]
        assert page["last_key"] == _b64(KEYS[full - 1])
    rest = _page(answers, after_key_base64=_b64(KEYS[full - 1]))
    assert [item["key"] for item in rest["values"]] == [_b64(key) for key in KEYS[full:]]
    assert "last_key" not in rest


def test_a_page_holds_at_most_ten_thousand_items() -> None:
    # the item cap cannot be reached over HTTP: with the shortest account id (2 bytes) the byte
    # budget stops a page near 8,400 items; so the page function itself, without the account's
    # part of the key, over 10,001 two-byte keys with empty values (4 bytes each)
    rows = [(i.to_bytes(2, "big"), b"") for i in range(10_001)]
    items, last_key = state_page("", rows, None, 20_000)
    assert len(items) == 10_000 and last_key == rows[9_999][0]
    items, last_key = state_page("", rows, None, None)
    assert len(items) == 10_000


def test_an_account_rewritten_at_the_same_height_is_seen_by_the_next_call(answers: Any, store: Path) -> None:
    """The handlers keep a called account's view per height (a hot contract's calls all read it);
    a write of accounts drops it, so a call after the write sees the new balance."""
    assert _returned(answers, "balance") == AMOUNT.to_bytes(16, "little")
    code_hash = _code_hash(bytes(wasmtime.wat2wasm(PROBE_WAT)))
    view = {"amount": str(AMOUNT + 1), "locked": str(LOCKED), "code_hash": code_hash,
            "storage_usage": STORAGE_USAGE, "storage_paid_at": 0}  # fmt: skip
    try:
        with open_store(store, "write") as writer, writer.batch() as batch:
            batch.put_account_state(PROBE, FACTS.head_height, orjson.dumps(view))
        time.sleep(VERSION_CHECK_SECONDS * 5)  # the reader reads the change counters at most once a millisecond
        assert _returned(answers, "balance") == (AMOUNT + 1).to_bytes(16, "little")
    finally:
        with open_store(store, "write") as writer, writer.batch() as batch:
            batch.put_account_state(PROBE, FACTS.head_height, orjson.dumps({**view, "amount": str(AMOUNT)}))
        time.sleep(VERSION_CHECK_SECONDS * 5)
