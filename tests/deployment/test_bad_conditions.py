"""Bad conditions with a PostgreSQL store: an unreachable database at start, a database that
goes away while serving (and comes back), passwords kept out of sight, and copies killed half
way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import psycopg
import pytest

from nearrpc.sample.synthetic import SyntheticShape, write_synthetic_chain
from nearrpc.store.copy import copy_store
from tests.support.cli import nearrpc
from tests.support.live_server import free_port, running_server
from tests.support.load import block_request, run_load, tally
from tests.support.postgres import PostgresServer, dump, start_server, stop_server
from tests.support.sample_facts import sample_facts

pytestmark = [pytest.mark.live, pytest.mark.deep]
REPO = Path(__file__).resolve().parents[2]
SECRET = "hunter2-not-to-be-shown"


def test_unreachable_database_at_start_is_one_line_naming_host_and_database() -> None:
    port = free_port()  # nothing listens there
    url = f"postgresql://nearrpc:{SECRET}@127.0.0.1:{port}/chaindb"
    for args, env in (((("--store", url)), {}), ((), {"NEARRPC_STORE": url})):
        started = time.monotonic()
        result = nearrpc("serve", "--port", str(free_port()), *args, env=env, timeout=60)
        assert result.returncode == 2, result
        assert result.stderr.strip() == (
            f'nearrpc serve: PostgreSQL database "chaindb" on 127.0.0.1:{port}: connection failed: Connection refused'
        ), result.stderr
        assert SECRET not in result.stdout + result.stderr
        assert time.monotonic() - started < 30


def test_wrong_password_and_a_database_without_a_store_are_one_line(postgres: PostgresServer) -> None:
    wrong = postgres.url("postgres", password=SECRET)
    result = nearrpc("serve", "--port", str(free_port()), "--store", wrong)
    assert result.returncode == 2 and SECRET not in result.stdout + result.stderr
    assert result.stderr.strip() == (
        f'nearrpc serve: PostgreSQL database "postgres" on 127.0.0.1:{postgres.port}: connection failed: '
        'FATAL: password authentication failed for user "postgres"'
    ), result.stderr
    empty = postgres.create_database("empty")
    result = nearrpc("serve", "--port", str(free_port()), "--store", empty)
    assert result.returncode == 2
    assert result.stderr.strip().startswith(
        'nearrpc serve: no nearrpc store in PostgreSQL database "empty_'), result.stderr
    assert dump(empty) == {}  # never filled with the sample chain unasked


def test_a_wrong_password_reads_the_same_from_every_store_command(
    postgres: PostgresServer, sample_sqlite: Path
) -> None:
    """libpq's `FATAL:  password ...` (two spaces) reached `store init` and `store copy` as it
    came while `serve` said `FATAL: password ...`: one condition, one line, from every command."""
    wrong = postgres.url("postgres", password=SECRET)
    said = ('PostgreSQL database "postgres" on 127.0.0.1:{port}: connection failed: '
            'FATAL: password authentication failed for user "postgres"')
    for argv in (("serve", "--port", str(free_port()), "--store", wrong), ("store", "check", "--store", wrong),
                 ("store", "init", wrong), ("store", "copy", str(sample_sqlite), wrong),
                 ("store", "upgrade", "--store", wrong)):  # fmt: skip
        result = nearrpc(*argv, timeout=60)
        command = " ".join(argv[:2]) if argv[0] == "store" else argv[0]
        assert result.returncode == 2, result
        assert result.stderr.strip() == f"nearrpc {command}: {said.format(port=postgres.port)}", result.stderr


def test_password_stays_out_of_title_logs_status_and_errors(
    postgres: PostgresServer, sample_sqlite: Path, tmp_path: Path
) -> None:
    url = postgres.create_database()
    copy_store(sample_sqlite, url)
    assert postgres.password in url
    with running_server(url, tmp_path / "server.log", "--log-level", "debug") as live:
        title = Path(f"/proc/{live.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        assert "postgresql://postgres:***@127.0.0.1" in title, title
        status = httpx.get(f"{live.url}/status").text
        error = httpx.post(live.url, content=b'{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":7}}',
                           headers={"content-type": "application/json"}).text
    log = live.log.read_text()
    for shown in (title, status, error, log):
        assert postgres.password not in shown
    assert "serving postgresql://postgres:***@127.0.0.1" in log  # the location, masked


def test_database_outage_while_serving_answers_internal_error_then_recovers(
    sample_sqlite: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Stop the database under load, start it again: answers are INTERNAL_ERROR (HTTP 500) and
    /health is 503 meanwhile, and service comes back by itself."""
    database = start_server()  # its own server: this test stops it
    try:
        url = database.create_database()
        copy_store(sample_sqlite, url)
        with running_server(url, tmp_path / "server.log") as live:
            marks: dict[str, float] = {}
            health: list[tuple[float, int]] = []

            def chaos() -> None:
                started = time.monotonic()
                time.sleep(1.5)
                marks["stop"] = time.monotonic() - started
                database.stop("fast")
                marks["stopped"] = time.monotonic() - started
                deadline = time.monotonic() + 2.5
                while time.monotonic() < deadline:
                    health.append((time.monotonic() - started, httpx.get(f"{live.url}/health").status_code))
                    time.sleep(0.1)
                marks["start"] = time.monotonic() - started
                database.start()
                marks["ready"] = time.monotonic() - started

            helper = threading.Thread(target=chaos)
            helper.start()
            bodies = [block_request(h) for h in sample_facts().block_heights]
            outcomes = run_load(live.url, bodies, threads=4, seconds=9.0)
            helper.join()
            after = httpx.get(f"{live.url}/health")
        log = live.log.read_text()
    finally:
        stop_server(database)
    counts = tally(outcomes)
    # sent while the database was surely down (in-flight requests of the stop itself excepted)
    during = [o for o in outcomes if marks["stopped"] + 0.5 < o.at < marks["start"]]
    recovered = [o.at for o in outcomes if o.at > marks["ready"] and o.status == 200]
    first_ok = min(recovered) - marks["ready"]
    failing_after = [o for o in outcomes if o.at > marks["ready"] + first_ok + 0.5 and o.status != 200]
    figures = (
        f"database outage: {len(outcomes)} requests {dict(counts)}; database stopped at {marks['stopped']:.2f} s, "
        f"ready again at {marks['ready']:.2f} s, first answer {first_ok:.2f} s later; /health during the outage: "
        f"{sorted({code for _, code in health})}"
    )
    request.node.user_properties.append(("terminal_summary", figures))
    assert set(counts) <= {(200, "result"), (500, "INTERNAL_ERROR")}, counts
    assert during and all(o.status == 500 for o in during), [o for o in during if o.status != 500][:5]
    assert {code for at, code in health if at > marks["stopped"] + 0.5} == {503}
    assert first_ok < 3.0 and not failing_after and after.status_code == 200
    assert "Traceback" not in log and database.password not in log
    assert "is unreachable" in log and "answers again" in log


