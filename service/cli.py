"""The `nearrpc` command: serve a store, build the sample store, import chain data."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from service.ingest.cli import register_import_commands
from service.settings import Settings
from service.version import INTERFACE_VERSION, SERVICE_VERSION

log = logging.getLogger("nearrpc")


def ensure_store(path: Path) -> None:
    """Create the store from the bundled sample chain when it does not exist yet."""
    if path.exists():
        return
    from service.sample import build_sample_store

    path.parent.mkdir(parents=True, exist_ok=True)
    log.info("no store at %s: building the sample chain there", path)
    build_sample_store(path)


def store_problem(path: Path) -> str | None:
    """Why the store at `path` cannot be served, or None; checked before any worker starts."""
    from service.store import StoreError, open_reader

    try:
        open_reader(path).close()
    except StoreError as exc:
        return str(exc)
    return None


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    defaults = Settings()
    settings = Settings(
        host=args.host or defaults.host,
        port=args.port if args.port is not None else defaults.port,
        store=args.store or defaults.store,
        workers=args.workers or defaults.workers,
        log_level=args.log_level or defaults.log_level,
        access_log=args.access_log or defaults.access_log,
        cors_origins=tuple(args.cors_origins.split(",")) if args.cors_origins is not None else defaults.cors_origins,
    )
    logging.basicConfig(level=settings.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    ensure_store(settings.store)
    problem = store_problem(settings.store)
    if problem is not None:
        print(f"nearrpc serve: {problem}", file=sys.stderr)
        return 2
    # workers re-create the app from the environment, so settings travel through it
    os.environ.update(settings.to_env())
    log.info("serving %s on http://%s:%d/", settings.store, settings.host, settings.port)
    uvicorn.run(
        "service.app:app_from_env",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        log_level=settings.log_level,
        access_log=settings.access_log,
    )
    return 0


def sample(args: argparse.Namespace) -> int:
    from service.sample import build_sample_store

    if args.path.exists() and not args.force:
        print(f"nearrpc: {args.path} exists (use --force to replace it)", file=sys.stderr)
        return 1
    args.path.parent.mkdir(parents=True, exist_ok=True)
    if args.force and args.path.exists():
        args.path.unlink()
    build_sample_store(args.path)
    print(f"nearrpc: wrote the sample chain to {args.path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nearrpc",
        description=f"NEAR node JSON-RPC query service (interface {INTERFACE_VERSION}), read-only, from a store.",
    )
    parser.add_argument("--version", action="version", version=f"nearrpc {SERVICE_VERSION}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser(
        "serve",
        help="serve the JSON-RPC interface (builds the sample store on first run)",
        description="Serve genesis_config, EXPERIMENTAL_protocol_config, EXPERIMENTAL_view_account, "
        "client_config and block at POST / and POST /<method>. Options fall back to NEARRPC_* variables.",
    )
    run.add_argument("--host", help="address to listen on (NEARRPC_HOST, default 127.0.0.1)")
    run.add_argument("--port", type=int, help="port to listen on (NEARRPC_PORT, default 3030)")
    run.add_argument(
        "--store", type=Path, help="SQLite store file; created from the sample chain if missing "
        "(NEARRPC_STORE, default data/nearrpc.sqlite)"
    )
    run.add_argument("--workers", type=int, help="worker processes (NEARRPC_WORKERS, default 1)")
    run.add_argument("--log-level", choices=["critical", "error", "warning", "info", "debug"],
                     help="log level (NEARRPC_LOG_LEVEL, default info)")
    run.add_argument("--access-log", action="store_true", default=False,
                     help="log every request (NEARRPC_ACCESS_LOG=1; off by default, it costs ~20%% throughput)")
    run.add_argument("--cors-origins", help='allowed CORS origins, comma-separated, "*" for any, "" for none '
                     '(NEARRPC_CORS_ORIGINS, default *)')
    run.set_defaults(func=serve)

    build = commands.add_parser("sample", help="write the deterministic sample chain into a new store",
                                description="Write the bundled sample localnet into a new SQLite store.")
    build.add_argument("path", type=Path, help="store file to create")
    build.add_argument("--force", action="store_true", help="replace an existing file")
    build.set_defaults(func=sample)

    register_import_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
