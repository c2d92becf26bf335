"""Chunks, transactions, receipts, validators and state changes through a fork of another
`nearrpc serve` over the sample chain (issue 30 item 3): every answer the upstream's bytes,
then the same bytes with the upstream stopped; a lying upstream gets nothing kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import httpx
import pytest

from nearrpc.store import open_store
from tests.fork.test_fork_replay import Answers, ask, differences, empty_store
from tests.fork.upstream_proxy import UpstreamProxy
from tests.support.backends import BACKENDS
from tests.support.sample_facts import sample_facts
from tests.support.serve_process import Served, serving

pytestmark = [pytest.mark.live, pytest.mark.deep]

# blocks whose chunks carry the sample's transactions are found by walking these heights
_WALKED: Final = range(1, 100)
_MOST_TRANSACTIONS: Final = 6  # enough to meet transfers, calls and key changes, few enough to stay quick


def _body(method: str, params: object) -> tuple[str, str]:
    return "/", json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})


def _result(url: str, method: str, params: object) -> Any:
    answer = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, timeout=30.0)
    body = answer.json()
    assert "result" in body, (method, params, body)
    return body["result"]


def chain_requests(url: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(requests a store's rows answer, requests of the changes methods) over the sample's
    transactions: each new chunk by hash and by block and shard, each transaction in both forms
    and with receipts, each of its receipts, every epoch's validators; the changes of their blocks."""
    rows: list[tuple[str, str]] = []
    changes: list[tuple[str, str]] = []
    transactions: list[tuple[str, str, int]] = []
    for height in _WALKED:
        if height in sample_facts().skipped_heights:
            continue
        block = _result(url, "block", {"block_id": height})
        for chunk in block["chunks"]:
            if chunk["height_included"] != height:
                continue
            rows.append(_body("chunk", {"chunk_id": chunk["chunk_hash"]}))
            rows.append(_body("chunk", {"block_id": height, "shard_id": chunk["shard_id"]}))
            found = _result(url, "chunk", {"chunk_id": chunk["chunk_hash"]})["transactions"]
            transactions += [(tx["hash"], tx["signer_id"], height) for tx in found]
        if len(transactions) >= _MOST_TRANSACTIONS:
            break
    assert transactions, "the sample chain's chunks carry no transactions"
    for tx_hash, signer, height in transactions:
        rows.append(_body("tx", {"tx_hash": tx_hash, "sender_account_id": signer}))
        rows.append(_body("tx", [tx_hash, signer]))
        rows.append(_body("EXPERIMENTAL_tx_status", {"tx_hash": tx_hash, "sender_account_id": signer}))
        status = _result(url, "EXPERIMENTAL_tx_status", {"tx_hash": tx_hash, "sender_account_id": signer})
        rows += [_body("EXPERIMENTAL_receipt", {"receipt_id": item["id"]}) for item in status["receipts_outcome"]]
        signer_changes = {"block_id": height, "changes_type": "account_changes", "account_ids": [signer]}
        changes.append(_body("EXPERIMENTAL_changes", signer_changes))
        changes.append(_body("changes", signer_changes))
        changes.append(_body("EXPERIMENTAL_changes_in_block", {"block_id": height}))
        changes.append(_body("block_effects", {"block_id": height}))
    for epoch in sample_facts().epochs:
        rows.append(_body("validators", {"epoch_id": epoch.epoch_id}))
    rows += [_body("validators", [None]), _body("validators", {"latest": None}),
             _body("EXPERIMENTAL_validators_ordered", [None])]  # fmt: skip
    return list(dict.fromkeys(rows)), list(dict.fromkeys(changes))


def _results(answers: Answers) -> list[Any]:
    return [json.loads(body) for _, body in answers.values()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fork_answers_chunks_transactions_receipts_validators_and_changes_then_replays_them(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    rows, changes = chain_requests(upstream.url)
    asked = rows + changes
    direct = ask(upstream.url, asked)
    failed = [answer for answer in _results(direct) if "result" not in answer]
    assert not failed, failed[:3]
    store = empty_store(backend, tmp_path, request)
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "fork.log") as fork:
        assert differences(direct, ask(fork.url, asked)) == [], "through the fork"
        before = proxy.total()
        assert differences(direct, ask(fork.url, asked)) == [], "asked again"
        # a live fork asks for its head (and the current epoch's validators once it moved) again;
        # nothing of what was kept by hash or per block
        again = {key for key, count in proxy.requests().items() if count > 1}
        assert not [key for key in again if key.split(" ")[0] in ("chunk", "EXPERIMENTAL_tx_status",
                                                                   "EXPERIMENTAL_receipt")], again  # fmt: skip
        assert proxy.total() - before <= len(asked)
    proxy.down = True  # the upstream stopped: a new fork process over the store answers alone
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "replay.log") as replay:
        assert differences(direct, ask(replay.url, asked)) == [], "replayed with the upstream stopped"
    reader = open_store(store, "read")
    try:
        kept_chunks = {chunk.chunk_hash for chunk in reader.iter_chunks()}
        kept_transactions = {tx.tx_hash for tx in reader.iter_transactions()}
    finally:
        reader.close()
    chunk_hashes = {json.loads(body)["params"]["chunk_id"] for _, body in rows if '"chunk_id"' in body}
    assert chunk_hashes <= kept_chunks
    assert {json.loads(body)["params"]["tx_hash"] for _, body in rows if '"EXPERIMENTAL_tx_status"' in body} <= (
        kept_transactions
    )
    # a plain server over the fork's store answers what it holds as rows the same way
    plain_rows = [key for key in rows if json.loads(key[1])["method"] in ("chunk", "tx", "EXPERIMENTAL_tx_status")]
    with serving("--store", store, log=tmp_path / "plain.log") as plain:
        assert differences({key: direct[key] for key in plain_rows}, ask(plain.url, plain_rows)) == []


def _lie(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """Every chunk, status and receipt answered for another hash than the one asked for."""
    result = answer.get("result")
    other = "11111111111111111111111111111111"
    if request.get("method") == "chunk" and isinstance(result, dict):
        result["header"]["chunk_hash"] = other
    elif request.get("method") == "EXPERIMENTAL_tx_status" and isinstance(result, dict):
        result["transaction"]["hash"] = other
    elif request.get("method") == "EXPERIMENTAL_receipt" and isinstance(result, dict):
        result["receipt_id"] = other
    return answer


def test_a_lying_upstream_gets_nothing_kept_and_blocks_nothing(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    rows, _ = chain_requests(upstream.url)
    lied_about = [key for key in rows if json.loads(key[1])["method"] in ("chunk", "EXPERIMENTAL_tx_status",
                                                                         "EXPERIMENTAL_receipt")]  # fmt: skip
    direct = ask(upstream.url, lied_about)
    store = tmp_path / "fork.sqlite"
    proxy.rewrite = _lie
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "fork.log") as fork:
        lied = ask(fork.url, lied_about)
        for (status, body), key in zip(lied.values(), lied_about, strict=True):
            error = json.loads(body).get("error")
            assert error is not None and error["cause"]["name"] == "INTERNAL_ERROR", (key, status, body[:300])
        reader = open_store(store, "read")
        try:
            assert list(reader.iter_chunks()) == [] and list(reader.iter_transactions()) == []
            assert not [key for key, _ in reader.iter_kept_answers() if key.startswith("receipt/")]
        finally:
            reader.close()
        proxy.rewrite = None  # the truth afterwards is answered and kept: the lie blocked nothing
        assert differences(direct, ask(fork.url, lied_about)) == []
