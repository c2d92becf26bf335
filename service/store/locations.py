"""Opening a store from its location, the one way every caller does it.

A location is what an operator writes after `--store`: today a path to an SQLite file. The
mode says what the caller does with the store:
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

from nearrpc.store import sqlite
from nearrpc.store.base import ChainReader, ChainWriter, ServingReader, StoreError

StoreLocation: TypeAlias = str | os.PathLike[str]
StoreMode: TypeAlias = Literal["serve", "read", "write", "replace"]


def _sqlite_path(location: StoreLocation) -> Path:
    text = os.fspath(location)
    if "://" in text:
        scheme = text.split("://", 1)[0]
        raise StoreError(f"unsupported store location {scheme}://...: expected a path to an SQLite file")
    if not text:
        raise StoreError("empty store location: expected a path to an SQLite file")
    return Path(text)


def describe_location(location: StoreLocation) -> str:
    """The location as it may appear in messages and logs."""
    return os.fspath(location)


@overload
def open_store(location: StoreLocation, mode: Literal["serve"]) -> ServingReader: ...


@overload
def open_store(location: StoreLocation, mode: Literal["read"]) -> ChainReader: ...


@overload
def open_store(location: StoreLocation, mode: Literal["write", "replace"]) -> ChainWriter: ...


def open_store(location: StoreLocation, mode: StoreMode) -> ServingReader | ChainReader | ChainWriter:
    path = _sqlite_path(location)
    if mode == "serve":
        return sqlite.SqliteServingReader(sqlite.open_reader(path))
    if mode == "read":
        return sqlite.open_reader(path)
    return sqlite.open_writer(path, replace=mode == "replace")
