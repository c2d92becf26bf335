"""`nearrpc serve`: check the store, bind the port, say what is served where, then run uvicorn.

Order matters to an operator: every refusal (no store, a store that fails its quick check, a
port in use) is one line on stderr and a non-zero exit before anything says "started"; the
start-up line comes once the port is bound, and names the real port (`--port 0`: any free one).
The socket is bound here and handed to uvicorn, in one process or to every worker.

The web stack is imported when the command runs, not when the parser is built, so the other
commands (imports above all) start light.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

from nearrpc.cli.flags import add_setting, given
from nearrpc.cli.logs import STARTUP_LOGGER, configure_logging, log_config
from nearrpc.cli.settings import DEFAULT_STORE, ServeSettings, load_settings
from nearrpc.store import (
    CommitListener,
    StoreError,
    StoreInfo,
    StoreNotFoundError,
    describe_location,
    is_file_location,
    open_store,
)

if TYPE_CHECKING:
    from fastapi import FastAPI

    from nearrpc.fork.reader import ForkReader
    from nearrpc.fork.upstream import UpstreamSettings
    from nearrpc.sandbox.chain import SandboxChainWriter
    from nearrpc.sandbox.runtime.model import Runtime
    from nearrpc.store import ServingReader

log = logging.getLogger(STARTUP_LOGGER)

_FLAGS = (
    "host",
    "port",
    "store",
    "workers",
    "log_level",
    "log_format",
    "access_log",
    "metrics",
    "cors_origins",
    "answer_cache_mb",
    "compiled_cache",
    "compiled_cache_mb",
    "store_pool_size",
    "store_timeout",
    "store_close_timeout",
    "store_check",
    "upstream",
    "view_call_timeout",
    "max_slow_view_calls",
    "view_memory_mb",
    "module_cache_mb",
    "record_mode",
    "fork_height",
    "verify_calls",
    "upstream_concurrency",
    "upstream_rate",
    "upstream_timeout",
    "upstream_retries",
    "miss_timeout",
    "fork_fetches_per_call",
    "upstream_max_answer_mb",
    "keep_alive_timeout",
    "request_timeout",
    "max_connections",
    "sandbox",
    "block_time",
    "fixed_clock",
    "max_connections_per_address",
)
# prometheus_client's multiprocess mode reads its folder from this variable in every worker
_METRICS_FOLDER_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"
_PREFIX: Final = "nearrpc serve:"
# above this size, say why the start takes a while (a 6.4 GB store took 132 s to check here)
_SLOW_CHECK_BYTES: Final = 1 << 30
# descriptors a worker keeps beside its connections: the store, its pool, logs, the listener
_RESERVED_FILES: Final = 256


class Refused(Exception):
    """Why the server does not start, in one line; exit status 2 for what the operator gave
    (store, settings), 1 for what the machine refused (the port)."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def listen_address(host: str, port: int) -> str:
    """host:port as nearcore's rpc_addr and URLs write it (IPv6 in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


# The settings `serve` runs with (the port there is the bound one). They reach a worker through
# the pipe multiprocessing hands it its arguments on (`use_settings`), never through the
# environment: a store's password and an upstream's API key would be readable there, in
# /proc/<pid>/environ, for the worker's life.
_settings: ServeSettings | None = None
# the variables that may carry a credential, taken out of the environment workers inherit
_SECRET_VARIABLES: Final = ("NEARRPC_STORE", "NEARRPC_UPSTREAM")


def use_settings(settings: ServeSettings) -> None:
    """Run this process's app with `settings` (in a worker, before uvicorn builds the app)."""
    global _settings
    _settings = settings


