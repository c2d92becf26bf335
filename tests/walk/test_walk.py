"""An explorer's walk over the sample chain served by a real `nearrpc serve`, on each backend
(tests/conftest.py `server`): every block, its new chunks, their transactions, each status and
each receipt (tests/support/chain_walk.py checks every step against the one before), and what
the walk met is the whole of what the sample stores, answered as stored."""

from __future__ import annotations

from functools import cache

import orjson
import pytest

from nearrpc.sample import sample_chain
from tests.support.chain_walk import Walk, walk_chain
from tests.support.live_server import LiveServer
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.live


@cache
def _walked(url: str) -> Walk:
    return walk_chain(url, sample_facts().block_heights)


def _result(walk: Walk, method: str, params: object) -> object:
    status, body = walk.answers[(method, orjson.dumps(params).decode())]
    assert status == 200, body
    return orjson.loads(body)["result"]


def test_the_walk_meets_every_stored_chunk_transaction_and_receipt(server: LiveServer) -> None:
    walk, chain = _walked(server.url), sample_chain()
    assert sorted(walk.chunks) == sorted(chunk.chunk_hash for chunk in chain.chunks)
    assert sorted(walk.transactions) == sorted((tx.tx_hash, tx.signer_id) for tx in chain.transactions)
    assert sorted(walk.receipts) == sorted(receipt.receipt_id for receipt in chain.receipts)
    assert len(walk.blocks) == len(sample_facts().block_heights)
    # every shard of every block was asked: a new chunk, or (chunk_mask false) the shard's last one
    missing = sample_facts().missing_chunks
    assert len(walk.old_chunks) == len(missing) and len(walk.chunks) + len(missing) == len(walk.blocks) * len(
        sample_facts().shard_ids
    )


def test_the_walk_is_answered_as_the_sample_stores_it(server: LiveServer) -> None:
    walk, chain = _walked(server.url), sample_chain()
    for chunk in chain.chunks:
        assert _result(walk, "chunk", {"chunk_id": chunk.chunk_hash}) == orjson.loads(chunk.view_json)
    for tx in chain.transactions:
        named = {"tx_hash": tx.tx_hash, "sender_account_id": tx.signer_id}
        stored = orjson.loads(tx.view_json)
        assert _result(walk, "EXPERIMENTAL_tx_status", named) == stored
        assert _result(walk, "tx", named) == {k: v for k, v in stored.items() if k != "receipts"}
    for receipt in chain.receipts:
        assert _result(walk, "EXPERIMENTAL_receipt", {"receipt_id": receipt.receipt_id}) == orjson.loads(
            receipt.view_json
        )
