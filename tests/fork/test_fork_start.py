"""A fork as a new user meets it (issue 43): `serve --upstream` with the default store creates
the store's folder, as plain `serve` does; a transaction it does not hold answers the same
online and replayed offline."""

from __future__ import annotations

from pathlib import Path

import pytest

from nearrpc.cli.settings import DEFAULT_STORE
from tests.fork.upstream_proxy import UpstreamProxy, rpc
from tests.store.chain_records import made_up_hash
from tests.support.serve_process import serving

pytestmark = [pytest.mark.live, pytest.mark.deep]


def test_upstream_with_the_default_store_creates_its_folder(proxy: UpstreamProxy, tmp_path: Path) -> None:
    """It was refused with "there is no folder data" where plain `serve` makes the folder."""
    with serving("--upstream", proxy.url, cwd=tmp_path, log=tmp_path / "fork.log") as fork:
        assert rpc(fork.url, "block", {"block_id": 10}).status_code == 200
    assert (tmp_path / DEFAULT_STORE).is_file()


def test_a_transaction_not_held_answers_as_online_when_replayed_offline(proxy: UpstreamProxy, tmp_path: Path) -> None:
    """Online the upstream says it does not know the transaction: TIMEOUT_ERROR (408; nearcore
    answers it when a transaction does not appear), UNKNOWN_TRANSACTION for wait_until NONE.
    With the upstream gone, a transaction never asked answered INTERNAL_ERROR (500)."""
    store = tmp_path / "f.sqlite"

    def asked(url: str, label: str, wait_until: str | None = None) -> tuple[int, str, str | None]:
        params = {"tx_hash": made_up_hash(label), "sender_account_id": "alice.localnet"}
        answer = rpc(url, "EXPERIMENTAL_tx_status", params if wait_until is None else {**params, "wait_until":
                     wait_until})  # fmt: skip
        error = answer.json()["error"]
        return answer.status_code, error["cause"]["name"], error.get("data")

    with serving("--store", store, "--upstream", proxy.url, log=tmp_path / "fork.log") as fork:
        online = [asked(fork.url, "online"), asked(fork.url, "online none", "NONE")]
        proxy.down = True  # every connection closed unanswered
        offline = [asked(fork.url, "offline"), asked(fork.url, "offline none", "NONE")]
    assert online[0] == (408, "TIMEOUT_ERROR", "Timeout") and online[1][:2] == (200, "UNKNOWN_TRANSACTION")
    assert offline[0] == online[0] and offline[1][:2] == online[1][:2], offline
    with serving("--store", store, "--upstream", proxy.url, "--upstream-retries", "0", log=tmp_path / "again.log") \
            as replay:  # fmt: skip
        assert asked(replay.url, "replayed") == online[0]