def app_from_env() -> FastAPI:
    """Factory for uvicorn: every worker opens the store itself, with the settings `serve` gave it
    (`use_settings`; the environment's when none were given)."""
    from nearrpc.http.app import build_app
    from nearrpc.http.connections import ConnectionLimits, address_share, configure

    settings = _settings if _settings is not None else ServeSettings()
    # `serve` resolves both caps before it starts workers; the defaults are for any other start
    cap = settings.max_connections or ConnectionLimits().max_connections
    share = min(settings.max_connections_per_address or address_share(cap), cap)
    configure(ConnectionLimits(settings.keep_alive_timeout, settings.request_timeout, cap, max_per_address=share))
    reader = open_store(settings.store, "serve", settings.store_options())
    _use_compiled_cache(settings)
    _use_view_call_timeout(settings)
    fork = _fork_reader(settings, reader) if settings.forks() else None
    call_upstream = call_verifier = None
    if fork is not None and not fork.sandboxed:  # the upstream knows no block of the sandbox's
        from nearrpc.cli.fork_calls import ForkCallUpstream
        from nearrpc.fork.verify import UpstreamVerifier

        call_upstream = ForkCallUpstream(fork)  # the changes methods' upstream too
        call_verifier = UpstreamVerifier(fork) if settings.verify_calls else None
    return build_app(
        reader if fork is None else fork,
        settings.cors_origins,
        metrics=settings.metrics,
        rpc_addr=listen_address(settings.host, settings.port),
        answer_cache_bytes=settings.answer_cache_mb << 20,
        fork=fork,
        close_timeout=settings.store_close_timeout,
        call_upstream=call_upstream,
        call_verifier=call_verifier,
        changes_upstream=call_upstream,
        sandbox=_sandbox_chain(settings, reader, fork) if settings.sandbox else None,
    )


# The sandbox's runtime (nearrpc.sandbox.runtime's `Runtime`): a class built with no arguments.
SANDBOX_RUNTIME: Final = ("nearrpc.sandbox.runtime.apply", "SandboxRuntime")


def sandbox_runtime() -> Runtime:
    """The runtime the sandbox executes transactions with; ModuleNotFoundError or AttributeError
    when this build lacks it."""
    import importlib

    module, name = SANDBOX_RUNTIME
    runtime: Runtime = getattr(importlib.import_module(module), name)()
    return runtime


def _sandbox_chain(settings: ServeSettings, reader: ServingReader, fork: ForkReader | None) -> SandboxChainWriter:
    """The worker's chain writer (`serve` checked the store can be written), which tells the
    worker's reader of each commit, so every read sees it at once (on either backend). Over a
    fork, its runtime reads what the store lacks at the pinned head through the fork."""
    from nearrpc.fork.pinned import ForkPinnedState
    from nearrpc.sandbox.chain import SandboxChainWriter

    on_commit = reader.committed if isinstance(reader, CommitListener) else None
    # a read waits for the fork's misses it needs (each within --miss-timeout), never for longer
    pinned = None if fork is None else ForkPinnedState(
        fork, fetches_per_view=settings.fork_fetches_per_call, timeout=3 * settings.miss_timeout
    )  # fmt: skip
    # a fixed clock reads 0: each block then takes its parent's timestamp plus the least step
    clock = (lambda: 0) if settings.fixed_clock else time.time_ns
    return SandboxChainWriter(settings.store, sandbox_runtime(), block_time=settings.block_time, clock=clock,
                              options=settings.store_options(), on_commit=on_commit, pinned=pinned)  # fmt: skip


def _fresh_sandbox_store(settings: ServeSettings, held: contextlib.ExitStack) -> ServeSettings:
    """A sandbox given no store runs on a fresh sample chain of its own, in a temporary folder
    removed when it stops: every start is the same chain, and the default store is never written."""
    if not settings.sandbox or "store" in settings.model_fields_set:
        return settings
    from nearrpc.sample import build_sample_store

    folder = held.enter_context(tempfile.TemporaryDirectory(prefix="nearrpc-sandbox-"))
    store = str(Path(folder) / "sandbox.sqlite")
    if settings.upstream is not None:  # a sandboxed fork: the store is made from the upstream
        return settings.model_copy(update={"store": store})
    try:
        build_sample_store(store)
    except StoreError as exc:
        raise Refused(f"cannot build the sandbox's sample chain in {folder}: {exc}") from None
    return settings.model_copy(update={"store": store})


