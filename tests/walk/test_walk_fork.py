"""The walk through a fork of another `nearrpc serve` over the sample chain, on both backends:
through the fork it meets the upstream's very bytes; with the upstream stopped the fork answers
the same walk from its store; so does a plain server over that store (the fork replayed offline)."""

from __future__ import annotations

import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.support.backends import BACKENDS
from tests.support.chain_walk import Walk, walk_chain
from tests.support.sample_facts import sample_facts
from tests.support.serve_process import serving

pytestmark = pytest.mark.live

# past a fork's settle window: what it answers after this comes from its store (tests/fork)
SETTLE_SECONDS = 2.1


def _differences(expected: Walk, got: Walk) -> list[str]:
    assert set(got.answers) == set(expected.answers), "the walks asked different requests"
    return [f"{key}: {got.answers[key]!r} != {value!r}" for key, value in expected.answers.items()
            if got.answers[key] != value][:5]  # fmt: skip


def _fork_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Path | str:
    if backend == "sqlite":
        return tmp_path / "fork.sqlite"
    url: str = request.getfixturevalue("postgres").create_database("walk_fork")
    return url


@pytest.mark.long(1)
@pytest.mark.parametrize("backend", BACKENDS)
def test_the_walk_through_a_fork_is_the_upstreams_and_replays_offline(
    backend: str, sample_store: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    heights = sample_facts().block_heights
    store = _fork_store(backend, tmp_path, request)
    running = ExitStack()
    with running:
        node = running.enter_context(serving("--store", sample_store, log=tmp_path / "upstream.log"))
        direct = walk_chain(node.url, heights)
        assert direct.transactions and direct.receipts, "the sample's walk met no transaction or receipt"
        with serving("--store", store, "--upstream", node.url + "/", log=tmp_path / "fork.log") as fork:
            assert _differences(direct, walk_chain(fork.url, heights)) == [], "through the fork"
            running.close()  # the upstream stops; the fork serves on from what it kept
            time.sleep(SETTLE_SECONDS)
            assert _differences(direct, walk_chain(fork.url, heights)) == [], "the fork, its upstream stopped"
    with serving("--store", store, log=tmp_path / "replay.log") as replay:
        assert _differences(direct, walk_chain(replay.url, heights)) == [], "a plain server over the fork's store"
