"""The walk through a fork of another `nearrpc serve` over the sample chain, on both backends:
through the fork it meets the upstream's very bytes, up to the head; with the upstream stopped
the fork answers the walk up to the final block from its store, and so does a plain server over
that store (the fork replayed offline). Above the final block a transaction's status may still
move on (EXECUTED_OPTIMISTIC on the sample), so a fork answers it and keeps it only once FINAL.

A fork keeps a receipt as the upstream's EXPERIMENTAL_receipt answer (it does not say in which
block the receipt ran): a new fork process over the store, its upstream still stopped, and a plain
`serve` over it both answer the whole walk, receipts included."""

from __future__ import annotations

import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.support.backends import BACKENDS
from tests.support.chain_walk import Walk, walk_chain
from tests.support.sample_facts import sample_facts
from tests.support.serve_process import serving

pytestmark = [pytest.mark.live, pytest.mark.deep]

# past a fork's settle window: what it answers after this comes from its store (tests/fork)
SETTLE_SECONDS = 2.1


def _differences(expected: Walk, got: Walk) -> list[str]:
    """The first few answers that differ."""
    assert set(got.answers) == set(expected.answers), "the walks asked different requests"
    asked = list(expected.answers)
    assert asked
    return [f"{key}: {got.answers[key]!r} != {expected.answers[key]!r}" for key in asked
            if got.answers[key] != expected.answers[key]][:5]  # fmt: skip


def _fork_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Path | str:
    if backend == "sqlite":
        return tmp_path / "fork.sqlite"
    url: str = request.getfixturevalue("postgres").create_database("walk_fork")
    return url


# a fork on loopback: no bound on the requests per second it sends its upstream (20 by default)
UNBOUNDED = ("--upstream-rate", "0")


@pytest.mark.long(1.5)
@pytest.mark.parametrize("backend", BACKENDS)
def test_the_walk_through_a_fork_is_the_upstreams_and_replays_offline(
    backend: str, sample_store: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    facts = sample_facts()
    heights = facts.block_heights
    final = [height for height in heights if height <= facts.final_height]
    store = _fork_store(backend, tmp_path, request)
    running = ExitStack()
    with running:
        node = running.enter_context(serving("--store", sample_store, log=tmp_path / "upstream.log"))
        direct, direct_final = walk_chain(node.url, heights), walk_chain(node.url, final)
        assert direct_final.transactions and direct_final.receipts, "the sample's walk met no transaction"
        upstream = node.url + "/"
        with serving("--store", store, "--upstream", upstream, *UNBOUNDED, log=tmp_path / "fork.log") as fork:
            assert _differences(direct, walk_chain(fork.url, heights)) == [], "through the fork"
            running.close()  # the upstream stops; the fork serves on from what it kept
            time.sleep(SETTLE_SECONDS)
            assert _differences(direct_final, walk_chain(fork.url, final)) == [], "the fork, its upstream stopped"
    with serving("--store", store, "--upstream", upstream, log=tmp_path / "again.log") as again:
        assert _differences(direct_final, walk_chain(again.url, final)) == [], "a new fork, its upstream stopped"
    with serving("--store", store, log=tmp_path / "replay.log") as replay:
        plain = walk_chain(replay.url, final)
        assert _differences(direct_final, plain) == [], "a plain server over the fork's store"
