"""The fork tests' upstream: a `nearrpc serve` over the sample chain per test module, behind a
steerable proxy per test (tests/fork/upstream_proxy.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fork.upstream_proxy import UpstreamProxy, upstream_proxy
from tests.support.serve_process import Served, serving


@pytest.fixture(scope="module")
def upstream(sample_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving("--store", sample_store, log=tmp_path_factory.mktemp("upstream") / "upstream.log") as served:
        yield served


@pytest.fixture
def proxy(upstream: Served) -> Iterator[UpstreamProxy]:
    with upstream_proxy(upstream.url + "/") as steered:
        yield steered