def _sandbox_flags(settings: ServeSettings) -> None:
    """A sandbox's flags, refused before anything else is done (a fork's upstream is not asked)."""
    if not settings.sandbox:
        return
    if settings.verify_calls:
        raise Refused("--verify-calls asks the upstream what the fork's blocks hold: a sandboxed fork's blocks "
                      "above its pin are its own")  # fmt: skip
    if settings.upstream is not None and settings.record_mode == "none":
        raise Refused("--record-mode none never writes the store, where a sandbox makes its blocks: a sandboxed fork "
                      "replays offline with the same command, its upstream stopped")  # fmt: skip
    if settings.workers != 1:
        raise Refused("--sandbox makes blocks in one process: it runs with --workers 1 (a send is not idempotent)")


def _prepare_sandbox(settings: ServeSettings) -> str | None:
    """Before a sandbox serves: its runtime and its store checked (what to add to the start-up
    line); None when the server is read-only."""
    if not settings.sandbox:
        return None
    from nearrpc.fork.marks import SANDBOX_PIN

    try:
        sandbox_runtime()
    except (ImportError, AttributeError) as missing:
        raise Refused(f"this build has no sandbox runtime ({missing})", exit_code=1) from None
    location = describe_location(settings.store)
    try:
        with open_store(settings.store, "write", settings.store_options()) as writer:  # refused now, not in the worker
            reader = writer.reader()
            if reader.genesis_config_json() is None or reader.head() is None:
                raise Refused(f"--sandbox makes blocks on a chain: {location} holds no genesis config or no block")
            pin = reader.kept_answer(SANDBOX_PIN) if not settings.forks() else None
    except StoreError as exc:
        raise Refused(f"--sandbox cannot write {location}: {exc}") from None
    if pin is not None:
        log.warning("%s holds a sandboxed fork pinned at %s: without --upstream, what it never fetched from the "
                    "upstream reads as absent (start it with --upstream URL: an upstream that is stopped leaves what "
                    "was kept served)", location, pin.decode())  # fmt: skip
    mode = "automine" if settings.block_time is None else f"a block every {settings.block_time:g} s"
    return f"a sandbox: {mode}"


def _use_view_call_timeout(settings: ServeSettings) -> None:
    """This process's view calls stopped at the settings' deadline, its slow lane, memory budget
    and module cache bounded as they say."""
    from nearrpc.contracts import use_execution_limits
    from nearrpc.methods.view_calls import use_fetches_per_call, use_max_slow_calls, use_view_call_timeout

    use_view_call_timeout(settings.view_call_timeout)
    use_max_slow_calls(settings.max_slow_view_calls)
    use_fetches_per_call(settings.fork_fetches_per_call)
    use_execution_limits(settings.module_cache_mb << 20, settings.view_memory_mb << 20)


def _use_compiled_cache(settings: ServeSettings) -> None:
    """This process's compiled contracts kept in the settings' folder (`serve` has checked it, and
    turned it off where it cannot be used)."""
    from nearrpc.contracts import open_compiled_cache, use_compiled_cache

    folder = settings.compiled_cache_folder()
    use_compiled_cache(None if folder is None else open_compiled_cache(folder, settings.compiled_cache_mb << 20))


def _checked_compiled_cache(settings: ServeSettings) -> ServeSettings:
    """The settings with the compiled-contract folder made ready (or turned off: said once here,
    for every worker)."""
    from nearrpc.contracts import CompiledCache
    from nearrpc.contracts.compiled_cache import CacheUnavailable

    folder = settings.compiled_cache_folder()
    if folder is None:
        if settings.compiled_cache is None:
            log.info("compiled contracts are kept in memory only: the store is on a database server "
                     "(--compiled-cache DIR keeps them on disk)")  # fmt: skip
        return settings
    try:
        CompiledCache(folder, settings.compiled_cache_mb << 20)
    except CacheUnavailable as why:
        log.info("compiled contracts are kept in memory only: %s", why)
        return settings.model_copy(update={"compiled_cache": "off"})
    return settings.model_copy(update={"compiled_cache": str(folder)})


def _upstream_settings(settings: ServeSettings) -> UpstreamSettings:
    from nearrpc.fork.upstream import UpstreamSettings
    from nearrpc.ingest.rpc_client import RetryPolicy

    assert settings.upstream is not None
    policy = RetryPolicy(retries=settings.upstream_retries, backoff=0.2, timeout=settings.upstream_timeout,
                         max_backoff=2.0)  # fmt: skip
    return UpstreamSettings(settings.upstream, settings.upstream_concurrency, settings.upstream_rate, policy,
                            max_answer_bytes=settings.upstream_max_answer_mb << 20)  # fmt: skip


