"""A fork's start as a new user meets it (issue 43): `serve --upstream` with the default store
creates the store's folder, as plain `serve` does."""

from __future__ import annotations

from pathlib import Path

import pytest

from nearrpc.cli.settings import DEFAULT_STORE
from tests.fork.upstream_proxy import UpstreamProxy, rpc
from tests.support.serve_process import serving

pytestmark = [pytest.mark.live, pytest.mark.deep]


def test_upstream_with_the_default_store_creates_its_folder(proxy: UpstreamProxy, tmp_path: Path) -> None:
    """It was refused with "there is no folder data" where plain `serve` makes the folder."""
    with serving("--upstream", proxy.url, cwd=tmp_path, log=tmp_path / "fork.log") as fork:
        assert rpc(fork.url, "block", {"block_id": 10}).status_code == 200
    assert (tmp_path / DEFAULT_STORE).is_file()
