"""Three rules of the fork's reads of contract state and calls (a real ForkReader over a real
SQLite store, asking a real `nearrpc serve` of the sample chain through the steerable proxy):
- a `call_function` error a node may answer otherwise later (here UNAVAILABLE_SHARD: a shard it
  does not track now) is answered and not kept; a later fork asks again (fork/calls.py KEPT_CAUSES);
- one storage key is fetched as `view_state` with the key as prefix: a page of that listing
  (`last_key`) is enough, as the trie lists keys in byte order and the key itself comes first
  when it exists (runtime state_viewer `view_state`);
- `view_state` of an account the node does not know (UNKNOWN_ACCOUNT) is an empty state: a view
  call's storage read of it is "no value", not a failure.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any, Final

import orjson
import pytest

from nearrpc.fork.reader import ForkReader
from nearrpc.sample import sample_chain
from nearrpc.store import open_store
from tests.fork.test_fork_chain_records_fetch import through_fork
from tests.fork.upstream_proxy import Intercepted, UpstreamProxy
from tests.support.sample_facts import SampleFacts, sample_facts

pytestmark = pytest.mark.live

FACTS: SampleFacts = sample_facts()
HEIGHT: Final = 100
BALANCE_KEY: Final = b"balice.localnet"


@pytest.fixture
def fork_store(tmp_path: Path) -> Path:
    """A fork's store as `serve --upstream` starts one: the upstream's configs, nothing else."""
    chain = sample_chain()
    path = tmp_path / "fork.sqlite"
    with open_store(path, "write") as writer, writer.batch() as batch:
        batch.put_genesis_config(chain.genesis_config_json)
        batch.put_client_config(chain.client_config_json)
    return path


def _not_tracked(request: dict[str, Any]) -> Intercepted:
    params = request.get("params")
    if not isinstance(params, dict) or params.get("request_type") != "call_function":
        return None
    error = {"name": "HANDLER_ERROR", "cause": {"name": "UNAVAILABLE_SHARD", "info": {"requested_shard_id": 0}},
             "code": -32000, "message": "Server error", "data": "The node does not track the shard ID 0"}  # fmt: skip
    return 200, orjson.dumps({"jsonrpc": "2.0", "id": request.get("id"), "error": error}), {}


def test_a_call_error_a_node_may_answer_otherwise_later_is_not_kept(proxy: UpstreamProxy, fork_store: Path) -> None:
    proxy.intercept = _not_tracked

    async def call(fork: ForkReader) -> Any:
        block = await fork.block_by_height(HEIGHT)
        assert block is not None
        return await fork.call_function(FACTS.contract_account, "get_num", b"", block)

    first = through_fork(fork_store, proxy.url, call)
    assert first.result is None and first.error is not None
    assert first.error["cause"]["name"] == "UNAVAILABLE_SHARD"
    reader = open_store(fork_store, "read")
    try:
        assert list(reader.iter_kept_answers()) == []
    finally:
        reader.close()
    proxy.intercept = None  # the node tracks the shard again: a new fork asks it again
    again = through_fork(fork_store, proxy.url, call)
    assert again.error is None and again.result is not None
    assert orjson.loads(again.result)["block_height"] == HEIGHT


def _value_at(account_id: str, key: bytes, height: int) -> bytes | None:
    value = None
    for row in FACTS.contract_data:
        if row.account_id == account_id and row.key == key and row.height <= height:
            value = row.value
    return value


def _one_page(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """A view_state answer as one page of a paged listing: `last_key` names its last item."""
    params = request.get("params")
    result = answer.get("result")
    if isinstance(params, dict) and params.get("request_type") == "view_state" and isinstance(result, dict):
        if result.get("values"):
            result["last_key"] = result["values"][-1]["key"]
    return answer


def test_one_key_is_read_from_a_page_of_its_listing(proxy: UpstreamProxy, fork_store: Path) -> None:
    expected = _value_at(FACTS.token_account, BALANCE_KEY, HEIGHT)
    assert expected is not None
    proxy.rewrite = _one_page

    async def read(fork: ForkReader) -> bytes | None:
        return await fork.contract_value(FACTS.token_account, BALANCE_KEY, HEIGHT)

    assert through_fork(fork_store, proxy.url, read) == expected
    asked = base64.b64encode(BALANCE_KEY).decode()
    assert any(f'"prefix_base64": "{asked}"' in request for request in proxy.requests())


def test_the_state_of_an_unknown_account_is_empty(proxy: UpstreamProxy, fork_store: Path) -> None:
    async def read(fork: ForkReader) -> tuple[bytes | None, list[tuple[bytes, bytes]]]:
        value = await fork.contract_value("nobody.localnet", b"STATE", HEIGHT)
        listing = await fork.contract_state("nobody.localnet", b"", HEIGHT, 100)
        return value, listing

    assert through_fork(fork_store, proxy.url, read) == (None, [])
