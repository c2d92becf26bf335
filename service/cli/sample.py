"""`nearrpc sample`: write the deterministic sample chain into a store."""

from __future__ import annotations

import argparse
import sys

from nearrpc.store import StoreError, StoreNotFoundError, describe_location, open_store


def _exists(location: str) -> bool:
    try:
        open_store(location, "read").close()
    except StoreNotFoundError:
        return False
    except StoreError:
        return True  # something is there, even if it is not a store
    return True


def _run(args: argparse.Namespace) -> int:
    if not args.force and _exists(args.store):
        print(f"nearrpc: {describe_location(args.store)} exists (use --force to replace it)", file=sys.stderr)
        return 1
    from nearrpc.sample import build_sample_store

    try:
        build_sample_store(args.store)
    except StoreError as exc:
        print(f"nearrpc sample: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # e.g. a read-only file system where the file would be renamed into place
        print(f"nearrpc sample: cannot write {args.store}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"nearrpc: wrote the sample chain to {describe_location(args.store)}")
    return 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    build = commands.add_parser("sample", help="write the deterministic sample chain into a new store",
                                description="Write the bundled sample localnet into a new SQLite store.")
    build.add_argument("store", metavar="STORE", help="store to create (an SQLite file)")
    build.add_argument("--force", action="store_true", help="replace an existing store")
    build.set_defaults(func=_run)
