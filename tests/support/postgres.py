"""A real PostgreSQL server for the tests, a fresh cluster in a temporary folder, listening on a
free 127.0.0.1 port with password authentication, so tests use URLs exactly as operators write
them. Its programs are the `pgserver` wheel's (PostgreSQL 16) or any other installation's
(`start_server(bin_dir)`: Debian's PostgreSQL 15, the version Debian 12 ships).

PostgreSQL refuses to run as root; as root the server runs as the user `pgserver` (created
when missing, as the wheel itself does).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

with warnings.catch_warnings():
    # the wheel looks up a runtime folder on import and warns where XDG_RUNTIME_DIR is unset
    warnings.simplefilter("ignore")
    from pgserver._commands import POSTGRES_BIN_PATH
    from pgserver.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

from tests.support.live_server import free_port
from tests.support.once import machine_lock

SYSTEM_USER = "pgserver"
SUPERUSER = "postgres"
# Durability is not what these tests are about; skipping fsync makes the suite faster.
_FAST = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"


def _as_user() -> str | None:
    return SYSTEM_USER if os.geteuid() == 0 else None


def _run(bin_dir: Path, program: str, *args: str) -> None:
    """One of the server's PostgreSQL programs, as the server's user; its output on failure."""
    # stdout to a file, not a pipe: pg_ctl's server inherits it and would hold a pipe open
    with tempfile.TemporaryFile() as output:
        done = subprocess.run([str(bin_dir / program), *args], user=_as_user(), stdout=output,
                              stderr=subprocess.STDOUT, timeout=120, check=False)  # fmt: skip
        if done.returncode != 0:
            output.seek(0)
            raise RuntimeError(f"{program} {' '.join(args)} failed: {output.read().decode(errors='replace')}")


# Run beside the server: waits for the test process to end, however it ends (Ctrl-C, a kill,
# a finished run), then stops the server and removes its folder. pg_ctl's server is no child of
# the tests, so nothing else would stop it: an interrupted ./check left PostgreSQL running.
_WATCHDOG = """
import os, select, shutil, subprocess, sys, time
parent, pg_ctl, data, folder, user = int(sys.argv[1]), *sys.argv[2:6]
try:
    select.select([os.pidfd_open(parent)], [], [])  # readable once the process has ended
except ProcessLookupError:
    pass
for _ in range(20):  # a stale pid file (a crashed server) must not keep it here forever
    if not os.path.exists(os.path.join(data, "postmaster.pid")):
        break
    subprocess.run([pg_ctl, "-D", data, "-m", "immediate", "-w", "stop"], user=user or None,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=False)
    time.sleep(0.2)
shutil.rmtree(folder, ignore_errors=True)
"""


@dataclass
class PostgresServer:
    folder: Path
    port: int
    password: str
    bin_dir: Path = POSTGRES_BIN_PATH
    _databases: int = field(default=0)
    watchdog: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, database: str, *, password: str | None = None) -> str:
        secret = self.password if password is None else password
        return f"postgresql://{SUPERUSER}:{secret}@127.0.0.1:{self.port}/{database}"

    def _pg_ctl(self, *args: str) -> None:
        _run(self.bin_dir, "pg_ctl", "-D", str(self.data), *args)

    def start(self) -> None:
        self._pg_ctl(
            "-w", "-l", str(self.folder / "server.log"),
            "-o", f"-h 127.0.0.1 -p {self.port} -k {self.data} {_FAST}", "start",
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        self._pg_ctl("-w", "-m", mode, "stop")

    def create_database(self, prefix: str = "store", *, template: str | None = None) -> str:
        """A new database, empty or a copy of the database `template` (a URL); its URL."""
        self._databases += 1
        name = f"{prefix}_{self._databases}"
        copy_of = "" if template is None else f' TEMPLATE "{template.rsplit("/", 1)[1]}"'
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"{copy_of}')
        return self.url(name)


def dump(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of a store database, sorted, with SQLite's value types (booleans
    as 0/1, bytes), so a PostgreSQL store compares equal to an SQLite one holding the same data."""

    def plain(value: object) -> object:
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, memoryview):
            return bytes(value)
        return value

    with psycopg.connect(url, autocommit=True) as conn:
        tables = [row[0] for row in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")]
        return {
            table: sorted((tuple(plain(v) for v in row) for row in conn.execute(f"SELECT * FROM {table}")), key=repr)
            for table in tables
        }


def debian_postgres_bin() -> Path | None:
    """The newest PostgreSQL of Debian's packages (`/usr/lib/postgresql/N/bin`), if installed."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"), key=lambda p: int(p.parent.parent.name))
    return found[-1].parent if found else None


def start_server(bin_dir: Path = POSTGRES_BIN_PATH) -> PostgresServer:
    """initdb a fresh cluster in a new folder and start it, with the programs in `bin_dir`.

    The folder is not under pytest's temporary root: pytest (of any run on the machine) resets
    that root to mode 0700, which would lock the server's own user out of its data folder.
    """
    folder = Path(tempfile.mkdtemp(prefix="nearrpc-postgres-"))
    server = PostgresServer(folder, free_port(), f"pw-{secrets.token_hex(8)}", bin_dir)
    user = _as_user()
    server.data.mkdir()
    pwfile = folder / "pwfile"
    pwfile.write_text(server.password + "\n")
    if user is not None:
        with machine_lock("pgserver-user"):  # parallel workers would race to useradd it
            entry = ensure_user_exists(user)
        assert entry is not None
        ensure_prefix_permissions(server.data)
        if bin_dir == POSTGRES_BIN_PATH:  # opened up for the server's user, as the wheel itself does
            ensure_folder_permissions(POSTGRES_BIN_PATH, 0o555)
            ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "lib", 0o444)
        for path in (folder, server.data, pwfile):
            shutil.chown(path, entry.pw_uid, entry.pw_gid)
    _run(bin_dir, "initdb", "-D", str(server.data), "--auth-local=trust", "--auth-host=scram-sha-256",
         f"--pwfile={pwfile}", "--encoding=utf8", "--locale=C", "-U", SUPERUSER)  # fmt: skip
    server.start()
    server.watchdog = subprocess.Popen(
        [sys.executable, "-c", _WATCHDOG, str(os.getpid()), str(bin_dir / "pg_ctl"), str(server.data),
         str(folder), user or ""],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # its own session: a Ctrl-C to the tests' process group does not end it before its work
    deadline = time.monotonic() + 30
    while True:
        try:
            with psycopg.connect(server.url("postgres"), connect_timeout=2):
                return server
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def stop_server(server: PostgresServer) -> None:
    """Stop the server (when running) and remove its folder."""
    if (server.data / "postmaster.pid").exists():
        server.stop("immediate")
    shutil.rmtree(server.folder, ignore_errors=True)
    if server.watchdog is not None:  # nothing left for it to do
        server.watchdog.kill()
        server.watchdog.wait()
