"""What a fork keeps beyond the rows themselves (`service/fork/marks.py`), seen through a second
fork process over the same store, so no in-memory settle cache can stand in for the store:
what was marked is answered without the upstream, what may still change is asked again, and an
account's state, a key, a key list are answered at exactly the height asked, never an older one."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fork.upstream_proxy import UpstreamProxy, rpc
from tests.support.serve_process import Served, serving

pytestmark = [pytest.mark.live, pytest.mark.deep]


def test_a_skipped_height_is_kept_for_good_and_one_above_the_final_head_is_asked_again(
    proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """Height 7 has no block and is below the upstream's final head (108): no block will ever be
    there, so a later fork over the store answers it without asking. Height 115 is above it:
    a block may yet come, so it is asked again (its mark would hide that block for good)."""
    store = tmp_path / "f.sqlite"
    asks = [("block", {"block_id": 7}), ("block", {"block_id": 115})]
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "first.log") as fork:
        first = [rpc(fork.url, *ask) for ask in asks]
    assert all(b"UNKNOWN_BLOCK" in reply.content for reply in first), [reply.text for reply in first]
    assert [proxy.asked(*ask) for ask in asks] == [1, 1]
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "second.log") as fork:
        again = [rpc(fork.url, *ask) for ask in asks]
    assert [(reply.status_code, reply.content) for reply in again] == [(r.status_code, r.content) for r in first]
    assert [proxy.asked(*ask) for ask in asks] == [1, 2]


def test_a_pinned_fork_keeps_a_hash_it_does_not_serve(proxy: UpstreamProxy, tmp_path: Path) -> None:
    """Pinned at 100, a hash no block has, or the hash of block 105, is not in the fork for good:
    a later pinned fork over the store answers UNKNOWN_BLOCK without asking. A live fork keeps a
    hash no block has as unknown too (the README's example hash is one: replayed, it must answer
    the same), and a later fork does not ask again."""
    store = tmp_path / "f.sqlite"
    above = rpc(proxy.url, "block", {"block_id": 105}).json()["result"]["header"]["hash"]
    nowhere = "11111111111111111111111111111111"
    pinned = ("--store", store, "--upstream", proxy.url, "--fork-height", "100")
    for name in ("first", "second"):
        with serving(*pinned, log=tmp_path / f"{name}.log") as fork:
            for block_hash in (above, nowhere):
                reply = rpc(fork.url, "block", {"block_id": block_hash})
                assert reply.json()["error"]["cause"]["name"] == "UNKNOWN_BLOCK", reply.text
    assert proxy.asked("block", {"block_id": above}) == 1
    assert proxy.asked("block", {"block_id": nowhere}) == 1
    live = tmp_path / "live.sqlite"
    for name in ("live-first", "live-second"):
        with serving("--store", live, "--upstream", proxy.url, log=tmp_path / f"{name}.log") as fork:
            assert rpc(fork.url, "block", {"block_id": nowhere}).json()["error"]["cause"]["name"] == "UNKNOWN_BLOCK"
    assert proxy.asked("block", {"block_id": nowhere}) == 2


def _view_account(height: int) -> dict[str, Any]:
    return {"block_id": height, "account_id": "alice.localnet"}


def test_an_account_is_answered_at_the_height_asked_never_an_older_stored_state(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """alice's state changes at 58 and 60. Once 58 is kept, 60 is still asked (the store's
    latest state at or below 60 is 58's), and both are marked: a later fork asks neither."""
    direct = {height: rpc(upstream.url, "EXPERIMENTAL_view_account", _view_account(height)) for height in (58, 60)}
    assert direct[58].json()["result"] != direct[60].json()["result"]  # the state did change
    store = tmp_path / "f.sqlite"
    for name in ("first", "second"):
        with serving("--store", store, "--upstream", proxy.url, log=tmp_path / f"{name}.log") as fork:
            for height in (58, 60):
                through = rpc(fork.url, "EXPERIMENTAL_view_account", _view_account(height))
                assert through.content == direct[height].content, (name, height)
    assert [proxy.asked("EXPERIMENTAL_view_account", _view_account(height)) for height in (58, 60)] == [1, 1]


