"""pytest plugin (entry point `pytest11`): the session fixture `nearrpc_server`.

    def test_final_block(nearrpc_server):
        answer = my_client(nearrpc_server.url).block(finality="final")
        assert answer.header.height == nearrpc_server.facts.final_height

The server starts the first time a test asks for the fixture (tests that do not ask cost
nothing) and stops at the end of the session. It serves the sample chain, or the store named
by `--nearrpc-store PATH` or the ini setting `nearrpc_store` (relative to the ini file), which may
also be a `postgresql://` URL: the server gets it through its environment, and every message
names it without its password. When a test that uses it fails, the server's log from that test's
start is attached to its report.

With `--nearrpc-upstream URL` (ini `nearrpc_upstream`) the server is a fork of that node and the
named store its cassette: what the tests ask that the store lacks is fetched and kept there, so a
later run with the store alone replays it. `--nearrpc-fork-height H` (ini `nearrpc_fork_height`)
pins the fork's head, so `final` and `optimistic` name the same blocks in every run; without an
upstream it is the head the replayed cassette must have. NEARRPC_* variables are not read: they
configure a developer's own `nearrpc serve`, not a test session.

`nearrpc_sandbox` (per test) is a sandbox to send transactions to: `nearrpc serve --sandbox` over
a sample chain of its own, started once for the session (`nearrpc_sandbox_server`), each block
final as it is made. Each test starts from the same chain: the fixture takes a `sandbox_snapshot`
before it and a `sandbox_revert` to it after, so what one test sends the next never sees.

    def test_transfer(nearrpc_sandbox):
        sender = nearrpc_sandbox.funded  # account_id, public_key, secret_key ("ed25519:..."), balance
        account = my_client(nearrpc_sandbox.url).account(sender.account_id, sender.secret_key)
        account.transfer("bob.localnet", 10**24)

`nearrpc_sandbox.facts.funded_accounts` lists every such account, richest first.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pluggy import Result

if TYPE_CHECKING:  # the server module (httpx, the store) loads only when the fixture is used
    from nearrpc.testing.server import NearrpcSandbox, NearrpcServer

_SERVER = pytest.StashKey["NearrpcServer"]()
_SANDBOX = pytest.StashKey["NearrpcServer"]()
_LOG_FROM = pytest.StashKey[dict[str, int]]()
# the session servers, each with the fixture a test uses it through (its own, or one built on it)
_SERVERS = (("nearrpc_server", _SERVER), ("nearrpc_sandbox_server", _SANDBOX))
_HELP = "nearrpc store (SQLite file or postgresql:// URL) the nearrpc_server fixture serves; default: the sample chain"
_UPSTREAM_HELP = (
    "NEAR JSON-RPC node (http:// or https:// URL) the nearrpc_server fixture forks: what the tests ask that the "
    "store lacks is fetched there and kept in the store (needs --nearrpc-store: the cassette)"
)
_HEIGHT_HELP = (
    "with an upstream: pin the fork's head at this final height, so final and optimistic stay put; without: the "
    "head the store (a cassette recorded so) must have"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("nearrpc")
    group.addoption("--nearrpc-store", dest="nearrpc_store", metavar="PATH", default=None, help=_HELP)
    group.addoption("--nearrpc-upstream", dest="nearrpc_upstream", metavar="URL", default=None, help=_UPSTREAM_HELP)
    group.addoption("--nearrpc-fork-height", dest="nearrpc_fork_height", metavar="H", default=None, help=_HEIGHT_HELP)
    parser.addini("nearrpc_store", _HELP + " (relative to the ini file)", default="")
    parser.addini("nearrpc_upstream", _UPSTREAM_HELP, default="")
    parser.addini("nearrpc_fork_height", _HEIGHT_HELP, default="")


def _setting(config: pytest.Config, name: str) -> str | None:
    """The option, else the ini setting; None when neither is given (or given empty)."""
    return str(config.getoption(name) or config.getini(name) or "") or None


def _fork(config: pytest.Config) -> tuple[str | None, int | None]:
    """The upstream and the pinned height; a pytest.UsageError (one line) for what cannot run."""
    upstream, height = _setting(config, "nearrpc_upstream"), _setting(config, "nearrpc_fork_height")
    if upstream is not None and _named_store(config) is None:
        raise pytest.UsageError(
            "nearrpc_upstream needs nearrpc_store: the store is the cassette that keeps what is fetched for "
            "later runs (--nearrpc-store PATH)"
        )
    if height is None:
        return upstream, None
    if _named_store(config) is None:
        raise pytest.UsageError(
            "nearrpc_fork_height pins a fork's head: it needs nearrpc_store (and nearrpc_upstream to record)"
        )
    if not (height.isascii() and height.isdigit()):
        raise pytest.UsageError(f"nearrpc_fork_height: {height!r} is not a block height")
    return upstream, int(height)


def pytest_configure(config: pytest.Config) -> None:
    """Refuse settings that cannot run before any test does, as pytest refuses its own."""
    _fork(config)


def _named_store(config: pytest.Config) -> Path | str | None:
    """The named store: a database URL as given, a file relative to where it was named."""
    from nearrpc.store.locations import is_file_location

    option = config.getoption("nearrpc_store")
    base = config.invocation_params.dir
    if not option:
        option = config.getini("nearrpc_store")
        base = config.inipath.parent if config.inipath is not None else config.rootpath
    if not option:
        return None
    return base / str(option) if is_file_location(str(option)) else str(option)


@pytest.fixture(scope="session")
def nearrpc_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NearrpcServer]:
    """A nearrpc server on a free 127.0.0.1 port for the session: `.url`, and `.facts`
    (heights, hashes, accounts of the chain it serves, read from its store, or for a fork asked
    of the server)."""
    from nearrpc.store import describe_location
    from nearrpc.testing.server import ServerError, running_server

    config = request.config
    folder = tmp_path_factory.mktemp("nearrpc")
    named = _named_store(config)
    upstream, fork_height = _fork(config)
    if isinstance(named, Path) and not named.is_file():
        if upstream is None:
            pytest.fail(f"nearrpc_store: no store at {named}", pytrace=False)
        named.parent.mkdir(parents=True, exist_ok=True)  # a first recording: the fork creates the store
    try:
        with running_server(
            named or folder / "sample.sqlite", folder / "server.log", sample=named is None, upstream=upstream,
            fork_height=fork_height,
        ) as server:
            if fork_height is not None and server.facts.head_height != fork_height:
                # a replay: the height names the cassette's head, and a cassette pinned elsewhere
                # answers every finality from another block than the tests expect. Recording over
                # it again keeps the blocks it holds (its head among them): only a new one takes
                # another pin.
                where, head = describe_location(named or ""), server.facts.head_height
                pytest.fail(
                    f"nearrpc_fork_height: {where} holds a head at {head}, not {fork_height}: replay it with "
                    f"nearrpc_fork_height = {head}, or delete it and record a new one with nearrpc_upstream "
                    "(recording over it keeps its blocks, and its head with them)",
                    pytrace=False,
                )
            config.stash[_SERVER] = server
            yield server
            del config.stash[_SERVER]
    except (ServerError, ValueError) as exc:
        pytest.fail(f"nearrpc_server: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def nearrpc_sandbox_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[NearrpcServer]:
    """`nearrpc serve --sandbox` on a free 127.0.0.1 port for the session, over a sample chain
    built for it (never a named store: a sandbox writes the chain it serves); `.facts` as
    `nearrpc_server`'s, with `funded_accounts`. Tests use it through `nearrpc_sandbox`, which
    reverts what each one sends."""
    from nearrpc.testing.server import ServerError, running_server

    folder = tmp_path_factory.mktemp("nearrpc-sandbox")
    try:
        with running_server(folder / "sandbox.sqlite", folder / "server.log", sample=True, sandbox=True) as server:
            if not server.facts.funded_accounts:
                pytest.fail("nearrpc_sandbox: the sandbox's chain has no account whose key is known", pytrace=False)
            request.config.stash[_SANDBOX] = server
            yield server
            del request.config.stash[_SANDBOX]
    except (ServerError, ValueError) as exc:
        pytest.fail(f"nearrpc_sandbox_server: {exc}", pytrace=False)


@pytest.fixture
def nearrpc_sandbox(nearrpc_sandbox_server: NearrpcServer) -> Iterator[NearrpcSandbox]:
    """The session's sandbox for one test: `.url`, `.facts`, `.funded` (an account and its
    secret key to sign with); what the test sends is reverted after it (`sandbox_revert` to the
    `sandbox_snapshot` taken before it)."""
    from nearrpc.testing.server import NearrpcSandbox, ServerError, sandbox_call

    url = nearrpc_sandbox_server.url
    try:
        snapshot_id = str(sandbox_call(url, "sandbox_snapshot", {})["snapshot_id"])
    except ServerError as exc:
        pytest.fail(f"nearrpc_sandbox: {exc}", pytrace=False)
    yield NearrpcSandbox(nearrpc_sandbox_server, snapshot_id)
    try:
        sandbox_call(url, "sandbox_revert", {"snapshot_id": snapshot_id})
    except ServerError as exc:
        pytest.fail(f"nearrpc_sandbox: the revert after the test failed: {exc}", pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """Remember where each server's log stood when a test that uses it started (a server started
    by this very test's setup logs from its start: offset 0)."""
    used = getattr(item, "fixturenames", ())
    item.stash[_LOG_FROM] = {}
    for fixture, key in _SERVERS:
        server = item.config.stash.get(key, None)
        if fixture in used:
            item.stash[_LOG_FROM][fixture] = server.log_size() if server is not None else 0
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Result[pytest.TestReport], None]:
    """Attach each server's log since the test started to a failing test's report."""
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    for fixture, key in _SERVERS:
        server = item.config.stash.get(key, None)
        offset = item.stash.get(_LOG_FROM, {}).get(fixture)
        if server is not None and offset is not None:
            text = server.log_since(offset) or "(nothing logged)"
            report.sections.append((f"nearrpc server log ({server.url})", text))
