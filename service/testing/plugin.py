"""pytest plugin (entry point `pytest11`): the session fixture `nearrpc_server`.

    def test_final_block(nearrpc_server):
        answer = my_client(nearrpc_server.url).block(finality="final")
        assert answer.header.height == nearrpc_server.facts.final_height

The server starts the first time a test asks for the fixture (tests that do not ask cost
nothing) and stops at the end of the session. It serves the sample chain, or the store named
by `--nearrpc-store PATH` or the ini setting `nearrpc_store` (relative to the ini file). When a
test that uses it fails, the server's log from that test's start is attached to its report.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pluggy import Result

if TYPE_CHECKING:  # the server module (httpx, the store) loads only when the fixture is used
    from nearrpc.testing.server import NearrpcServer

_SERVER = pytest.StashKey["NearrpcServer"]()
_LOG_FROM = pytest.StashKey[int]()
_FIXTURE = "nearrpc_server"
_HELP = "nearrpc store (SQLite file) the nearrpc_server fixture serves; default: the sample chain"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("nearrpc")
    group.addoption("--nearrpc-store", dest="nearrpc_store", metavar="PATH", default=None, help=_HELP)
    parser.addini("nearrpc_store", _HELP + " (relative to the ini file)", default="")


def _named_store(config: pytest.Config) -> Path | None:
    option = config.getoption("nearrpc_store")
    if option:
        return config.invocation_params.dir / str(option)
    setting = str(config.getini("nearrpc_store"))
    if setting:
        base = config.inipath.parent if config.inipath is not None else config.rootpath
        return base / setting
    return None


@pytest.fixture(scope="session")
def nearrpc_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NearrpcServer]:
    """A nearrpc server on a free 127.0.0.1 port for the session: `.url`, and `.facts`
    (heights, hashes, accounts of the chain it serves, read from its store)."""
    from nearrpc.testing.server import ServerError, running_server

    config = request.config
    folder = tmp_path_factory.mktemp("nearrpc")
    named = _named_store(config)
    if named is not None and not named.is_file():
        pytest.fail(f"nearrpc_store: no store at {named}", pytrace=False)
    try:
        with running_server(named or folder / "sample.sqlite", folder / "server.log", sample=named is None) as server:
            config.stash[_SERVER] = server
            yield server
            del config.stash[_SERVER]
    except (ServerError, ValueError) as exc:
        pytest.fail(f"nearrpc_server: {exc}", pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """Remember where the server's log stood when a test that uses it started."""
    if _FIXTURE in getattr(item, "fixturenames", ()):
        server = item.config.stash.get(_SERVER, None)
        item.stash[_LOG_FROM] = server.log_size() if server is not None else 0
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Result[pytest.TestReport], None]:
    """Attach the server's log since the test started to a failing test's report."""
    outcome = yield
    report = outcome.get_result()
    server = item.config.stash.get(_SERVER, None)
    if report.failed and server is not None and _LOG_FROM in item.stash:
        text = server.log_since(item.stash[_LOG_FROM]) or "(nothing logged)"
        report.sections.append((f"nearrpc server log ({server.url})", text))
