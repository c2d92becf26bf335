"""Shared test fixtures: repository paths, the optional ../shared reference data, the suite's own
PostgreSQL server, and one real server per backend over the sample store for the live tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from nearrpc.sample import build_sample_store
from tests.support.backends import BACKENDS, store_on
from tests.support.live_server import LiveServer, running_server
from tests.support.postgres import PostgresServer, start_server, stop_server

REPO = Path(__file__).resolve().parent.parent


def reference_dir() -> Path:
    """nearcore reference data: $NEARRPC_REFERENCE_DIR, else ../shared/reference beside the repo."""
    return Path(os.environ.get("NEARRPC_REFERENCE_DIR", REPO.parent / "shared" / "reference"))


@pytest.fixture(scope="session")
def reference() -> Path:
    path = reference_dir()
    if not (path / "nearcore-openapi.json").is_file():
        pytest.skip(f"nearcore reference data not found at {path} (set NEARRPC_REFERENCE_DIR); it exists in CI")
    return path


@pytest.fixture(scope="session")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store") / "sample.sqlite"
    build_sample_store(path)
    return path


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL 16 server on 127.0.0.1 for the whole session (one database per store)."""
    server = start_server()
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture(scope="session", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, sample_store: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    store = store_on(request.param, sample_store, request)
    with running_server(store, tmp_path_factory.mktemp("logs") / "server.log") as live:
        yield live


@pytest.fixture(scope="session")
def http(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10.0) as client:
        yield client


# Fixtures that drive a toolchain outside this Python: npm packages (near-api-js, tsc, the OpenRPC
# generator and meta-schema, the spec's linters, the mock server) and the wheel installed into a
# fresh venv. A test using one is in the `toolchain` tier, which `./check --all` runs in a pytest
# run of its own after the rest (each reports its time); the Chromium test is marked where it is
# written (tests/http/test_docs_page.py).
TOOLCHAIN_FIXTURES = frozenset({"near_api_js", "node_tools", "node_modules", "lint_tools", "prism", "installed"})


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark the toolchain tier as each test is collected, before `-m` selects by markers."""
    if TOOLCHAIN_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        item.add_marker(pytest.mark.toolchain)


def _minutes(item: pytest.Item) -> float:
    marker = item.get_closest_marker("long")
    return float(marker.args[0]) if marker is not None else 0.0


@pytest.hookimpl(trylast=True)  # after pytest has grouped the tests by their parametrized fixtures
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked `long` first, longest first, each followed by one short test.

    xdist (`--dist load --maxschedchunk 2`, pyproject.toml) hands tests out two at a time, in
    this order, to whichever worker runs low. So the long tests start at once on different
    workers, none of them waits behind another (the test queued behind it is a short one), and
    the short tests fill in around them. Collected in file order, the long tests had started
    late or two to a worker, and the run waited for them.
    """
    long = sorted((item for item in items if _minutes(item) > 0), key=_minutes, reverse=True)
    short = [item for item in items if _minutes(item) == 0]
    paired = [test for pair in zip(long, short, strict=False) for test in pair]
    items[:] = paired + long[len(paired) // 2 :] + short[len(paired) // 2 :]


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> Iterator[None]:
    """Print what tests left as ("terminal_summary", text) user properties, at the very end.

    The contract test (tests/contract) leaves its per-operation schemathesis summary there; it is
    printed whether the test passed or failed. As the outermost wrapper, it writes after pytest's
    own summaries (failures, short test summary info); only the final counts line follows.
    """
    yield
    seen: set[str] = set()
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call" or report.nodeid in seen:
                continue
            texts = [str(value) for name, value in getattr(report, "user_properties", ()) if name == "terminal_summary"]
            if not texts:
                continue
            seen.add(report.nodeid)
            terminalreporter.write_sep("=", f"summary of {report.nodeid}")
            for text in texts:
                for line in text.splitlines():
                    terminalreporter.write_line(line)