def test_a_kept_answer_is_not_served_while_the_database_is_gone(sample_sqlite: Path, tmp_path: Path) -> None:
    """Issue 43: a block asked by hash is kept with no dependency on later writes, and was served
    from the answer cache while PostgreSQL was down; DEPLOYMENT.md says INTERNAL_ERROR at once,
    as /health says 503. When the database is back the kept answer serves again, unchanged."""
    database = start_server()  # its own server: this test stops it
    try:
        url = database.create_database()
        copy_store(sample_sqlite, url)
        with running_server(url, tmp_path / "server.log") as live:
            by_hash = {"jsonrpc": "2.0", "id": 1, "method": "block",
                       "params": {"block_id": sample_facts().final_hash}}  # fmt: skip
            kept = httpx.post(live.url, json=by_hash)
            assert kept.status_code == 200 and "result" in kept.json()
            database.stop("fast")
            deadline = time.monotonic() + 10
            while httpx.get(f"{live.url}/health").status_code != 503:
                assert time.monotonic() < deadline, "/health never said the database is gone"
                time.sleep(0.05)
            during = httpx.post(live.url, json=by_hash)
            database.start()
            deadline = time.monotonic() + 10
            while httpx.get(f"{live.url}/health").status_code != 200:
                assert time.monotonic() < deadline, "service never came back"
                time.sleep(0.05)
            after = httpx.post(live.url, json=by_hash)
    finally:
        stop_server(database)
    assert during.status_code == 500, during.text
    error = during.json()["error"]
    assert error["cause"]["name"] == "INTERNAL_ERROR" and "is unreachable" in error["data"], error
    assert database.password not in during.text
    assert after.status_code == 200 and after.content == kept.content


def _copy_killed_mid_way(source: str | Path, destination: str | Path, busy: Callable[[], bool]) -> None:
    command = [sys.executable, "-m", "nearrpc", "store", "copy", str(source), str(destination)]
    with subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as process:
        deadline = time.monotonic() + 60
        while not busy():
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL


def test_copy_killed_with_sigkill_leaves_the_destination_as_it_was(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    big = tmp_path / "big.sqlite"
    write_synthetic_chain(big, SyntheticShape(blocks=4000, accounts=400, states=10))

    def database_size(url: str) -> int:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        return int(row[0]) if row else 0

    def writing_blocks(url: str, empty: int) -> bool:
        """The copy's transaction is open and has written megabytes (its rows are invisible to
        other sessions until it commits, but the database's files grow)."""
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                               "AND application_name = 'nearrpc' AND backend_xid IS NOT NULL").fetchone()
        return bool(row and row[0]) and database_size(url) > empty + 4_000_000

    # into a new PostgreSQL store: no tables appear
    fresh = postgres.create_database()
    empty = database_size(fresh)
    _copy_killed_mid_way(big, fresh, lambda: writing_blocks(fresh, empty))
    assert dump(fresh) == {}
    # into an existing (empty) store: it stays exactly as it was
    kept = postgres.create_database()
    assert nearrpc("store", "init", kept).returncode == 0
    before = dump(kept)
    empty = database_size(kept)
    _copy_killed_mid_way(big, kept, lambda: writing_blocks(kept, empty))
    assert dump(kept) == before
    # from PostgreSQL into a new SQLite file: no file appears
    filled = postgres.create_database()
    copy_store(big, filled)
    target = tmp_path / "copy" / "target.sqlite"
    target.parent.mkdir()
    staging = target.with_name(f".{target.name}.building")
    _copy_killed_mid_way(filled, target, lambda: staging.exists() and staging.stat().st_size > 4_000_000)
    assert not target.exists()
