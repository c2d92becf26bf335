"""`nearrpc store`: commands that look after a store (`check`; more join the group here).

    nearrpc store check [--store STORE] [--quick]

`check` runs the store's integrity check and prints what the store holds: exit 0 when it
passes, 1 when it finds problems (each on a line), 2 when there is no store to check.
"""

from __future__ import annotations

import argparse
import sys

from nearrpc.cli.flags import add_setting, given
from nearrpc.cli.settings import StoreSettings, load_settings
from nearrpc.store import StoreCheck, StoreError, StoreInfo, StoreNotFoundError, describe_location, open_store

_PREFIX = "nearrpc store check:"


def _heights(info: StoreInfo) -> str:
    if info.latest_height is None:
        return "no blocks"
    return f"heights {info.earliest_height}..{info.latest_height}"


def _summary(location: str, info: StoreInfo | None, check: StoreCheck) -> list[str]:
    kind = "integrity check" if check.thorough else "quick check"
    verdict = "ok" if check.ok else f"{len(check.problems)} problem(s)"
    lines = [f"{location}: {kind} {verdict}"]
    if info is not None:
        lines.append(f"chain {info.chain_id or '(no genesis config)'}, {_heights(info)}")
    counts = ", ".join(f"{count} {table.replace('_', ' ')}" for table, count in check.counts.items())
    if counts:
        lines.append(counts)
    return lines


def _check(args: argparse.Namespace) -> int:
    location = describe_location(load_settings(StoreSettings, given(args, "store")).store)
    try:
        reader = open_store(location, "read")
    except StoreNotFoundError as exc:
        print(f"{_PREFIX} {exc}", file=sys.stderr)
        return 2
    except StoreError as exc:
        print(f"{_PREFIX} {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    try:
        check = reader.check(thorough=not args.quick)
        try:
            info: StoreInfo | None = reader.info()
        except StoreError:
            info = None  # the check says why
    finally:
        reader.close()
    for line in _summary(location, info, check):
        print(line)
    for problem in check.problems:
        print(f"{_PREFIX} {' '.join(problem.split())}", file=sys.stderr)
    return 0 if check.ok else 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = commands.add_parser("store", help="look after a store (check)",
                                description="Commands that look after a store.")
    actions = group.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = actions.add_parser(
        "check", help="check a store's integrity and print what it holds",
        description="Run the store's full integrity check (every page, every index, every row counted) and print "
        "its chain, heights and row counts. Exit 0: it passed; 1: problems (listed on stderr); 2: no store.",
    )
    add_setting(check, StoreSettings, "store", help_text="the store to check")
    check.add_argument("--quick", action="store_true", help="the quick check `nearrpc serve` runs at start instead")
    check.set_defaults(func=_check)
