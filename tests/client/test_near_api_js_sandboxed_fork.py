"""near-api-js running near-sdk-rs's cross-contract flows (sandbox_cross_contract.mjs) against a
sandboxed fork of another nearrpc (`serve --upstream URL --sandbox --fixed-clock`), recorded while
the upstream runs, then run again offline with the upstream stopped, from the same point (the
fork reverted to a snapshot taken before the first run): every answer the library got is the same,
byte for byte, hashes included (a fixed clock makes the same sends make the same chain)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nearrpc.sample_keys import full_access_label, key_pair
from nearrpc.testing.server import sandbox_call
from tests.client.test_near_api_js_cross_contract import check_cross_contract_answers, cross_contract_answers
from tests.support.serve_process import serving

pytestmark = pytest.mark.live
ALICE = "alice.localnet"


def test_cross_contract_flows_through_a_sandboxed_fork_replay_offline(
    near_api_js: Path, sample_store: Path, tmp_path: Path
) -> None:
    secret = key_pair(full_access_label(ALICE)).secret_key
    store = tmp_path / "fork.sqlite"
    recorded_in, replayed_in = tmp_path / "recorded", tmp_path / "replayed"
    recorded_in.mkdir()
    replayed_in.mkdir()
    with serving("--store", sample_store, log=tmp_path / "upstream.log") as upstream:
        fork_args = ("--store", store, "--upstream", upstream.url + "/", "--sandbox", "--fixed-clock")
        with serving(*fork_args, log=tmp_path / "fork.log") as fork:
            mark = sandbox_call(fork.url, "sandbox_snapshot", {})
            recorded = cross_contract_answers(near_api_js, fork.url, ALICE, secret, recorded_in)
            check_cross_contract_answers(fork.url, ALICE, recorded)
            sandbox_call(fork.url, "sandbox_revert", {"snapshot_id": str(mark["snapshot_id"])})
    # the upstream is stopped: what the fork fetched while recording is all it has
    with serving(*fork_args, log=tmp_path / "replay.log") as fork:
        replayed = cross_contract_answers(near_api_js, fork.url, ALICE, secret, replayed_in)
    assert replayed == recorded
