"""The recorder's JSON-RPC client against a real server behind the loopback proxy: which answers
it retries, how long it waits when the node says how long, and what it gives up on at once."""

from __future__ import annotations

import asyncio

import pytest

from nearrpc.ingest.errors import IngestError
from nearrpc.ingest.rpc_client import RetryPolicy, RpcClient, RpcReply
from tests.ingest.proxy import Behaviour, json_rpc_proxy
from tests.support.live_server import LiveServer
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.live

QUICK = RetryPolicy(retries=3, backoff=0.01, timeout=10.0)


def _genesis_config(url: str, policy: RetryPolicy = QUICK) -> tuple[RpcReply, int]:
    """One call of genesis_config through `url`; the reply and how many retries it took."""

    async def call() -> tuple[RpcReply, int]:
        async with RpcClient(url, policy, concurrency=1) as client:
            reply = await client.call("genesis_config", None)
            return reply, client.retries

    return asyncio.run(call())


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
def test_an_answer_that_may_pass_when_repeated_is_retried(server_a: LiveServer, status: int) -> None:
    behaviour = Behaviour(scripted=[(status, {})])
    with json_rpc_proxy(server_a.url, behaviour) as url:
        reply, retries = _genesis_config(url)
    assert reply.error is None and reply.result["chain_id"] == sample_facts().chain_id
    assert retries == 1 and len(behaviour.arrivals) == 2


@pytest.mark.parametrize("status", [400, 404, 413])
def test_any_other_answer_is_taken_as_it_is(server_a: LiveServer, status: int) -> None:
    # not a JSON-RPC response and not worth repeating: the import ends with one line
    behaviour = Behaviour(scripted=[(status, {})])
    with json_rpc_proxy(server_a.url, behaviour) as url, pytest.raises(IngestError) as refused:
        _genesis_config(url)
    assert str(refused.value) == f"{url}: genesis_config: HTTP {status} without a JSON-RPC response"
    assert len(behaviour.arrivals) == 1


def test_the_wait_is_never_shorter_than_retry_after(server_a: LiveServer) -> None:
    behaviour = Behaviour(scripted=[(429, {"Retry-After": "1"}), (503, {"Retry-After": "0.5"})])
    with json_rpc_proxy(server_a.url, behaviour) as url:
        reply, retries = _genesis_config(url)
    assert reply.error is None and retries == 2
    first, second, third = behaviour.arrivals
    assert second - first >= 1.0 and third - second >= 0.5  # the backoff alone is 0.01 s


def test_giving_up_names_the_last_failure(server_a: LiveServer) -> None:
    behaviour = Behaviour(scripted=[(503, {})] * 4)
    with json_rpc_proxy(server_a.url, behaviour) as url, pytest.raises(IngestError) as refused:
        _genesis_config(url)
    assert str(refused.value) == f"{url}: genesis_config: HTTP 503, still after 3 retries"
    assert len(behaviour.arrivals) == 4
