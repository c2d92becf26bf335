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
from collections.abc import Mapping
from typing import Any, Final

from nearrpc.ingest.errors import ImportRequestError, NodeUnreachableError, NotAnRpcEndpointError, one_line
from nearrpc.store import StoreLocationError, StoreNotFoundError, StoreSchemaError, StoreUnavailableError

USAGE: Final = 2
FAILED: Final = 1
INTERRUPTED: Final = 130

# a location that holds no store this build can use, or cannot be reached at all
_LOCATION_ERRORS: Final = (StoreNotFoundError, StoreSchemaError, StoreUnavailableError, StoreLocationError)
# what the command line must change, though the work began: a node that cannot be reached, or
# a URL that answers as no JSON-RPC node does
_REQUEST_ERRORS: Final = (ImportRequestError, NodeUnreachableError, NotAnRpcEndpointError)


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
    return USAGE if isinstance(error, (*_LOCATION_ERRORS, *_REQUEST_ERRORS)) else FAILED


# pydantic's error types, said in our words; {name} is filled from the error's context
_VALUE_PROBLEMS: Final = {
    "int_parsing": "expected a whole number",
    "int_from_float": "expected a whole number",
    "int_type": "expected a whole number",
    "float_parsing": "expected a number",
    "float_type": "expected a number",
    "finite_number": "expected a finite number",
    "bool_parsing": "expected on or off (1, true, yes, on; 0, false, no, off)",
    "bool_type": "expected on or off (1, true, yes, on; 0, false, no, off)",
    "literal_error": "expected {expected}",
    "greater_than": "must be above {gt}",
    "greater_than_equal": "must be {ge} or more",
    "less_than": "must be below {lt}",
    "less_than_equal": "must be {le} or less",
    "string_too_short": "must not be empty",
    "value_error": "{error}",
}


def _shown(value: object) -> str:
    """A bound as the operator wrote it: 300, not 300.0."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def value_problem(error: Mapping[str, Any]) -> str:
    """What is wrong with a setting's value, from one of pydantic's error details, in the
    project's words rather than pydantic's ("Input should be ...", "Value error, ...")."""
    template = _VALUE_PROBLEMS.get(str(error.get("type")))
    context = error.get("ctx") or {}
    if template is not None:
        try:
            return template.format(**{key: _shown(value) for key, value in context.items()})
        except (KeyError, IndexError):
            pass
    message = str(error.get("msg", "not a usable value"))
    return "expected " + message.removeprefix("Input should be ") if message.startswith("Input should be ") else message