def _fork_reader(settings: ServeSettings, reader: ServingReader) -> ForkReader:
    """The worker's reader through the upstream (its writer opens the store for writing too)."""
    from nearrpc.fork.reader import ForkReader
    from nearrpc.fork.upstream import Upstream
    from nearrpc.fork.writer import ForkWriter
    from nearrpc.http.metrics import observe_fork_lookup, observe_upstream

    metrics = settings.metrics
    upstream = Upstream(_upstream_settings(settings), observe_upstream if metrics else None)
    return ForkReader(
        reader,
        upstream,
        ForkWriter(settings.store, settings.store_options()),
        fork_height=settings.fork_height,
        miss_timeout=settings.miss_timeout,
        observe=observe_fork_lookup if metrics else None,
        sandboxed=settings.sandbox,
    )


def _prepare_fork(settings: ServeSettings) -> tuple[str | None, ServeSettings]:
    """Before a fork serves: its store created from the upstream or checked against it (what to
    add to the start-up line; None when the server does not fork), and the settings with a
    sandboxed fork's pin."""
    if settings.fork_height is not None and not settings.forks():
        raise Refused("--fork-height pins a fork's head: it needs --upstream (and --record-mode new)")
    if settings.record_mode == "none" and settings.upstream is None:
        raise Refused("--record-mode none says what a fork records: it needs --upstream (without one nothing "
                      "is recorded)")  # fmt: skip
    if settings.verify_calls and not settings.forks():
        raise Refused("--verify-calls compares view calls with a fork's upstream: it needs --upstream (and "
                      "--record-mode new)")  # fmt: skip
    if not settings.forks():
        return None, settings
    from nearrpc.fork.start import ForkRefused, ForkStart, prepare_store

    if settings.store == DEFAULT_STORE:  # as without --upstream: the documented default's folder is ours to make
        _make_folder_of(DEFAULT_STORE)

    start = ForkStart(_upstream_settings(settings), settings.store, settings.store_options(), settings.fork_height,
                      sandbox=settings.sandbox)  # fmt: skip
    try:
        line, pin = prepare_store(start)
    except ForkRefused as refused:
        raise Refused(str(refused)) from None
    return line, settings.model_copy(update={"fork_height": pin})


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _make_folder_of(store: str) -> None:
    try:
        Path(store).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise Refused(f"cannot create store {store}: {exc.strerror or exc}") from None


def _checked_store(settings: ServeSettings, build_sample: bool) -> StoreInfo:
    """The summary of a store that passed its quick check; builds the sample chain where asked
    (or at the default path) when no store is there."""
    location = describe_location(settings.store)
    options = settings.store_options()
    try:
        reader = open_store(settings.store, "read", options)
    except StoreNotFoundError as missing:
        if not is_file_location(settings.store):
            raise Refused(str(missing)) from None  # a database server is never filled unasked
        if not build_sample and settings.store != DEFAULT_STORE:
            raise Refused(
                f"no store at {location} (create one with `nearrpc sample {location}` or `nearrpc import`, "
                "or add --sample to build the sample chain there)"
            ) from None
        log.info("no store at %s: building the sample chain there", location)
        from nearrpc.sample import build_sample_store

        try:
            if settings.store == DEFAULT_STORE:  # the documented default: its folder is ours to make
                _make_folder_of(DEFAULT_STORE)
            build_sample_store(settings.store)
            reader = open_store(settings.store, "read", options)
        except StoreError as exc:
            raise Refused(str(exc)) from None
    except StoreError as exc:
        raise Refused(str(exc)) from None
    try:
        if settings.store_check == "off":
            log.warning("store check off: %s is served unchecked (`nearrpc store check` checks it)", location)
            return reader.info()
        size = _file_size(settings.store)
        if size >= _SLOW_CHECK_BYTES:
            log.info("quick check of %s (%.1f GB) before serving; --store-check off skips it", location, size / 1e9)
        check = reader.check(thorough=False)
        if not check.ok:
            more = f" (and {len(check.problems) - 1} more)" if len(check.problems) > 1 else ""
            raise Refused(
                f"{location} fails the store's quick check: {check.problems[0]}{more}; "
                f"`nearrpc store check --store {location}` checks it in full"
            )
        return reader.info()
    except StoreError as exc:
        raise Refused(str(exc)) from None
    finally:
        reader.close()


