"""Stateless replicas over one PostgreSQL store: the README's examples answer byte for byte as
from the SQLite store, replicas answer identically, and behind a real HAProxy a bounded load
loses no request when one replica is killed with SIGKILL mid-run."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from pathlib import Path

import httpx
import orjson
import pytest

from tests.support.backends import copy_into_postgres
from tests.support.balancer import running_haproxy
from tests.support.live_server import LiveServer, running_server
from tests.support.load import block_request, run_load, tally
from tests.support.postgres import PostgresServer
from tests.support.sample_facts import sample_facts

pytestmark = [pytest.mark.live, pytest.mark.deep]
README = Path(__file__).resolve().parents[2] / "README.md"
JSON = {"content-type": "application/json"}


def readme_examples() -> list[tuple[str, bytes]]:
    """(path, body) of every curl example in the README."""
    text = README.read_text(encoding="utf-8")
    examples = [("/", body.encode()) for body in re.findall(r"^rpc '(\{.*\})'$", text, re.MULTILINE)]
    examples += [
        (path or "/", body.encode())
        for path, body in re.findall(r"curl -s localhost:3030(/\w+)? -H [^\n]*\\\n\s+-d '(\{.*\})'", text)
    ]
    return examples


def answer(server: LiveServer, path: str, body: bytes) -> tuple[int, str, bytes]:
    response = httpx.post(server.url + path, content=body, headers=JSON, timeout=10)
    return response.status_code, response.headers["content-type"], response.content


def test_readme_examples_answer_byte_identically_from_postgresql(
    postgres: PostgresServer, sample_sqlite: Path, tmp_path: Path
) -> None:
    examples = readme_examples()
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(examples) == sum(line.startswith(("rpc '", "curl -s localhost:3030")) for line in lines)
    url = copy_into_postgres(postgres, sample_sqlite)  # `nearrpc store copy` into a fresh database
    with (
        running_server(sample_sqlite, tmp_path / "sqlite.log") as sqlite_server,
        running_server(url, tmp_path / "postgresql.log") as postgres_server,
    ):
        for path, body in examples:
            expected = answer(sqlite_server, path, body)
            assert answer(postgres_server, path, body) == expected, (path, body)
            assert expected[0] in (200, 422), (path, body, expected)


def test_two_replicas_behind_haproxy_lose_no_request_when_one_is_killed(
    postgres: PostgresServer, sample_sqlite: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = copy_into_postgres(postgres, sample_sqlite)
    facts = sample_facts()
    bodies = [block_request(height) for height in facts.block_heights]
    bodies += [
        orjson.dumps({"jsonrpc": "2.0", "id": account, "method": "EXPERIMENTAL_view_account",
                      "params": {"account_id": account, "finality": "final"}})
        for account in facts.accounts_at_genesis[:20]
    ]  # fmt: skip
    with (
        running_server(url, tmp_path / "replica1.log") as first,
        running_server(url, tmp_path / "replica2.log") as second,
    ):
        for body in bodies[::7]:  # any replica answers the same bytes
            assert answer(first, "/", body) == answer(second, "/", body)
        replicas = [first.url.removeprefix("http://"), second.url.removeprefix("http://")]
        with running_haproxy(tmp_path, replicas) as balancer:
            killed_at: list[float] = []

            def kill_first() -> None:
                started = time.monotonic()
                time.sleep(1.0)
                os.kill(first.pid, signal.SIGKILL)
                killed_at.append(time.monotonic() - started)

            killer = threading.Thread(target=kill_first)
            started = time.monotonic()
            killer.start()
            outcomes = run_load(balancer, bodies, threads=8, total=3000)
            seconds = time.monotonic() - started
            killer.join()
            after = httpx.post(balancer, content=bodies[0], headers=JSON)
    counts = tally(outcomes)
    failed = [outcome for outcome in outcomes if outcome.status != 200 or outcome.what != "result"]
    after_kill = sum(1 for outcome in outcomes if outcome.at > killed_at[0])
    figures = (
        f"replica failover: {len(outcomes)} requests through HAProxy in {seconds:.1f} s "
        f"({len(outcomes) / seconds:.0f}/s, 8 threads); replica 1 killed (SIGKILL) at {killed_at[0]:.2f} s; "
        f"{after_kill} requests after the kill; failed at the client: {len(failed)}; outcomes {dict(counts)}"
    )
    request.node.user_properties.append(("terminal_summary", figures))  # printed at the end of the run
    assert len(outcomes) == 3000 and after_kill >= 500
    assert not failed, failed[:5]
    assert after.status_code == 200
