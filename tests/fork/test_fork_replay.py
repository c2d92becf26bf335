"""A fork of another `nearrpc serve` over the sample chain, on both backends: every README request
through the fork answers the upstream's bytes; with the upstream stopped the fork answers them
again from its store; so do a plain server over that store and over a `store copy` of it."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Final

import httpx
import pytest

from tests.support.backends import BACKENDS
from tests.support.cli import REPO, nearrpc
from tests.support.serve_process import Served, serving

pytestmark = [pytest.mark.live, pytest.mark.deep]

# The README's examples: `rpc '<body>'` lines and `curl ... localhost:3030<path> ... -d '<body>'`.
_RPC_LINE: Final = re.compile(r"^rpc '(?P<body>\{.*\})'$", re.MULTILINE)
_CURL: Final = re.compile(r"curl -s localhost:3030(?P<path>/\w*)?[^\n]*\\\n\s*-d '(?P<body>\{.*?\})'")
# Calls beyond the five that clients make first (status carries uptime: left out).
_EXTENSION: Final = (
    '{"jsonrpc":"2.0","id":1,"method":"query","params":{"request_type":"view_access_key_list",'
    '"finality":"final","account_id":"alice.localnet"}}',
    '{"jsonrpc":"2.0","id":1,"method":"query","params":{"request_type":"view_code","block_id":60,'
    '"account_id":"counter.localnet"}}',
    '{"jsonrpc":"2.0","id":1,"method":"EXPERIMENTAL_view_access_key","params":{"block_id":40,'
    '"account_id":"alice.localnet","public_key":"ed25519:11111111111111111111111111111111"}}',
    '{"jsonrpc":"2.0","id":1,"method":"gas_price","params":[null]}',
    '{"jsonrpc":"2.0","id":1,"method":"gas_price","params":[20]}',
    '{"jsonrpc":"2.0","id":1,"method":"EXPERIMENTAL_view_account","params":{"block_id":30,'
    '"account_id":"nobody.localnet"}}',
)


def readme_requests() -> list[tuple[str, str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = [("/", match["body"]) for match in _RPC_LINE.finditer(text)]
    found += [(match["path"] or "/", match["body"]) for match in _CURL.finditer(text)]
    assert len(found) >= 15, found  # the README's examples were found at all
    return found + [("/", body) for body in _EXTENSION]


Answers = dict[tuple[str, str], tuple[int, bytes]]


def ask(url: str, requests: list[tuple[str, str]]) -> Answers:
    with httpx.Client(timeout=30.0) as client:
        return {
            (path, body): (reply.status_code, reply.content)
            for path, body in requests
            for reply in [client.post(url + path, content=body, headers={"content-type": "application/json"})]
        }


def differences(expected: Answers, got: Answers) -> list[str]:
    return [f"{key}: {expected[key]!r} != {got[key]!r}" for key in expected if got[key] != expected[key]]


@contextmanager
def upstream(sample_store: Path, tmp_path: Path, name: str = "upstream") -> Iterator[Served]:
    with serving("--store", sample_store, log=tmp_path / f"{name}.log") as served:
        yield served


def empty_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Path | str:
    if backend == "sqlite":
        return tmp_path / "fork.sqlite"
    url: str = request.getfixturevalue("postgres").create_database("fork")
    return url


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fork_answers_the_upstreams_bytes_then_replays_them_without_it(
    backend: str, sample_store: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    requests = readme_requests()
    store = empty_store(backend, tmp_path, request)
    running_upstream = ExitStack()
    node = running_upstream.enter_context(upstream(sample_store, tmp_path))
    try:
        direct = ask(node.url, requests)
        with serving("--store", store, "--upstream", node.url + "/", log=tmp_path / "fork.log") as fork:
            assert "a fork of upstream" in fork.started_line
            assert differences(direct, ask(fork.url, requests)) == [], "through the fork"
            running_upstream.close()  # the upstream stops; the fork serves on
            time.sleep(2.1)  # past the fork's settle window: what it answers now comes from its store
            assert differences(direct, ask(fork.url, requests)) == [], "the fork, its upstream stopped"
    finally:
        running_upstream.close()
    with serving("--store", store, log=tmp_path / "replay.log") as replay:
        assert differences(direct, ask(replay.url, requests)) == [], "a plain server over the fork's store"
    copied = tmp_path / "copied.sqlite"
    done = nearrpc("store", "copy", store, copied)
    assert done.returncode == 0, done.stderr
    with serving("--store", copied, log=tmp_path / "copy.log") as replay:
        assert differences(direct, ask(replay.url, requests)) == [], "a copy of the fork's store"


def _block(reference: str) -> tuple[str, str]:
    return "/", f'{{"jsonrpc":"2.0","id":1,"method":"block","params":{reference}}}'


def test_a_pinned_fork_serves_its_head_and_nothing_above_it(sample_store: Path, tmp_path: Path) -> None:
    """--fork-height 100: optimistic is block 100, final its last final block, for as long as
    the fork runs and in its replay; heights above 100 are unknown there, as above a node's head."""
    store = tmp_path / "pinned.sqlite"
    with upstream(sample_store, tmp_path) as node:
        at_100 = ask(node.url, [_block('{"block_id":100}')])[_block('{"block_id":100}')]
        by_height = {"jsonrpc": "2.0", "id": 1, "method": "block", "params": {"block_id": 100}}
        block_100 = httpx.post(node.url, json=by_height)
        final_hash = block_100.json()["result"]["header"]["last_final_block"]
        final = ask(node.url, [_block(f'{{"block_id":"{final_hash}"}}')])[_block(f'{{"block_id":"{final_hash}"}}')]
        final_height = httpx.post(node.url, json={**by_height, "params": {"block_id": final_hash}}).json()["result"][
            "header"]["height"]
        upstream_head = ask(node.url, [_block('{"finality":"optimistic"}')])[_block('{"finality":"optimistic"}')]
        assert upstream_head != at_100  # the upstream's head is higher: the pin shows
        expected = {
            _block('{"finality":"optimistic"}'): at_100,
            _block('{"finality":"final"}'): final,
            _block('{"block_id":100}'): at_100,
        }
        with serving("--store", store, "--upstream", node.url + "/", "--fork-height", "100",
                     log=tmp_path / "fork.log") as fork:  # fmt: skip
            assert "pinned at 100" in fork.started_line
            assert differences(expected, ask(fork.url, list(expected))) == []
            (status, body), = ask(fork.url, [_block('{"block_id":105}')]).values()
            assert status == 200 and b"UNKNOWN_BLOCK" in body  # above the head: 200, as nearcore answers
    # the fork's own files only: its writer folded the WAL back when it stopped (beside it, the
    # folder of compiled contracts, `pinned.sqlite.compiled`, is no file of the store's)
    assert sorted(path.name for path in tmp_path.glob("pinned.sqlite*") if path.is_file()) == ["pinned.sqlite"]
    # the final block was asked as `final` only; as the head's ancestor it is canonical: found by height
    expected[_block(f'{{"block_id":{final_height}}}')] = final
    with serving("--store", store, log=tmp_path / "replay.log") as replay:
        assert differences(expected, ask(replay.url, list(expected))) == []


def test_a_fork_height_above_the_upstreams_final_block_is_refused(sample_store: Path, tmp_path: Path) -> None:
    with upstream(sample_store, tmp_path) as node:
        done = nearrpc("serve", "--store", tmp_path / "f.sqlite", "--upstream", node.url + "/", "--fork-height", "109",
                       "--port", "0")  # fmt: skip
    assert done.returncode == 2
    assert not (tmp_path / "f.sqlite").exists()  # refused before anything was written
    assert done.stderr.strip().splitlines() == [
        "nearrpc serve: --fork-height 109 is above the upstream's final block 108: a pinned head must be final, "
        "or what the fork serves below it could still change"
    ]