def _file_size(store: str) -> int:
    """Bytes of an SQLite store file (0 for a database server, whose check reads no pages)."""
    if not is_file_location(store):
        return 0
    with contextlib.suppress(OSError):
        return os.stat(store).st_size
    return 0


def _cannot_listen(host: str, port: int, error: OSError) -> Refused:
    return Refused(f"cannot listen on {listen_address(host, port)}: {error.strerror or error}", exit_code=1)


def _port_is_free(host: str, port: int) -> None:
    """Refuse a port in use before the store is checked (minutes for a big one) or the sample
    chain is built; the port is bound for good once the store passed."""
    from nearrpc.cli.workers import address_family, claim_port

    if port == 0:
        return
    try:
        claim_port(address_family(host), host, port)
    except OSError as exc:
        raise _cannot_listen(host, port, exc) from None


def _connection_cap(requested: int | None) -> int:
    """Connections per worker: as requested, or as many as the open-file limit allows with
    room for the worker's other files; refused when the limit cannot hold them."""
    import resource

    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    room = None if soft == resource.RLIM_INFINITY else soft - _RESERVED_FILES
    if room is not None and room < 1:
        raise Refused(f"the open-file limit ({soft}) leaves no room for connections; raise it (ulimit -n)")
    if requested is None:
        return room if room is not None else 65_536
    if room is not None and requested > room:
        raise Refused(
            f"--max-connections {requested} is more than the open-file limit ({soft}) allows with "
            f"{_RESERVED_FILES} files kept for the store and logs: at most {room}, or raise the limit "
            "(ulimit -n)"
        )
    return requested


def _address_share(requested: int | None, cap: int, cap_given: bool) -> int:
    """Connections per worker from one peer address: as requested, or half the cap; refused above the cap."""
    from nearrpc.http.connections import address_share

    if requested is None:
        return address_share(cap)
    if requested > cap:
        given = f"--max-connections {cap}" if cap_given else f"the connection cap ({cap}, from the open-file limit)"
        raise Refused(f"--max-connections-per-address {requested} is more than {given}: at most {cap}")
    return requested


def _listen(host: str, port: int, workers: int) -> list[socket.socket]:
    """A listening socket on host:port per worker (one port, SO_REUSEPORT); uvicorn's backlog."""
    from nearrpc.cli.workers import reuse_port_sockets

    try:
        return reuse_port_sockets(host, port, workers, backlog=2048)
    except OSError as exc:
        raise _cannot_listen(host, port, exc) from None


def _describe(info: StoreInfo) -> str:
    chain = f"chain {info.chain_id}" if info.chain_id is not None else "no genesis config"
    head = f"head {info.latest_height}" if info.latest_height is not None else "no blocks"
    return f"{chain}, {head}"


def _run_uvicorn(settings: ServeSettings, sockets: list[socket.socket]) -> int:
    import uvicorn

    from nearrpc.cli.workers import StoppableServer, WorkerPool

    config = uvicorn.Config(
        "nearrpc.cli.serve:app_from_env",
        factory=True,
        workers=settings.workers,
        log_config=log_config(settings.log_level, settings.log_format),
        log_level=settings.log_level,
        access_log=settings.access_log,
        # each response leaves in one send, so a replica that dies mid-response is retried by
        # a load balancer instead of leaving the client a head without a body
        # (and every connection ends: nearrpc.http.connections, configured by app_from_env)
        http="nearrpc.http.connections:GuardedHttpProtocol",
        timeout_keep_alive=math.ceil(settings.keep_alive_timeout),  # uvicorn's own, after an answer
    )
    if settings.workers == 1:
        os.environ.pop(_METRICS_FOLDER_ENV, None)  # one process counts in memory
        server = StoppableServer(config)
        server.run(sockets=sockets)
        return 0 if server.started else 1
    # a fresh folder per run: counts from an earlier run must not add up with this one's
    with tempfile.TemporaryDirectory(prefix="nearrpc-metrics-") as folder:
        os.environ[_METRICS_FOLDER_ENV] = folder
        return WorkerPool(config, sockets, prepare=(use_settings, settings)).run()


