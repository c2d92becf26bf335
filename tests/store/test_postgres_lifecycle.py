"""A PostgreSQL store over a server's life (issue 33): a replica is healthy at its first health
check, a database in another encoding than UTF8 is refused in one line, a stopping server does
not wait for long on a database that stopped answering, and the suite's own PostgreSQL ends
with the process that started it however that process ends."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.support.backends import copy_into_postgres
from tests.support.cli import REPO, nearrpc
from tests.support.postgres import PostgresServer, start_server, stop_server
from tests.support.serve_process import serving

pytestmark = [pytest.mark.live, pytest.mark.deep]


def test_a_replica_is_healthy_at_its_first_health_check(
    postgres: PostgresServer, sample_store: Path, tmp_path: Path
) -> None:
    """The first request after the start-up line (a load balancer's first check) finds the
    store's change counters polled: 200, not 503 "not polled yet" (HAProxy then kept the new
    replica out for about 12 s)."""
    url = copy_into_postgres(postgres, sample_store)
    for attempt in range(2):
        with serving("--store", url, log=tmp_path / f"serve{attempt}.log", until_healthy=False) as served:
            first = httpx.get(f"{served.url}/health", timeout=30)
            assert first.status_code == 200, (first.status_code, served.log.read_text())
            block = httpx.post(served.url, json={"jsonrpc": "2.0", "id": 1, "method": "block",
                                                 "params": {"finality": "final"}}, timeout=30)  # fmt: skip
            assert "result" in block.json()


def test_a_database_not_in_utf8_is_refused_in_one_line(
    postgres: PostgresServer, sample_store: Path, tmp_path: Path
) -> None:
    """A store copied into a SQL_ASCII database read back as empty and blamed "another writer";
    every command refuses such a database before it writes or serves anything (exit 2)."""
    name = "ascii_store"
    with psycopg.connect(postgres.url("postgres"), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
    url = postgres.url(name)
    expected = ("the database's encoding is SQL_ASCII, a store needs UTF8 (CREATE DATABASE name ENCODING 'UTF8' "
                "TEMPLATE template0)")  # fmt: skip
    for command in (("store", "copy", str(sample_store), url), ("store", "init", url),
                    ("store", "check", "--store", url), ("serve", "--store", url)):  # fmt: skip
        done = nearrpc(*command, env={"NEARRPC_PORT": "0"}, timeout=120, cwd=tmp_path)
        assert (done.returncode, done.stdout) == (2, ""), done
        assert done.stderr.count("\n") == 1 and done.stderr.endswith(expected + "\n"), done.stderr
        assert postgres.password not in done.stderr
    with psycopg.connect(url) as conn:  # nothing was written there
        assert conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone() == (0,)


def _cluster_pids(server: PostgresServer) -> list[int]:
    """The postmaster and every process it started."""
    postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
    found = [postmaster]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                found.append(int(entry.name))
    return found


@contextmanager
def frozen(server: PostgresServer) -> Iterator[None]:
    """The database stops answering without closing a connection (SIGSTOP), as a host that
    hangs or a network that drops packets."""
    pids = _cluster_pids(server)
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_stopping_server_leaves_a_database_that_stopped_answering(
    sample_store: Path, tmp_path: Path, workers: str
) -> None:
    """SIGTERM ends the server within its --store-close-timeout (and uvicorn's own shutdown),
    however long closing connections to a frozen database would take."""
    private = start_server()  # frozen here, the suite's shared server would stall other tests
    try:
        url = copy_into_postgres(private, sample_store)
        with serving("--store", url, "--workers", workers, "--store-timeout", "30", "--store-close-timeout", "1",
                     log=tmp_path / "serve.log") as served:  # fmt: skip
            # every worker up before the freeze: one still starting waits on its first store
            # lookup for up to --store-timeout, which is the start's bound, not the stop's
            _await_startups(served.log, int(workers))
            with frozen(private):
                time.sleep(1.0)  # the watcher's poll is now waiting on the frozen database
                started = time.monotonic()
                os.killpg(served.pid, signal.SIGTERM)
                deadline = started + 60
                while time.monotonic() < deadline:
                    try:
                        os.kill(served.pid, 0)
                    except ProcessLookupError:
                        break
                    if _reaped(served.pid):
                        break
                    time.sleep(0.05)
                seconds = time.monotonic() - started
        assert seconds < 8, (seconds, served.log.read_text())
    finally:
        stop_server(private)


def _await_startups(log: Path, workers: int) -> None:
    """Until every worker has logged that its application started (at most 60 s)."""
    deadline = time.monotonic() + 60
    while log.read_text(encoding="utf-8").count("Application startup complete") < workers:
        assert time.monotonic() < deadline, log.read_text(encoding="utf-8")
        time.sleep(0.1)


def _reaped(pid: int) -> bool:
    """Whether `pid` (a child of `serving`'s Popen, reaped by it only in its finally) has exited."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def _refuses(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) != 0


def test_the_suites_postgresql_ends_with_the_process_that_started_it() -> None:
    """An interrupted ./check (its pytest killed) left its PostgreSQL running: the server now
    goes, and its folder with it, when the process that started it ends, even by SIGKILL."""
    script = ("from tests.support.postgres import start_server\n"
              "server = start_server()\n"
              "print(server.port, server.folder, flush=True)\n"
              "import time; time.sleep(600)\n")  # fmt: skip
    starter = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert starter.stdout is not None
        port_text, folder_text = starter.stdout.readline().split()
        port, folder = int(port_text), Path(folder_text)
        assert not _refuses(port) and folder.is_dir()
    finally:
        starter.kill()
        starter.wait()
        if starter.stdout is not None:
            starter.stdout.close()
    deadline = time.monotonic() + 60
    while (not _refuses(port) or folder.exists()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _refuses(port), "the server still listens"
    assert not folder.exists()