def _drop_function_call_keys(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """An upstream on which alice deleted her function-call key before height 60."""
    if request.get("method") == "EXPERIMENTAL_view_access_key_list" and "result" in answer:
        keys = answer["result"]["keys"]
        answer["result"]["keys"] = [key for key in keys if key["access_key"]["permission"] == "FullAccess"]
    return answer


def test_a_key_the_upstream_no_longer_lists_is_gone_from_the_kept_list(proxy: UpstreamProxy, tmp_path: Path) -> None:
    """alice lists two keys at 50; at 60 the upstream lists only the full-access one (a deleted
    key): the store keeps it as gone at 60, so a plain server over the store lists one key there
    and answers UNKNOWN_ACCESS_KEY for the deleted one, and still lists both at 50."""
    store = tmp_path / "f.sqlite"
    keys_at = {height: {"block_id": height, "account_id": "alice.localnet"} for height in (50, 60)}
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "fork.log") as fork:
        at_50 = rpc(fork.url, "EXPERIMENTAL_view_access_key_list", keys_at[50]).json()["result"]["keys"]
        assert len(at_50) == 2
        proxy.rewrite = _drop_function_call_keys
        at_60 = rpc(fork.url, "EXPERIMENTAL_view_access_key_list", keys_at[60]).json()["result"]["keys"]
        assert [key["access_key"]["permission"] for key in at_60] == ["FullAccess"]
    (deleted,) = [key["public_key"] for key in at_50 if key["access_key"]["permission"] != "FullAccess"]
    with serving("--store", store, log=tmp_path / "replay.log") as replay:
        assert rpc(replay.url, "EXPERIMENTAL_view_access_key_list", keys_at[60]).json()["result"]["keys"] == at_60
        assert rpc(replay.url, "EXPERIMENTAL_view_access_key_list", keys_at[50]).json()["result"]["keys"] == at_50
        gone = rpc(replay.url, "EXPERIMENTAL_view_access_key", {**keys_at[60], "public_key": deleted})
        assert gone.json()["error"]["cause"]["name"] == "UNKNOWN_ACCESS_KEY", gone.text


