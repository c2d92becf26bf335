"""`nearrpc store`: commands that look after a store as a whole: init, copy, check, upgrade.

    nearrpc store init LOCATION
    nearrpc store copy SOURCE DESTINATION
    nearrpc store check [--store STORE] [--quick]
    nearrpc store upgrade [--store STORE]

Each sub-command is one `_run_*` function and one `_add_*` parser builder. Failures print one
line and exit non-zero; a store location is shown without its password. `check` exits 0 when
the store passes, 1 when it finds problems (each on a line), 2 when there is no store to check.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Final

from nearrpc.cli.flags import add_setting, given
from nearrpc.cli.refusals import FAILED, INTERRUPTED, command_path, exit_code, refuse
from nearrpc.cli.settings import StoreSettings, load_settings
from nearrpc.store import StoreCheck, StoreError, StoreInfo, describe_location, open_store, upgrade_store

_CHECK_PREFIX = "nearrpc store check:"


def _settings(args: argparse.Namespace) -> StoreSettings:
    return load_settings(StoreSettings, given(args, "store_timeout"))


# -- init


def _run_init(args: argparse.Namespace) -> None:
    settings = _settings(args)
    with open_store(args.location, "write", settings.store_options()) as writer:
        with writer.batch():
            pass  # the tables are created with the first batch, when missing
        info = writer.reader().info()
    held = f"chain {info.chain_id!r}, {info.block_count} blocks" if info.chain_id else "empty"
    where = describe_location(args.location)
    print(f"nearrpc store init: {where} is a store of schema version {info.schema_version} ({held})")


def _add_init(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    init = commands.add_parser(
        "init", help="create an empty store (the tables of this build's schema)",
        description="Create an empty store at LOCATION: an SQLite file or a PostgreSQL database (which must "
        "exist). A location that is already a store of this schema version is left as it is.",
    )
    init.add_argument("location", metavar="LOCATION", help="an SQLite file or a postgresql:// URL")
    add_setting(init, StoreSettings, "store_timeout")
    init.set_defaults(run=_run_init)


# -- check



def _heights(info: StoreInfo) -> str:
    if info.latest_height is None:
        return "no blocks"
    return f"heights {info.earliest_height}..{info.latest_height}"


# What a check's count of a table is called where the table's name would not say it.
_COUNTED: Final = {"contract_data": "contract state rows", "validators": "epoch validator records"}


def _summary(location: str, info: StoreInfo | None, check: StoreCheck) -> list[str]:
    kind = "integrity check" if check.thorough else "quick check"
    verdict = "ok" if check.ok else f"{len(check.problems)} problem(s)"
    lines = [f"{location}: {kind} {verdict}"]
    if info is not None:
        lines.append(f"chain {info.chain_id or '(no genesis config)'}, {_heights(info)}")
    counts = ", ".join(
        f"{count} {_COUNTED.get(table, table.replace('_', ' '))}" for table, count in check.counts.items()
    )
    if counts:
        lines.append(counts)
    return lines


def _run_check(args: argparse.Namespace) -> int:
    settings = load_settings(StoreSettings, given(args, "store", "store_timeout"))
    location = describe_location(settings.store)  # what is printed; the store opens with its password
    try:
        reader = open_store(settings.store, "read", settings.store_options())
    except StoreError as exc:  # no store, not a store, an unreachable database: 2, as everywhere
        refuse("store check", " ".join(str(exc).split()))
        return exit_code(exc)
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
        print(f"{_CHECK_PREFIX} {' '.join(problem.split())}", file=sys.stderr)
    return 0 if check.ok else 1


def _add_check(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = commands.add_parser(
        "check", help="check a store's integrity and print what it holds",
        description="Run the store's full integrity check (every page, every index, every row counted) and print "
        "its chain, heights and row counts. Exit 0: it passed; 1: problems (listed on stderr); 2: no store (nothing, "
        "not a store, or a database that cannot be reached).",
    )
    add_setting(check, StoreSettings, "store", help_text="the store to check")
    add_setting(check, StoreSettings, "store_timeout")
    check.add_argument("--quick", action="store_true", help="the quick check `nearrpc serve` runs at start instead")
    check.set_defaults(run=_run_check)


# -- upgrade


def _run_upgrade(args: argparse.Namespace) -> None:
    settings = load_settings(StoreSettings, given(args, "store", "store_timeout"))
    before, after = upgrade_store(settings.store, settings.store_options())
    where = describe_location(settings.store)
    if before == after:
        print(f"nearrpc store upgrade: {where} is at schema version {after} already; nothing to do")
    else:
        print(f"nearrpc store upgrade: {where} upgraded from schema version {before} to {after} (tables added, "
              "nothing stored changed)")  # fmt: skip


def _add_upgrade(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    upgrade = commands.add_parser(
        "upgrade", help="bring a store written by an older build to this build's schema, in place",
        description="Upgrade the store to this build's schema version in one transaction: the tables later "
        "versions added are created (empty), nothing stored changes. A store at this version is left as it is.",
    )
    add_setting(upgrade, StoreSettings, "store", help_text="the store to upgrade")
    add_setting(upgrade, StoreSettings, "store_timeout")
    upgrade.set_defaults(run=_run_upgrade)


# -- copy


def _run_copy(args: argparse.Namespace) -> None:
    from nearrpc.ingest.progress import Progress
    from nearrpc.store.copy import copy_store, total_rows

    settings = _settings(args)
    options = settings.store_options()
    source = open_store(args.source, "read", options)
    try:
        total = total_rows(source.info())
    finally:
        source.close()
    progress = Progress("copying", total, "rows")
    started = time.monotonic()
    try:
        summary = copy_store(args.source, args.destination, options=options,
                             advance=lambda rows: progress.update(advance=rows))
    finally:
        progress.close()
    seconds = max(time.monotonic() - started, 1e-9)
    print(
        f"nearrpc store copy: copied {describe_location(args.source)} -> {describe_location(args.destination)}: "
        f"{summary.blocks} blocks, {summary.epochs} epochs, {summary.account_states} account states, "
        f"{summary.access_keys} access key states, {summary.contract_codes} contract codes, "
        f"{summary.contract_data} contract state rows, {summary.chunks} chunks, {summary.transactions} transactions, "
        f"{summary.receipts} receipts, {summary.validators} epoch validator records, "
        f"{summary.configs} configs in {seconds:.1f} s ({summary.blocks / seconds:.0f} blocks/s); "
        f"counts verified (chain {summary.destination.chain_id!r}, heights "
        f"{summary.destination.earliest_height}..{summary.destination.latest_height})"
    )


def _add_copy(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    copy = commands.add_parser(
        "copy", help="copy a store into another (SQLite <-> PostgreSQL, either way)",
        description="Copy every config, block, epoch and account state of SOURCE into DESTINATION, in one "
        "transaction: the destination holds the whole copy or, after a failure or a kill, what it held before. "
        "Rows are streamed (bounded memory); counts are verified at the end. A destination holding another "
        "chain is refused; a missing one is created.",
    )
    copy.add_argument("source", metavar="SOURCE", help="an SQLite file or a postgresql:// URL")
    copy.add_argument("destination", metavar="DESTINATION", help="an SQLite file or a postgresql:// URL")
    add_setting(copy, StoreSettings, "store_timeout")
    copy.set_defaults(run=_run_copy)


def _run(args: argparse.Namespace) -> int:
    command = command_path(args)
    try:
        code: int | None = args.run(args)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        refuse(command, "interrupted; the destination is as it was")
        return INTERRUPTED
    except StoreError as exc:
        refuse(command, str(exc))
        return exit_code(exc)
    except OSError as exc:
        refuse(command, exc.strerror or str(exc))
        return FAILED
    return code or 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `store init|copy|check|upgrade` to the `nearrpc` command parser."""
    group = commands.add_parser(
        "store", help="manage whole stores: create one, copy one into another, check one, upgrade one",
        description="Manage whole stores. A store is an SQLite file or a PostgreSQL database "
        "(postgresql://user@host:port/database; a password is better given by PGPASSWORD or ~/.pgpass).",
    )
    group.set_defaults(func=_run)
    commands_of_store = group.add_subparsers(dest="action", required=True, metavar="ACTION")
    _add_init(commands_of_store)
    _add_copy(commands_of_store)
    _add_check(commands_of_store)
    _add_upgrade(commands_of_store)