def serve(settings: ServeSettings, *, build_sample: bool = False) -> int:
    configure_logging(settings.log_level, settings.log_format)
    with contextlib.ExitStack() as sandbox_folder:
        return _serve(settings, build_sample, sandbox_folder)


def _serve(settings: ServeSettings, build_sample: bool, sandbox_folder: contextlib.ExitStack) -> int:
    try:
        max_connections = _connection_cap(settings.max_connections)
        per_address = _address_share(
            settings.max_connections_per_address, max_connections, settings.max_connections is not None
        )
        _port_is_free(settings.host, settings.port)
        _sandbox_flags(settings)
        settings = _fresh_sandbox_store(settings, sandbox_folder)
        fork, settings = _prepare_fork(settings)
        info = _checked_store(settings, build_sample)
        sandbox = _prepare_sandbox(settings)
        settings = _checked_compiled_cache(settings)
        sockets = _listen(settings.host, settings.port, settings.workers)
    except Refused as refused:
        print(f"{_PREFIX} {_one_line(str(refused))}", file=sys.stderr)
        return refused.exit_code
    with contextlib.ExitStack() as held:
        for sock in sockets:
            held.enter_context(sock)
        bound = settings.model_copy(update={
            "port": sockets[0].getsockname()[1], "max_connections": max_connections,
            "max_connections_per_address": per_address,
        })  # fmt: skip
        use_settings(bound)  # and each worker gets them from the supervisor (`WorkerPool`)
        for name in _SECRET_VARIABLES:  # read into the settings already
            os.environ.pop(name, None)
        address = listen_address(bound.host, bound.port)
        through = "" if fork is None else f"; a fork of {fork}"
        through += "" if sandbox is None else f"; {sandbox}"
        log.info("serving %s (%s%s) at http://%s/", describe_location(bound.store), _describe(info), through, address)
        try:
            return _run_uvicorn(bound, sockets)
        except KeyboardInterrupt:
            return 0


def served_methods() -> tuple[list[str], list[str]]:
    """The methods the server answers, from the dispatch table: those of the interface, and
    those beyond it (the spec tags them `extension`)."""
    from nearrpc.generated.methods import METHODS
    from nearrpc.spec import spec_document

    paths = spec_document()["paths"]
    beyond = [name for name, method in METHODS.items() if "extension" in paths[method.path]["post"].get("tags", ())]
    return [name for name in METHODS if name not in beyond], beyond


def describe_serve() -> str:
    from nearrpc.version import INTERFACE_VERSION

    interface, beyond = served_methods()
    return (
        f"Serve {', '.join(interface)} (interface {INTERFACE_VERSION}) and, beyond it, {', '.join(beyond)} "
        "at POST / and POST /<method>, with /health, /status, /metrics and the interface at /docs and "
        "/openapi.json. Options fall back to NEARRPC_* variables."
    )


