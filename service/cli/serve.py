"""`nearrpc serve`: check the store, then run uvicorn with the app in every worker.

The web stack is imported when the command runs, not when the parser is built, so the other
commands (imports above all) start light.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from typing import TYPE_CHECKING

from nearrpc.cli.flags import add_setting, given
from nearrpc.cli.settings import ServeSettings, load_settings
from nearrpc.store import StoreError, StoreNotFoundError, describe_location, open_store

if TYPE_CHECKING:
    import uvicorn
    from fastapi import FastAPI

log = logging.getLogger("nearrpc")

_FLAGS = ("host", "port", "store", "workers", "log_level", "access_log", "cors_origins", "answer_cache_mb")


def app_from_env() -> FastAPI:
    """Factory for uvicorn (`--factory`): every worker opens the store itself."""
    from nearrpc.http.app import build_app

    settings = ServeSettings()
    return build_app(open_store(settings.store, "serve"), settings.cors_origins, settings.answer_cache_mb << 20)


def _ready_store(settings: ServeSettings) -> str | None:
    """Build the sample chain where no store exists yet; why the store cannot be served, or None."""
    try:
        open_store(settings.store, "read").close()
        return None
    except StoreNotFoundError:
        log.info("no store at %s: building the sample chain there", describe_location(settings.store))
    except StoreError as exc:
        return str(exc)
    from nearrpc.sample import build_sample_store

    try:
        build_sample_store(settings.store)
        open_store(settings.store, "read").close()
    except StoreError as exc:
        return str(exc)
    return None


def serve(settings: ServeSettings) -> int:
    import uvicorn

    logging.basicConfig(level=settings.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    problem = _ready_store(settings)
    if problem is not None:
        print(f"nearrpc serve: {problem}", file=sys.stderr)
        return 2
    # workers re-create the app from the environment, so settings travel through it
    os.environ.update(settings.to_env())
    config = uvicorn.Config(
        "nearrpc.cli.serve:app_from_env",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        log_level=settings.log_level,
        access_log=settings.access_log,
    )
    return _run_bound(config, settings)


# --- bind first, then announce (issue 14: `--port 0` must tell which port it got) ----------
# The socket is bound here rather than inside uvicorn, so the line below names the real port
# (also for --port 0) and is only printed once connections can be made. Tools (the pytest
# plugin in nearrpc.testing) read it: it ends with ` at http://HOST:PORT/`.


def _run_bound(config: uvicorn.Config, settings: ServeSettings) -> int:
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    sock = config.bind_socket()  # exits with uvicorn's one-line error when the port is taken
    sock.listen(config.backlog)  # connections queue from now on, until the workers accept them
    port = sock.getsockname()[1]
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    print(f"nearrpc serve: serving {describe_location(settings.store)} at http://{host}:{port}/",
          file=sys.stderr, flush=True)
    if config.workers > 1:
        Multiprocess(config, sockets=[sock]).run()
        return 0
    server = uvicorn.Server(config)
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])
    return 0 if server.started else 3  # 3: uvicorn's start-up failure status


def _run(args: argparse.Namespace) -> int:
    return serve(load_settings(ServeSettings, given(args, *_FLAGS)))


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser(
        "serve",
        help="serve the JSON-RPC interface (builds the sample store on first run)",
        description="Serve genesis_config, EXPERIMENTAL_protocol_config, EXPERIMENTAL_view_account, "
        "client_config and block at POST / and POST /<method>. Options fall back to NEARRPC_* variables.",
    )
    add_setting(run, ServeSettings, "host")
    add_setting(run, ServeSettings, "port")
    add_setting(run, ServeSettings, "store", help_text="an SQLite file, created from the sample chain if missing")
    add_setting(run, ServeSettings, "workers")
    add_setting(run, ServeSettings, "log_level", choices=["critical", "error", "warning", "info", "debug"])
    add_setting(run, ServeSettings, "access_log", action="store_const", const=True)
    add_setting(run, ServeSettings, "cors_origins")
    add_setting(run, ServeSettings, "answer_cache_mb")
    run.set_defaults(func=_run)
