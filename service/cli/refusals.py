"""How every `nearrpc` command says no: `nearrpc <command>: <what>` on one line of stderr, and
one exit code per kind of condition, the same from every command (the README's table):

- 2, the invocation or its surroundings must change: a flag or variable, a store location with
  no store, something that is not a store, a database that cannot be reached, a missing folder;
- 1, the work was tried and did not succeed: data that cannot be imported, problems a check
  found, another writer holding the store, a port in use, an endpoint that breaks the rules;
- 130, interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys
from typing import Final

from nearrpc.ingest.errors import ImportRequestError, one_line
from nearrpc.store import StoreNotFoundError, StoreSchemaError, StoreUnavailableError

USAGE: Final = 2
FAILED: Final = 1
INTERRUPTED: Final = 130

# a location that holds no store this build can use, or cannot be reached at all
_LOCATION_ERRORS: Final = (StoreNotFoundError, StoreSchemaError, StoreUnavailableError)


# the argument that names a group's sub-command (`nearrpc store ACTION`, `nearrpc import SOURCE`)
_SUB_COMMANDS: Final = {"store": "action", "import": "source"}


def command_path(args: argparse.Namespace) -> str:
    """The command as typed, e.g. "serve", "store copy", "import rpc"."""
    sub = _SUB_COMMANDS.get(args.command)
    return f"{args.command} {getattr(args, sub)}" if sub else str(args.command)


def refuse(command: str, what: str) -> None:
    """Print the refusal of `nearrpc <command>` (e.g. "store copy")."""
    print(f"nearrpc {command}: {one_line(what) or 'unknown failure'}", file=sys.stderr)


def exit_code(error: Exception) -> int:
    return USAGE if isinstance(error, (*_LOCATION_ERRORS, ImportRequestError)) else FAILED