def test_a_new_fork_answers_an_empty_key_list_as_its_upstream_does(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """A fork's store starts with no keys at all, and an ETH-implicit account has none: the first
    request lists its keys, the upstream answers none, and the fork answers that empty list, not
    "the store holds no access keys" (the fork's upstream knows keys even when its store holds none)."""
    params = {"block_id": 40, "account_id": "0xda1e21bb172d9fa3b5ea753d37c5195304b7b46e"}
    direct = rpc(upstream.url, "EXPERIMENTAL_view_access_key_list", params)
    assert direct.json()["result"]["keys"] == []
    with serving("--store", tmp_path / "f.sqlite", "--upstream", proxy.url, log=tmp_path / "fork.log") as fork:
        through = rpc(fork.url, "EXPERIMENTAL_view_access_key_list", params)
    assert (through.status_code, through.content) == (direct.status_code, direct.content)


def test_an_answer_fetched_in_time_is_kept_and_served_even_when_its_write_waits_past_the_deadline(
    proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """Another writer holds the store for 3 s, past the 2 s miss timeout: the upstream answered
    in time, so the write waits for the store (SQLite's 5 s busy timeout) and the request answers
    the block; the deadline never abandons a write, which would answer INTERNAL_ERROR and keep it."""
    store = tmp_path / "f.sqlite"
    flags = ("--miss-timeout", "2", "--upstream-retries", "1", "--upstream-timeout", "1")
    with serving("--store", store, "--upstream", proxy.url, *flags, log=tmp_path / "fork.log") as fork:
        assert rpc(fork.url, "block", {"block_id": 10}).status_code == 200  # the chain check is behind us
        other = sqlite3.connect(store, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")
        release = threading.Timer(3.0, lambda: other.execute("COMMIT"))
        release.start()
        try:
            started = time.monotonic()
            reply = rpc(fork.url, "block", {"block_id": 60})
            seconds = time.monotonic() - started
        finally:
            release.join()
            other.close()
        assert reply.status_code == 200 and reply.json()["result"]["header"]["height"] == 60, reply.text
        assert seconds > 2.5  # it did wait for the other writer
        proxy.down = True  # kept: answered from the store
        assert rpc(fork.url, "block", {"block_id": 60}).content == reply.content


def test_a_kept_key_list_stays_exact_when_keys_are_kept_at_a_lower_height_after_it(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """ephemeral.alice.localnet exists from 30 to 90: at 95 the upstream lists no keys, at 50 two.
    Asked in that order, the list at 95 is still empty afterwards: in a later fork over the store
    and in a plain server over it (the keys kept at 50 must not show through at 95)."""
    keys_at = {height: {"block_id": height, "account_id": "ephemeral.alice.localnet"} for height in (95, 50)}
    direct = {height: rpc(upstream.url, "EXPERIMENTAL_view_access_key_list", keys_at[height]) for height in (95, 50)}
    assert direct[95].json()["result"]["keys"] == [] and len(direct[50].json()["result"]["keys"]) == 2
    store = tmp_path / "f.sqlite"
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "first.log") as fork:
        for height in (95, 50):
            assert rpc(fork.url, "EXPERIMENTAL_view_access_key_list", keys_at[height]).content == direct[height].content
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "second.log") as fork:
        again = rpc(fork.url, "EXPERIMENTAL_view_access_key_list", keys_at[95])
    with serving("--store", store, log=tmp_path / "replay.log") as replay:
        replayed = rpc(replay.url, "EXPERIMENTAL_view_access_key_list", keys_at[95])
    assert [again.content, replayed.content] == [direct[95].content] * 2


def test_a_height_the_upstream_has_garbage_collected_is_not_kept_as_skipped(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """A non-archival upstream answers UNKNOWN_BLOCK below its earliest available block (50 here),
    as nearcore does for a collected height: that is not a skipped height. A later fork over the
    store, of an archival upstream, answers block 20."""
    unknown = rpc(upstream.url, "block", {"block_id": 7}).json()  # a real UNKNOWN_BLOCK answer
    earliest = rpc(upstream.url, "block", {"block_id": 50}).json()

    def collected(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        params = request.get("params")
        if request.get("method") == "block" and params == {"sync_checkpoint": "earliest_available"}:
            return {**earliest, "id": request.get("id")}
        if request.get("method") == "block" and isinstance(params, dict) and isinstance(params.get("block_id"), int):
            if params["block_id"] < 50:
                return {**unknown, "id": request.get("id")}
        return answer

    store = tmp_path / "f.sqlite"
    proxy.rewrite = collected
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "pruned.log") as fork:
        assert rpc(fork.url, "block", {"block_id": 20}).json()["error"]["cause"]["name"] == "UNKNOWN_BLOCK"
    proxy.rewrite = None
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "archival.log") as fork:
        reply = rpc(fork.url, "block", {"block_id": 20})
    assert reply.status_code == 200 and reply.json()["result"]["header"]["height"] == 20, reply.text


def test_a_pinned_fork_over_a_store_with_higher_blocks_still_serves_nothing_above_its_head(
    proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """A store a live fork wrote block 105 into, then forked pinned at 100: 105 is above the head,
    UNKNOWN_BLOCK by height and by hash, as for a pinned fork that never kept it."""
    store = tmp_path / "f.sqlite"
    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "live.log") as fork:
        above = rpc(fork.url, "block", {"block_id": 105}).json()["result"]["header"]["hash"]
    pinned = ("--store", store, "--upstream", proxy.url, "--fork-height", "100")
    with serving(*pinned, log=tmp_path / "pinned.log") as fork:
        assert rpc(fork.url, "block", {"finality": "optimistic"}).json()["result"]["header"]["height"] == 100
        for reference in (105, above):
            reply = rpc(fork.url, "block", {"block_id": reference})
            assert reply.json().get("error", {}).get("cause", {}).get("name") == "UNKNOWN_BLOCK", reply.text[:200]


def test_a_block_asked_only_by_hash_is_not_answered_by_height(upstream: Served, tmp_path: Path) -> None:
    """Found by hash, a block may be on a fork of the chain: it is kept, but not as the block at
    its height, which a replay then answers as never asked (UNKNOWN_BLOCK), not with that block."""
    block_hash = rpc(upstream.url, "block", {"block_id": 50}).json()["result"]["header"]["hash"]
    store = tmp_path / "f.sqlite"
    with serving("--store", store, "--upstream", upstream.url + "/", log=tmp_path / "fork.log") as fork:
        by_hash = rpc(fork.url, "block", {"block_id": block_hash})
        assert by_hash.json()["result"]["header"]["height"] == 50
    with serving("--store", store, log=tmp_path / "replay.log") as replay:
        assert rpc(replay.url, "block", {"block_id": block_hash}).content == by_hash.content
        by_height = rpc(replay.url, "block", {"block_id": 50})
        assert by_height.json()["error"]["cause"]["name"] == "UNKNOWN_BLOCK", by_height.text[:300]


def test_a_block_above_the_final_head_is_asked_again_until_it_is_final(proxy: UpstreamProxy, tmp_path: Path) -> None:
    """A live fork: block 109 is above the upstream's final head (108) and a reorg may replace it,
    so it is asked again; block 100 is final and kept for good."""
    with serving("--store", tmp_path / "f.sqlite", "--upstream", proxy.url, log=tmp_path / "fork.log") as fork:
        first = [rpc(fork.url, "block", {"block_id": height}).content for height in (109, 100)]
        time.sleep(2.1)  # past the settle window
        again = [rpc(fork.url, "block", {"block_id": height}).content for height in (109, 100)]
    assert again == first
    assert [proxy.asked("block", {"block_id": height}) for height in (109, 100)] == [2, 1]
