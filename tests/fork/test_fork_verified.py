"""A fork keeps only what it verified, against a real upstream `nearrpc serve` behind a lying
proxy: a block answered with another block's hash keeps nothing and never blocks the real block
(live, and in a store an earlier build filled from a liar, after a restart); `store check` finds
such a store's contradiction; a redirect is not followed, and keeps no mark."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nearrpc.ingest.blocks_import import stored_block
from nearrpc.store import open_store
from tests.fork.upstream_proxy import Intercepted, UpstreamProxy, rpc
from tests.support.cli import nearrpc
from tests.support.http_stub import StubHandler, serving_stub
from tests.support.serve_process import Served, serving

pytestmark = [pytest.mark.live, pytest.mark.deep]

FLAGS = ("--miss-timeout", "3", "--upstream-retries", "0", "--upstream-timeout", "2")


def block_at(url: str, height: int) -> dict[str, Any]:
    reply = rpc(url, "block", {"block_id": height}).json()
    assert "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def three_in_a_row(upstream: Served) -> int:
    """A height h with blocks at h, h+1 and h+2, each the parent of the next."""
    for height in range(10, 60):
        views = [rpc(upstream.url, "block", {"block_id": h}).json().get("result") for h in range(height, height + 3)]
        parents = zip(views[1:], range(height, height + 2), strict=True)
        if all(views) and all(view["header"]["prev_height"] == parent for view, parent in parents):
            return height
    raise AssertionError("no three blocks in a row in the sample chain")


def lie_at(height: int, liar_hash: str) -> Any:
    """A rewrite that answers block `height` (asked by height) with `liar_hash` as its hash."""

    def rewrite(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        if request.get("method") == "block" and request.get("params") == {"block_id": height}:
            answer["result"]["header"]["hash"] = liar_hash
        return answer

    return rewrite


def test_a_block_answered_with_another_blocks_hash_keeps_nothing(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    h = three_in_a_row(upstream)
    real, after = block_at(upstream.url, h), block_at(upstream.url, h + 1)
    store = tmp_path / "f.sqlite"
    with serving("--store", store, "--upstream", proxy.url, *FLAGS, log=tmp_path / "fork.log") as fork:
        proxy.rewrite = lie_at(h, after["header"]["hash"])
        lied = rpc(fork.url, "block", {"block_id": h}).json()
        assert lied["error"]["cause"]["name"] == "INTERNAL_ERROR", lied
        assert proxy.asked("block", {"block_id": after["header"]["hash"]}) == 1  # the hash was asked for
        # the real block at h+1 is unharmed, by height and by hash, while the liar still lies
        assert block_at(fork.url, h + 1) == after
        assert rpc(fork.url, "block", {"block_id": after["header"]["hash"]}).json()["result"] == after
        proxy.rewrite = None
        assert block_at(fork.url, h) == real
    reader = open_store(store, "read")
    try:
        kept = reader.block_by_height(h)
        assert kept is not None and kept.hash == real["header"]["hash"]
        assert reader.check(thorough=True).ok
    finally:
        reader.close()
    assert nearrpc("store", "check", "--store", store).returncode == 0


def test_a_store_filled_from_a_liar_is_found_by_store_check_and_repaired_by_a_good_upstream(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """What an earlier build kept from an upstream that answered block h with block h+1's hash
    (and then block h+2, whose parent is h+1): `store check` finds it; a fork over it with a good
    upstream answers block h+1 (which the conflict blocked for good before) and then block h."""
    h = three_in_a_row(upstream)
    real, after, later = (block_at(upstream.url, height) for height in (h, h + 1, h + 2))
    store = tmp_path / "lied.sqlite"
    genesis = rpc(upstream.url, "genesis_config", None).json()["result"]
    lied = json.loads(json.dumps(real))
    lied["header"]["hash"] = after["header"]["hash"]
    with open_store(store, "write") as writer, writer.batch() as batch:
        batch.put_genesis_config(json.dumps(genesis).encode())
        batch.put_block(stored_block(lied))
        batch.put_block(stored_block(later))

    checked = nearrpc("store", "check", "--store", store)
    assert checked.returncode == 1, checked
    assert f"block {later['header']['hash']} at height {h + 2} names as its parent" in checked.stderr
    assert f"stored at height {h}" in checked.stderr

    with serving("--store", store, "--upstream", proxy.url, *FLAGS, log=tmp_path / "fork.log") as fork:
        assert block_at(fork.url, h + 1) == after
        assert rpc(fork.url, "block", {"block_id": after["header"]["hash"]}).json()["result"] == after
        assert block_at(fork.url, h) == real
        assert block_at(fork.url, h + 2) == later
        assert any("kept from an upstream that lied" in line for line in fork.log_lines())
    assert nearrpc("store", "check", "--store", store).returncode == 0
    # and after a restart, upstream gone: the store answers the real blocks
    with serving("--store", store, log=tmp_path / "replay.log") as replay:
        assert block_at(replay.url, h) == real
        assert block_at(replay.url, h + 1) == after


def test_a_lie_about_a_blocks_parent_is_refused(upstream: Served, proxy: UpstreamProxy, tmp_path: Path) -> None:
    """Block h stored; the node answers block h+1 with a parent that is not block h (and the same
    when asked by hash): the node's own block at h contradicts it, so nothing is kept."""
    h = three_in_a_row(upstream)
    after = block_at(upstream.url, h + 1)
    store = tmp_path / "f.sqlite"
    with serving("--store", store, "--upstream", proxy.url, *FLAGS, log=tmp_path / "fork.log") as fork:
        block_at(fork.url, h)

        def rewrite(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
            asked = request["params"].get("block_id")
            if request.get("method") == "block" and asked in (h + 1, after["header"]["hash"]):
                answer["result"]["header"]["prev_hash"] = after["header"]["hash"]
            return answer

        proxy.rewrite = rewrite
        refused = rpc(fork.url, "block", {"block_id": h + 1}).json()
        assert refused["error"]["cause"]["name"] == "INTERNAL_ERROR", refused
        proxy.rewrite = None
        assert block_at(fork.url, h + 1) == after


class UnknownEverything(StubHandler):
    """Another node: every block is UNKNOWN_BLOCK, as nearcore answers it."""

    def do_POST(self) -> None:
        self.body()
        error = {"name": "HANDLER_ERROR", "cause": {"name": "UNKNOWN_BLOCK", "info": {}}, "code": -32000,
                 "message": "Server error", "data": "DB Not Found Error"}  # fmt: skip
        self.answer(200, json.dumps({"jsonrpc": "2.0", "error": error, "id": 1}).encode())


def test_a_redirect_is_not_followed_and_keeps_no_mark(upstream: Served, proxy: UpstreamProxy, tmp_path: Path) -> None:
    """A 307 (to itself with an API key in the query: a loop; or to another node that answers
    UNKNOWN_BLOCK) is an error answer: nothing is kept, no "unknown" mark, and the URL it names
    is shown nowhere with its query."""
    store = tmp_path / "f.sqlite"
    unknown = "7tkzFg8RHBmMw1ncRJZCCZAizgq4rwCftTKYLce8RU8t"
    log = tmp_path / "fork.log"
    with serving_stub(UnknownEverything) as other, serving(
        "--store", store, "--upstream", proxy.url, *FLAGS, log=log
    ) as fork:
        assert block_at(fork.url, 10)["header"]["height"] == 10  # the chain is checked, the store made
        for elsewhere in (proxy.url + "?apikey=SECRET-KEY", other + "/?apikey=SECRET-KEY"):
            proxy.intercept = lambda request, to=elsewhere: (307, b"", {"Location": to})
            reply = rpc(fork.url, "block", {"block_id": unknown}).json()
            assert reply["error"]["cause"]["name"] == "INTERNAL_ERROR", reply
            assert "SECRET" not in json.dumps(reply)
        proxy.intercept = None
    lines = log.read_text().splitlines()
    assert not [line for line in lines if "SECRET" in line]
    assert any("a redirect, which is not followed" in line for line in lines)
    reader = open_store(store, "read")
    try:
        assert not reader.fetched(f"unserved/{unknown}")
    finally:
        reader.close()


def peak_memory_mb(pid: int) -> float:
    """The process's peak resident memory (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmHWM for {pid}")


def huge_answer(megabytes: int) -> Iterator[bytes]:
    yield b'{"jsonrpc":"2.0","id":1,"result":{"header":"'
    chunk = b"a" * (1 << 20)
    for _ in range(megabytes):
        yield chunk
    yield b'"}}'


def test_an_answer_over_the_size_limit_is_refused_as_it_arrives(proxy: UpstreamProxy, tmp_path: Path) -> None:
    """300 MB streamed without a declared length, and 40 MB declared, over the default limit
    (32 MB): each is refused with one line, keeps nothing, and the fork's memory does not grow
    by the answer's size."""
    store = tmp_path / "f.sqlite"
    log = tmp_path / "fork.log"
    flags = (*FLAGS, "--miss-timeout", "30", "--upstream-timeout", "30")
    with serving("--store", store, "--upstream", proxy.url, *flags, log=log) as fork:
        assert block_at(fork.url, 10)["header"]["height"] == 10
        before = peak_memory_mb(fork.pid)
        declared = b'{"jsonrpc":"2.0","id":1,"result":{"header":"' + b"a" * (40 << 20) + b'"}}'
        for answer in (huge_answer(300), declared):

            def intercept(request: dict[str, Any], body: bytes | Iterator[bytes] = answer) -> Intercepted:
                return (200, body, {}) if request["params"] == {"block_id": 30} else None

            proxy.intercept = intercept
            reply = rpc(fork.url, "block", {"block_id": 30}).json()
            assert reply["error"]["cause"]["name"] == "INTERNAL_ERROR", reply
        proxy.intercept = None
        grown = peak_memory_mb(fork.pid) - before
        assert grown < 100, f"the fork's peak memory grew by {grown:.0f} MB"
        refusals = [line for line in fork.log_lines() if "the answer is over 32 MB (--upstream-max-answer-mb)" in line]
        assert len(refusals) == 2, fork.log_lines()[-5:]
        assert block_at(fork.url, 30)["header"]["height"] == 30  # the real answer, now that it is one
    reader = open_store(store, "read")
    try:
        assert not reader.fetched("skipped/30")
    finally:
        reader.close()


def test_a_pinned_head_answered_with_another_blocks_hash_is_refused_at_start(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    h = three_in_a_row(upstream)
    proxy.rewrite = lie_at(h, block_at(upstream.url, h + 1)["header"]["hash"])
    store = tmp_path / "pinned.sqlite"
    done = nearrpc("serve", "--store", store, "--upstream", proxy.url, "--fork-height", str(h), "--port", "0",
                   "--upstream-retries", "0", timeout=120)  # fmt: skip
    assert done.returncode == 2, done
    assert done.stderr.count("\n") == 1 and "another block when asked by that hash: nothing is kept" in done.stderr
    assert not store.exists()


def test_a_stored_block_that_is_not_its_successors_parent_gives_way(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """A store holding block h under a hash no block has (kept from a liar by an earlier build):
    once block h+1 is fetched and the upstream confirms h+1's parent, block h answers the real
    block (it answered the lie for good before); the lie stays reachable by its hash only."""
    h = three_in_a_row(upstream)
    real, after = block_at(upstream.url, h), block_at(upstream.url, h + 1)
    store = tmp_path / "lied.sqlite"
    genesis = rpc(upstream.url, "genesis_config", None).json()["result"]
    lied = json.loads(json.dumps(real))
    lied["header"]["hash"] = "7tkzFg8RHBmMw1ncRJZCCZAizgq4rwCftTKYLce8RU8t"
    with open_store(store, "write") as writer, writer.batch() as batch:
        batch.put_genesis_config(json.dumps(genesis).encode())
        batch.put_block(stored_block(lied))
    with serving("--store", store, "--upstream", proxy.url, *FLAGS, log=tmp_path / "fork.log") as fork:
        assert block_at(fork.url, h + 1) == after
        assert block_at(fork.url, h) == real


def test_an_error_answer_without_nearcores_cause_keeps_no_mark(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """An answer naming UNKNOWN_BLOCK without nearcore's structured cause (a proxy's or another
    server's error) is no proof that the block does not exist: answered as an error, no mark.
    The same question answered by the node itself (with the cause) is marked."""
    store = tmp_path / "f.sqlite"
    bare_hash = "7tkzFg8RHBmMw1ncRJZCCZAizgq4rwCftTKYLce8RU8t"
    real_hash = "8tkzFg8RHBmMw1ncRJZCCZAizgq4rwCftTKYLce8RU8t"

    def bare(request: dict[str, Any]) -> Intercepted:
        error = {"name": "UNKNOWN_BLOCK", "code": -32000, "message": "Server error", "data": "no such block"}
        return 200, json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "error": error}).encode(), {}

    with serving("--store", store, "--upstream", proxy.url, *FLAGS, log=tmp_path / "fork.log") as fork:
        assert block_at(fork.url, 10)["header"]["height"] == 10  # the chain is checked, the store made
        proxy.intercept = bare
        reply = rpc(fork.url, "block", {"block_id": bare_hash}).json()
        assert reply["error"]["cause"]["name"] == "INTERNAL_ERROR", reply
        proxy.intercept = None
        reply = rpc(fork.url, "block", {"block_id": real_hash}).json()
        assert reply["error"]["cause"]["name"] == "UNKNOWN_BLOCK", reply
    reader = open_store(store, "read")
    try:
        assert not reader.fetched(f"unserved/{bare_hash}")
        assert reader.fetched(f"unserved/{real_hash}")
    finally:
        reader.close()


@pytest.mark.parametrize("asked", ["height", "hash"])
def test_a_stored_parent_at_another_height_than_its_child_names_is_dropped(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path, asked: str
) -> None:
    """A store holding block h+1 under block h's hash (kept from a liar by an earlier build):
    fetching block h+1 (by its height or its hash), whose header names block h's hash at height
    h as its parent, drops the lie, so block h's hash answers block h from then on."""
    h = three_in_a_row(upstream)
    real, after = block_at(upstream.url, h), block_at(upstream.url, h + 1)
    store = tmp_path / "lied.sqlite"
    genesis = rpc(upstream.url, "genesis_config", None).json()["result"]
    lied = json.loads(json.dumps(after))
    lied["header"]["hash"] = real["header"]["hash"]
    with open_store(store, "write") as writer, writer.batch() as batch:
        batch.put_genesis_config(json.dumps(genesis).encode())
        batch.put_block(stored_block(lied), canonical=False)
    with serving("--store", store, "--upstream", proxy.url, *FLAGS, log=tmp_path / "fork.log") as fork:
        block_id = h + 1 if asked == "height" else after["header"]["hash"]
        assert rpc(fork.url, "block", {"block_id": block_id}).json()["result"] == after
        assert rpc(fork.url, "block", {"block_id": real["header"]["hash"]}).json()["result"] == real
        assert any("kept from an upstream that lied" in line for line in fork.log_lines())


def test_an_answer_kept_from_a_dropped_block_is_not_answered_again(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """A store holding block h under block h+1's hash answers that hash with the lie until the
    fork meets the real block h+1; then the lie is dropped, and so is the answer the server
    kept from it: the hash answers block h+1."""
    h = three_in_a_row(upstream)
    real, after = block_at(upstream.url, h), block_at(upstream.url, h + 1)
    store = tmp_path / "lied.sqlite"
    genesis = rpc(upstream.url, "genesis_config", None).json()["result"]
    lied = json.loads(json.dumps(real))
    lied["header"]["hash"] = after["header"]["hash"]
    with open_store(store, "write") as writer, writer.batch() as batch:
        batch.put_genesis_config(json.dumps(genesis).encode())
        batch.put_block(stored_block(lied), canonical=False)
    by_hash = {"block_id": after["header"]["hash"]}
    with serving("--store", store, "--upstream", proxy.url, *FLAGS, log=tmp_path / "fork.log") as fork:
        assert rpc(fork.url, "block", by_hash).json()["result"] == lied  # what the store holds, as it is
        assert block_at(fork.url, h + 1) == after
        assert rpc(fork.url, "block", by_hash).json()["result"] == after


def test_a_head_answered_with_another_blocks_hash_keeps_nothing(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """The node answers its final and optimistic blocks with block 10's hash: asked for block 10
    by that hash, the head's hash being only the node's word, nothing is kept: the fork answers
    the real block 10."""
    ten = block_at(upstream.url, 10)

    def rewrite(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        params = request.get("params")
        if request.get("method") == "block" and isinstance(params, dict) and "finality" in params:
            answer["result"]["header"]["hash"] = ten["header"]["hash"]
        return answer

    store = tmp_path / "f.sqlite"
    with serving("--store", store, "--upstream", proxy.url, *FLAGS, log=tmp_path / "fork.log") as fork:
        assert block_at(fork.url, 9)["header"]["height"] == 9  # the chain is checked, the store made
        proxy.rewrite = rewrite
        for finality in ("final", "optimistic"):
            rpc(fork.url, "block", {"finality": finality})
        proxy.rewrite = None
        assert rpc(fork.url, "block", {"block_id": ten["header"]["hash"]}).json()["result"] == ten


def test_a_block_asked_by_hash_answered_with_another_keeps_nothing(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """Asked for block 11 by its hash, the node answers block 10: an error, nothing kept, and
    block 11's hash answers block 11 once the node answers it."""
    ten, eleven = block_at(upstream.url, 10), block_at(upstream.url, 11)

    def rewrite(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        if request.get("method") == "block" and request.get("params") == {"block_id": eleven["header"]["hash"]}:
            answer["result"] = json.loads(json.dumps(ten))
        return answer

    store = tmp_path / "f.sqlite"
    with serving("--store", store, "--upstream", proxy.url, *FLAGS, log=tmp_path / "fork.log") as fork:
        assert block_at(fork.url, 9)["header"]["height"] == 9  # the chain is checked, the store made
        proxy.rewrite = rewrite
        refused = rpc(fork.url, "block", {"block_id": eleven["header"]["hash"]}).json()
        assert refused["error"]["cause"]["name"] == "INTERNAL_ERROR", refused
        proxy.rewrite = None
        assert rpc(fork.url, "block", {"block_id": eleven["header"]["hash"]}).json()["result"] == eleven


def test_a_block_whose_parent_differs_when_asked_by_its_hash_keeps_nothing(
    upstream: Served, proxy: UpstreamProxy, tmp_path: Path
) -> None:
    """Asked by height, the node answers block h with another parent than it gives the same hash
    when asked by that hash: the node contradicts itself, nothing is kept."""
    h = three_in_a_row(upstream)
    real, after = block_at(upstream.url, h), block_at(upstream.url, h + 1)

    def rewrite(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        if request.get("method") == "block" and request.get("params") == {"block_id": h}:
            answer["result"]["header"]["prev_hash"] = after["header"]["hash"]
        return answer

    store = tmp_path / "f.sqlite"
    with serving("--store", store, "--upstream", proxy.url, *FLAGS, log=tmp_path / "fork.log") as fork:
        proxy.rewrite = rewrite
        refused = rpc(fork.url, "block", {"block_id": h}).json()
        assert refused["error"]["cause"]["name"] == "INTERNAL_ERROR", refused
        proxy.rewrite = None
        assert block_at(fork.url, h) == real
