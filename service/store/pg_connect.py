"""PostgreSQL locations: telling them apart, showing them without secrets, connecting.

A location is a libpq URL, `postgresql://user[:password]@host[:port]/database[?param=value...]`
(`postgres://` too); libpq's environment (PGPASSWORD, PGPASSFILE, PGHOST, ...) fills what the
URL leaves out, so a password need not be written in it at all. Where a URL is shown (logs,
errors, /status, the process title) its password is replaced by `***`.
"""

from __future__ import annotations

import math
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from nearrpc.store.base import StoreError, StoreLocationError, StoreOptions, StoreUnavailableError
from nearrpc.urls import MASK, mask_password


def mask_url(location: str) -> str:
    """The URL with any password replaced by `***` (an empty password stays empty)."""
    return mask_password(location)


def _parts(location: str) -> dict[str, str]:
    try:
        return {key: str(value) for key, value in conninfo_to_dict(location).items() if value is not None}
    except psycopg.Error as exc:
        # psycopg's reason ends by quoting the URL, password and all: keep the reason only
        reason = str(exc).strip().split(': "', 1)[0].replace(location, mask_url(location)) or "malformed"
        raise StoreError(f"not a usable PostgreSQL URL {mask_url(location)}: {reason}") from None


def describe_target(location: str) -> str:
    """`database "db" on host:port` (defaults as libpq applies them) for one-line messages."""
    parts = _parts(location)
    host = parts.get("host") or "the local socket"
    port = parts.get("port")
    where = f"{host}:{port}" if port else host
    database = parts.get("dbname") or parts.get("user") or "(libpq default)"
    return f'database "{database}" on {where}'


def database_identity(location: str) -> tuple[str, str, str]:
    """(host, port, database) as libpq fills them in, to tell two URLs of one database apart
    from two databases (user and password do not change which database it is)."""
    parts = _parts(location)
    return (parts.get("host") or "", parts.get("port") or "5432", parts.get("dbname") or parts.get("user") or "")


def _scrub(text: str, location: str) -> str:
    """One line of a driver message, with the URL's password removed should it ever appear."""
    line = text.strip().splitlines()[0] if text.strip() else "no detail"
    password = _parts(location).get("password")
    if password:
        line = line.replace(password, MASK)
    return line


def reason(exc: BaseException, location: str) -> str:
    """What a driver error says, in one line: libpq's `connection to server ... failed: X`
    becomes X (the target is named by the caller)."""
    line = _scrub(str(exc), location)
    line = line.rsplit(" failed: ", 1)[-1] if " failed: " in line else line
    # libpq pads its severity (`FATAL:  password ...`) where psycopg's async path does not
    return " ".join(line.split())


def unavailable(exc: BaseException, location: str, doing: str) -> StoreUnavailableError:
    return StoreUnavailableError(
        f"PostgreSQL {describe_target(location)}: {doing} failed: {reason(exc, location)}"
    )


def store_error(exc: psycopg.Error, location: str, doing: str) -> StoreError:
    """A driver error as a StoreError: a lost or refused connection is StoreUnavailableError."""
    if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        return unavailable(exc, location, doing)
    return StoreError(f"PostgreSQL {describe_target(location)}: {doing} failed: {reason(exc, location)}")


def connect_kwargs(options: StoreOptions, *, read_only: bool) -> dict[str, Any]:
    """Connection parameters besides the URL: time limits from the options, autocommit (every
    read is one statement), and for readers a session that refuses writes. Readers' statements
    end after `timeout`; writers' statements may take long (a big batch), but waiting for
    another writer's lock ends after `timeout`, as an SQLite writer's does."""
    statement_ms = max(1, round(options.timeout * 1000))
    if read_only:
        settings = f"-c statement_timeout={statement_ms} -c default_transaction_read_only=on"
    else:
        settings = f"-c lock_timeout={statement_ms}"
    return {
        "autocommit": True,
        "application_name": "nearrpc",
        # libpq counts whole seconds and treats less than 2 as 2
        "connect_timeout": max(2, math.ceil(options.timeout)),
        "options": settings,
        # a server that vanishes without closing the connection is noticed after about this long
        "tcp_user_timeout": statement_ms if read_only else 0,
        "keepalives": 1,
        "keepalives_idle": max(1, math.ceil(options.timeout)),
        "keepalives_interval": 1,
        "keepalives_count": 3,
    }


def connect(location: str, options: StoreOptions, *, read_only: bool) -> psycopg.Connection[Any]:
    """A synchronous connection (imports, copies, checks), or StoreUnavailableError in one line."""
    try:
        conn = psycopg.Connection.connect(location, **connect_kwargs(options, read_only=read_only))
    except psycopg.Error as exc:
        raise unavailable(exc, location, "connection") from None
    encoding = conn.info.parameter_status("server_encoding")
    if encoding is not None and encoding.upper() != "UTF8":
        conn.close()
        # SQL_ASCII stores bytes unchecked and answers text in another form: a store copied
        # into one read back as empty, and its writer then blamed "another writer"
        raise StoreLocationError(
            f"PostgreSQL {describe_target(location)}: the database's encoding is {encoding}, a store needs UTF8 "
            "(CREATE DATABASE name ENCODING 'UTF8' TEMPLATE template0)"
        )
    return conn
