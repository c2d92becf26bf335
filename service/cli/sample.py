"""`nearrpc sample`: write the deterministic sample chain into a store."""

from __future__ import annotations

import argparse

from nearrpc.cli.refusals import FAILED, USAGE, exit_code, refuse
from nearrpc.store import StoreError, StoreLocationError, StoreNotFoundError, describe_location, open_store


def _exists(location: str) -> bool:
    """Whether something is at `location` (StoreLocationError for what can never be a store)."""
    try:
        open_store(location, "read").close()
    except StoreNotFoundError:
        return False
    except StoreLocationError:
        raise
    except StoreError:
        return True  # something is there, even if it is not a store
    return True


def _run(args: argparse.Namespace) -> int:
    if not args.store.strip():
        refuse("sample", "STORE is empty: name the SQLite file to write")
        return USAGE
    try:
        if not args.force and _exists(args.store):
            refuse("sample", f"{describe_location(args.store)} exists (use --force to replace it)")
            return USAGE
    except StoreLocationError as exc:
        refuse("sample", str(exc))
        return USAGE
    from nearrpc.sample import build_sample_store

    try:
        build_sample_store(args.store)
    except StoreError as exc:
        refuse("sample", str(exc))
        return exit_code(exc)
    except OSError as exc:  # e.g. a read-only file system where the file would be renamed into place
        refuse("sample", f"cannot write {args.store}: {exc.strerror or exc}")
        return FAILED
    print(f"nearrpc sample: wrote the sample chain to {describe_location(args.store)}")
    return 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    build = commands.add_parser("sample", help="write the deterministic sample chain into a new store",
                                description="Write the bundled sample localnet into a new SQLite store.")
    build.add_argument("store", metavar="STORE", help="store to create (an SQLite file)")
    build.add_argument("--force", action="store_true", help="replace an existing store")
    build.set_defaults(func=_run)
