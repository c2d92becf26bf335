"""`nearrpc serve`: check the store, then run uvicorn with the app in every worker.

The web stack is imported when the command runs, not when the parser is built, so the other
commands (imports above all) start light.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import TYPE_CHECKING

from nearrpc.cli.flags import add_setting, given
from nearrpc.cli.settings import ServeSettings, load_settings
from nearrpc.store import StoreError, StoreNotFoundError, describe_location, is_file_location, open_store

if TYPE_CHECKING:
    from fastapi import FastAPI

log = logging.getLogger("nearrpc")

_FLAGS = (
    "host", "port", "store", "workers", "log_level", "access_log", "cors_origins", "store_pool_size", "store_timeout",
)


def app_from_env() -> FastAPI:
    """Factory for uvicorn (`--factory`): every worker opens the store itself."""
    from nearrpc.http.app import build_app

    settings = ServeSettings()
    return build_app(open_store(settings.store, "serve", settings.store_options()), settings.cors_origins)


def _ready_store(settings: ServeSettings) -> str | None:
    """Build the sample chain where no store file exists yet; why the store cannot be served, or
    None. A database server is never written unasked: a database without a store is refused."""
    try:
        open_store(settings.store, "read", settings.store_options()).close()
        return None
    except StoreNotFoundError as exc:
        if not is_file_location(settings.store):
            return str(exc)
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
    log.info("serving %s on http://%s:%d/", describe_location(settings.store), settings.host, settings.port)
    uvicorn.run(
        "nearrpc.cli.serve:app_from_env",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        log_level=settings.log_level,
        access_log=settings.access_log,
        # each response leaves in one send, so a replica that dies mid-response is retried by
        # a load balancer instead of leaving the client a head without a body
        http="nearrpc.http.single_write:SingleWriteHttpProtocol",
    )
    return 0


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
    add_setting(run, ServeSettings, "store", help_text="an SQLite file (created from the sample chain if missing) "
                "or a postgresql://user@host:port/database URL")
    add_setting(run, ServeSettings, "store_pool_size")
    add_setting(run, ServeSettings, "store_timeout")
    add_setting(run, ServeSettings, "workers")
    add_setting(run, ServeSettings, "log_level", choices=["critical", "error", "warning", "info", "debug"])
    add_setting(run, ServeSettings, "access_log", action="store_const", const=True)
    add_setting(run, ServeSettings, "cors_origins")
    run.set_defaults(func=_run)
