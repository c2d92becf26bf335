"""The `nearrpc` command: serve a store, write the sample chain, import chain data, manage stores."""

from __future__ import annotations

import argparse
from typing import NoReturn, cast

from nearrpc.cli import conform, imports, sample, serve, store
from nearrpc.cli.proctitle import hide_passwords
from nearrpc.cli.refusals import USAGE, command_path, refuse
from nearrpc.cli.settings import SettingsError
from nearrpc.urls import scrub_urls
from nearrpc.version import INTERFACE_VERSION, SERVICE_VERSION


class OneLineErrors(argparse.ArgumentParser):
    """A parser whose refusals are one line, as the settings' are, instead of the usage block
    and the error; sub-command parsers are of the same class."""

    def error(self, message: str) -> NoReturn:
        # argparse quotes what was typed: a URL there may hold a password or an API key
        self.exit(2, f"{self.prog}: {scrub_urls(message)} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrors(
        prog="nearrpc",
        description=f"NEAR node JSON-RPC query service (interface {INTERFACE_VERSION}), read-only, from a store.",
    )
    parser.add_argument("--version", action="version", version=f"nearrpc {SERVICE_VERSION}")
    # the commands' parsers (and theirs) are OneLineErrors too; they only need to be parsers
    commands = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", required=True, metavar="COMMAND"),
    )
    serve.register(commands)
    sample.register(commands)
    imports.register(commands)
    store.register(commands)
    conform.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the process's own command line: what `ps` shows
        hide_passwords()
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # said by the command they were given to, as its other refusals are
        path = command_path(args)
        parser.exit(USAGE, f"nearrpc {path}: unrecognized arguments: {scrub_urls(' '.join(extra))} "
                           f"(see nearrpc {path} --help)\n")  # fmt: skip
    try:
        code: int = args.func(args)
    except SettingsError as exc:
        refuse(command_path(args), str(exc))
        return USAGE
    return code


if __name__ == "__main__":
    raise SystemExit(main())
