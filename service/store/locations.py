"""Opening a store from its location, the one way every caller does it.

A location is what an operator writes after `--store`: a path to an SQLite file, or a
PostgreSQL URL (`postgresql://user@host:port/database`, see pg_connect.py). The mode says what
the caller does with the store:
- "serve": an existing store, read-only, through the awaitable interface the server uses;
- "read": an existing store, read-only;
- "write": an existing store, or a new one that appears with the first committed batch;
- "replace": a new store that takes the place of whatever is at the location with its first
  committed batch (`nearrpc sample --force`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, TypeAlias, overload

from nearrpc.store import sqlite, sqlite_serving
from nearrpc.store.base import ChainReader, ChainWriter, ServingReader, StoreError, StoreLocationError, StoreOptions

StoreLocation: TypeAlias = str | os.PathLike[str]
StoreMode: TypeAlias = Literal["serve", "read", "write", "replace"]


_EXPECTED = "expected a path to an SQLite file or a postgresql:// URL"


def _is_postgres(location: StoreLocation) -> bool:
    # The test is on the text alone, so telling the kind never imports a driver.
    return os.fspath(location).lower().startswith(("postgresql://", "postgres://"))


def _malformed_postgres(text: str) -> str | None:
    """Why a location that starts as a PostgreSQL URL but lacks its two slashes
    (`postgresql:/host/db`) is no store location, or None; read as a file path it would name a
    file (and `serve` would offer to build the sample chain there)."""
    scheme, colon, rest = text.partition(":")
    if not colon or scheme.lower() not in ("postgresql", "postgres") or rest.startswith("//"):
        return None
    shown = f"{scheme}:" + (f"…@{rest.rsplit('@', 1)[1]}" if "@" in rest else rest)  # never a password
    return (f"{shown} is a malformed PostgreSQL URL: write {scheme.lower()}://user@host:port/database "
            "(two slashes after the colon)")  # fmt: skip


def _sqlite_path(location: StoreLocation) -> Path:
    text = os.fspath(location)
    malformed = _malformed_postgres(text)
    if malformed is not None:
        raise StoreLocationError(malformed)
    if "://" in text:
        scheme = text.split("://", 1)[0]
        raise StoreError(f"unsupported store location {scheme}://...: {_EXPECTED}")
    if not text:
        raise StoreError(f"empty store location: {_EXPECTED}")
    return Path(text)


def is_file_location(location: StoreLocation) -> bool:
    """A store in a local file (which `nearrpc serve` may create from the sample chain), as
    opposed to one on a database server (which is never written unasked)."""
    return not _is_postgres(location)


def describe_location(location: StoreLocation) -> str:
    """The location as it may appear in messages, logs and process titles: never a password."""
    if _is_postgres(location):
        from nearrpc.store.pg_connect import mask_url

        return mask_url(os.fspath(location))
    return os.fspath(location)


def same_store(first: StoreLocation, second: StoreLocation) -> bool:
    """Whether two locations name one store: one file (however the paths are spelled), or one
    database on one server."""
    if _is_postgres(first) != _is_postgres(second):
        return False
    if _is_postgres(first):
        from nearrpc.store.pg_connect import database_identity

        return database_identity(os.fspath(first)) == database_identity(os.fspath(second))
    a, b = _sqlite_path(first), _sqlite_path(second)
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


@overload
def open_store(
    location: StoreLocation, mode: Literal["serve"], options: StoreOptions | None = None
) -> ServingReader: ...


@overload
def open_store(location: StoreLocation, mode: Literal["read"], options: StoreOptions | None = None) -> ChainReader: ...


@overload
def open_store(
    location: StoreLocation, mode: Literal["write", "replace"], options: StoreOptions | None = None
) -> ChainWriter: ...


def open_store(
    location: StoreLocation, mode: StoreMode, options: StoreOptions | None = None
) -> ServingReader | ChainReader | ChainWriter:
    """The store at `location` for `mode`; `options` set pool size and time limits of stores on
    a server (the defaults of StoreOptions when None)."""
    if _is_postgres(location):
        return _open_postgres(os.fspath(location), mode, options or StoreOptions())
    path = _sqlite_path(location)
    if mode == "serve":
        return sqlite_serving.open_serving_reader(path)
    if mode == "read":
        return sqlite.open_reader(path)
    options = options or StoreOptions()
    return sqlite.open_writer(path, replace=mode == "replace", wait_seconds=options.timeout,
                              durable=options.durable_commits)  # fmt: skip


def _open_postgres(url: str, mode: StoreMode, options: StoreOptions) -> ServingReader | ChainReader | ChainWriter:
    # imported here: SQLite users never load the PostgreSQL driver
    from nearrpc.store import postgres

    if mode == "serve":
        from nearrpc.store.postgres_serving import PostgresServingReader

        # checked now with a plain connection, so a bad URL or an unreachable server is one
        # line at start rather than a failure on the first request
        postgres.open_reader(url, options).close()
        return PostgresServingReader(url, options)
    if mode == "read":
        return postgres.open_reader(url, options)
    return postgres.open_writer(url, options, replace=mode == "replace")


def upgrade_store(location: StoreLocation, options: StoreOptions | None = None) -> tuple[int, int]:
    """Bring an existing store to this build's schema version, in place and all at once (only
    tables are added); the versions before and after. StoreSchemaError for a store no upgrade
    reaches."""
    if _is_postgres(location):
        from nearrpc.store import postgres

        return postgres.upgrade_store(os.fspath(location), options or StoreOptions())
    return sqlite.upgrade_store(_sqlite_path(location))