class _HelpWithMethods(argparse.Action):
    """`serve --help`: the description names every method the dispatch table holds, read from
    the spec when help is asked for (not each time the command line is parsed)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, default=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, _namespace: argparse.Namespace, _values: object,
                 _option_string: str | None = None) -> None:  # fmt: skip
        parser.description = describe_serve()
        parser.print_help()
        parser.exit()


def _run(args: argparse.Namespace) -> int:
    return serve(load_settings(ServeSettings, given(args, *_FLAGS)), build_sample=args.sample)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser(
        "serve",
        help="serve the JSON-RPC interface (builds the sample store at the default path on first run)",
        add_help=False,
    )
    run.add_argument("-h", "--help", action=_HelpWithMethods, help="show this help message and exit")
    add_setting(run, ServeSettings, "host")
    add_setting(run, ServeSettings, "port")
    add_setting(
        run,
        ServeSettings,
        "store",
        help_text="an SQLite file (the sample chain is built at "
        f"{DEFAULT_STORE} when missing there, elsewhere only with --sample) or a "
        "postgresql://user@host:port/database URL",
    )
    run.add_argument(
        "--sample",
        action="store_true",
        help="build the sample chain at the store path if no store is there (an SQLite file)",
    )
    add_setting(run, ServeSettings, "store_pool_size")
    add_setting(run, ServeSettings, "store_timeout")
    add_setting(run, ServeSettings, "store_close_timeout")
    add_setting(run, ServeSettings, "view_call_timeout")
    add_setting(run, ServeSettings, "max_slow_view_calls")
    add_setting(run, ServeSettings, "view_memory_mb")
    add_setting(run, ServeSettings, "module_cache_mb")
    add_setting(run, ServeSettings, "workers")
    add_setting(run, ServeSettings, "keep_alive_timeout")
    add_setting(run, ServeSettings, "request_timeout")
    add_setting(run, ServeSettings, "max_connections")
    add_setting(run, ServeSettings, "max_connections_per_address")
    add_setting(run, ServeSettings, "log_level", choices=["critical", "error", "warning", "info", "debug"])
    add_setting(run, ServeSettings, "log_format", choices=["text", "json"])
    add_setting(run, ServeSettings, "access_log", action="store_const", const=True)
    add_setting(
        run,
        ServeSettings,
        "metrics",
        flag="--no-metrics",
        action="store_const",
        const=False,
        help_text="do not count requests nor serve GET /metrics (metrics are on by default)",
    )
    add_setting(run, ServeSettings, "cors_origins")
    add_setting(run, ServeSettings, "answer_cache_mb")
    add_setting(run, ServeSettings, "compiled_cache", metavar="DIR")
    add_setting(run, ServeSettings, "compiled_cache_mb")
    add_setting(run, ServeSettings, "store_check", choices=["quick", "off"])
    fork = run.add_argument_group(
        "fork of a live node",
        "Serve what the store lacks from an upstream node, and keep "
        "it: the next identical request is answered from the store alone.",
    )
    add_setting(fork, ServeSettings, "upstream")
    add_setting(fork, ServeSettings, "record_mode", choices=["new", "none"])
    add_setting(fork, ServeSettings, "fork_height")
    add_setting(fork, ServeSettings, "verify_calls", action="store_const", const=True)
    add_setting(fork, ServeSettings, "upstream_concurrency")
    add_setting(fork, ServeSettings, "upstream_rate")
    add_setting(fork, ServeSettings, "upstream_timeout")
    add_setting(fork, ServeSettings, "upstream_retries")
    add_setting(fork, ServeSettings, "miss_timeout")
    add_setting(fork, ServeSettings, "fork_fetches_per_call")
    add_setting(fork, ServeSettings, "upstream_max_answer_mb")
    sandbox = run.add_argument_group(
        "sandbox",
        "Execute transactions and make blocks on the store, as nearcore's sandbox does, in one process that "
        "alone writes it, an SQLite file or a PostgreSQL database (without --store: a fresh sample chain in a "
        "temporary folder, the same at every start, removed at the end). Automine: a block for each batch of "
        "transactions as it arrives, then the blocks that execute its receipts and the two that make it final (one "
        "producer's doomslug finality), so a send returns a FINAL outcome. Whatever the store, every read method "
        "answers the new state as soon as a send, patch, fast-forward or revert returns. Snapshot and revert return "
        "the whole chain to a mark. Not for replicas behind a balancer: other processes on the same database see a "
        "block up to 200 ms late. With --upstream, a sandboxed fork: transactions execute over the upstream's state "
        "at the pinned head (--fork-height, by default its final block), fetched once and kept; nothing is sent "
        "to the upstream. Without --sandbox the server is read-only.",
    )
    add_setting(sandbox, ServeSettings, "sandbox", action="store_const", const=True)
    add_setting(sandbox, ServeSettings, "block_time", metavar="SECONDS")
    add_setting(sandbox, ServeSettings, "fixed_clock", action="store_const", const=True)
    run.set_defaults(func=_run)
