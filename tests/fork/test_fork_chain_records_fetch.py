"""The fork's reader fetches chunks, transactions, receipts and validators on a miss, checks them
and keeps them for good (issue 30 item 3): a real ForkReader over a real SQLite store, asking a
real `nearrpc serve` of the sample chain through the steerable proxy, whose chunk, transaction,
receipt and validators answers are the sample chain's own records (so a test can make them lie).
Over HTTP, through the handlers: tests/fork/test_fork_chain_records.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Final, TypeVar

import orjson
import pytest

from nearrpc.fork.reader import ForkReader
from nearrpc.fork.upstream import Upstream, UpstreamError, UpstreamSettings
from nearrpc.fork.writer import ForkWriter
from nearrpc.ingest.rpc_client import RetryPolicy
from nearrpc.sample import SampleChain, sample_chain
from nearrpc.store import StoredTransaction, open_store
from tests.fork.upstream_proxy import Intercepted, UpstreamProxy
from tests.store.chain_records import made_up_hash

pytestmark = pytest.mark.live

T = TypeVar("T")
_UNKNOWN: Final = made_up_hash("nothing of the sample chain")


def _answered(request: dict[str, Any], result: Any = None, cause: str | None = None) -> Intercepted:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request.get("id")}
    if cause is None:
        body["result"] = result
    else:
        body["error"] = {"name": "HANDLER_ERROR", "cause": {"name": cause, "info": {}}, "code": -32000,
                         "message": "Server error", "data": cause}  # fmt: skip
    return 200, orjson.dumps(body), {}


def records_upstream(chain: SampleChain) -> Callable[[dict[str, Any]], Intercepted]:
    """The proxy's own answers for the four lookups, from the sample chain's records (everything
    else goes on to the real upstream)."""
    by_method = {
        "chunk": ("chunk_id", {c.chunk_hash: c.view_json for c in chain.chunks}, "UNKNOWN_CHUNK"),
        "EXPERIMENTAL_tx_status": ("tx_hash", {t.tx_hash: t.view_json for t in chain.transactions},
                                   "UNKNOWN_TRANSACTION"),
        "EXPERIMENTAL_receipt": ("receipt_id", {r.receipt_id: r.view_json for r in chain.receipts}, "UNKNOWN_RECEIPT"),
        "validators": ("epoch_id", {v.epoch_id: v.view_json for v in chain.validators}, "UNKNOWN_EPOCH"),
    }

    def answer(request: dict[str, Any]) -> Intercepted:
        known = by_method.get(str(request.get("method")))
        if known is None:
            return None
        member, views, unknown = known
        view = views.get(request["params"][member])
        return _answered(request, cause=unknown) if view is None else _answered(request, orjson.loads(view))

    return answer


@pytest.fixture
def fork_store(tmp_path: Path) -> Path:
    """A fork's store as `serve --upstream` starts one: the upstream's configs, nothing else."""
    chain = sample_chain()
    path = tmp_path / "fork.sqlite"
    with open_store(path, "write") as writer, writer.batch() as batch:
        batch.put_genesis_config(chain.genesis_config_json)
        batch.put_client_config(chain.client_config_json)
    return path


def through_fork(store: Path, url: str, read: Callable[[ForkReader], Awaitable[T]]) -> T:
    async def run() -> T:
        settings = UpstreamSettings(url, 4, 0, RetryPolicy(retries=0, backoff=0.01, timeout=5.0))
        fork = ForkReader(open_store(store, "serve"), Upstream(settings), ForkWriter(store, None), fork_height=None,
                          miss_timeout=20.0)  # fmt: skip
        try:
            return await read(fork)
        finally:
            await fork.close()

    return asyncio.run(run())


def _asked(method: str, **params: str) -> str:
    """A request as the proxy counts it."""
    return f"{method} {json.dumps(params, sort_keys=True)}"


def _final(chain: SampleChain, final: bool) -> Iterator[StoredTransaction]:
    return (t for t in chain.transactions if (orjson.loads(t.view_json)["final_execution_status"] == "FINAL") == final)


def test_misses_are_fetched_checked_kept_for_good_and_replayed(proxy: UpstreamProxy, fork_store: Path) -> None:
    chain = sample_chain()
    proxy.intercept = records_upstream(chain)
    chunks = chain.chunks[:12]
    transactions = list(_final(chain, True))[:6]
    pending = next(_final(chain, False))  # executed above the head's final block
    receipt_ids = [o["id"] for t in transactions for o in orjson.loads(t.view_json)["receipts_outcome"]]
    receipts = {r.receipt_id: r for r in chain.receipts}

    async def read(fork: ForkReader) -> None:
        assert [await fork.chunk(c.chunk_hash) for c in chunks] == list(chunks)
        assert [await fork.transaction(t.tx_hash, t.signer_id) for t in transactions] == transactions
        for receipt_id in receipt_ids:
            found = await fork.receipt(receipt_id)
            assert found is not None and found.view_json == receipts[receipt_id].view_json
        # each epoch's, as the sample records it: ended ones as of their last block, the head's
        # as of the head
        assert [await fork.validators(v.epoch_id) for v in chain.validators] == list(chain.validators)
        assert await fork.transaction(pending.tx_hash, pending.signer_id) == pending  # answered...
        assert await fork.chunk(_UNKNOWN) is None and await fork.transaction(_UNKNOWN, "alice.localnet") is None
        assert await fork.receipt(_UNKNOWN) is None and await fork.validators(_UNKNOWN) is None

    through_fork(fork_store, proxy.url, read)
    reader = open_store(fork_store, "read")
    try:
        assert set(chunks) <= set(reader.iter_chunks())
        assert set(reader.iter_transactions()) == set(transactions)  # ...not kept: not final yet
        assert {key for key, _ in reader.iter_kept_answers()} == {f"receipt/{r}" for r in receipt_ids}
        assert set(reader.iter_validators()) == set(chain.validators)
    finally:
        reader.close()
    # asked again by a new fork: the kept ones from the store, the unknown one from the upstream
    asked = proxy.requests()

    async def again(fork: ForkReader) -> None:
        assert [await fork.chunk(c.chunk_hash) for c in chunks] == list(chunks)
        assert [await fork.transaction(t.tx_hash, t.signer_id) for t in transactions] == transactions
        assert await fork.chunk(_UNKNOWN) is None

    through_fork(fork_store, proxy.url, again)
    kept = [_asked("chunk", chunk_id=c.chunk_hash) for c in chunks] + [
        _asked("EXPERIMENTAL_tx_status", tx_hash=t.tx_hash, sender_account_id=t.signer_id, wait_until="NONE")
        for t in transactions
    ]
    after = proxy.requests()
    assert [after.get(key) for key in kept] == [asked[key] for key in kept]  # each asked once, then kept
    unknown = _asked("chunk", chunk_id=_UNKNOWN)
    assert after[unknown] == asked[unknown] + 1  # an unknown is never kept
    proxy.down = True  # the upstream stopped: what was kept answers alone

    async def replay(fork: ForkReader) -> None:
        assert [await fork.chunk(c.chunk_hash) for c in chunks] == list(chunks)
        assert [await fork.transaction(t.tx_hash, t.signer_id) for t in transactions] == transactions
        for receipt_id in receipt_ids:
            found = await fork.receipt(receipt_id)
            assert found is not None and found.view_json == receipts[receipt_id].view_json
        assert [await fork.validators(v.epoch_id) for v in chain.validators] == list(chain.validators)
        # not kept (not final), and the upstream gives no answer: not held, as nearcore answers
        # a transaction it does not hold (issue 43: an INTERNAL_ERROR offline, 408 online)
        assert await fork.transaction(pending.tx_hash, pending.signer_id) is None

    through_fork(fork_store, proxy.url, replay)


def _lie(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """Each record answered for another hash than the one asked for, or an epoch's validators
    starting at a block of another epoch."""
    result = answer.get("result")
    if not isinstance(result, dict):
        return answer
    if request["method"] == "chunk":
        result["header"]["chunk_hash"] = _UNKNOWN
    elif request["method"] == "EXPERIMENTAL_tx_status":
        result["transaction"]["hash"] = _UNKNOWN
    elif request["method"] == "EXPERIMENTAL_receipt":
        result["receipt_id"] = _UNKNOWN
    elif request["method"] == "validators":
        result["epoch_start_height"] += 40
    return answer


def test_a_lying_upstream_gets_nothing_kept_and_blocks_nothing(proxy: UpstreamProxy, fork_store: Path) -> None:
    chain = sample_chain()
    truth = records_upstream(chain)

    def lying(request: dict[str, Any]) -> Intercepted:
        answered = truth(request)
        if answered is None:
            return None
        status, body, headers = answered
        assert isinstance(body, bytes)
        return status, orjson.dumps(_lie(request, orjson.loads(body))), headers

    proxy.intercept = lying
    chunk, transaction, receipt = chain.chunks[5], next(_final(chain, True)), chain.receipts[3]
    epoch = chain.validators[1]
    lookups: list[Callable[[ForkReader], Awaitable[object]]] = [
        lambda fork: fork.chunk(chunk.chunk_hash),
        lambda fork: fork.transaction(transaction.tx_hash, transaction.signer_id),
        lambda fork: fork.receipt(receipt.receipt_id),
        lambda fork: fork.validators(epoch.epoch_id),
    ]

    async def lied_to(fork: ForkReader) -> None:
        for lookup in lookups:
            with pytest.raises(UpstreamError, match="refused"):
                await lookup(fork)

    through_fork(fork_store, proxy.url, lied_to)
    reader = open_store(fork_store, "read")
    try:
        assert list(reader.iter_chunks()) == [] and list(reader.iter_transactions()) == []
        assert list(reader.iter_kept_answers()) == [] and list(reader.iter_validators()) == []
    finally:
        reader.close()
    proxy.intercept = truth  # the truth afterwards is kept: the lie blocked nothing

    async def told_the_truth(fork: ForkReader) -> None:
        assert await fork.chunk(chunk.chunk_hash) == chunk
        assert await fork.transaction(transaction.tx_hash, transaction.signer_id) == transaction
        found = await fork.receipt(receipt.receipt_id)
        assert found is not None and found.view_json == receipt.view_json
        assert await fork.validators(epoch.epoch_id) == epoch

    through_fork(fork_store, proxy.url, told_the_truth)
