"""`nearrpc serve --workers N`: a listening socket per worker on one port (SO_REUSEPORT). A burst
of new connections is spread by the kernel over the sockets: every one must be answered (a
socket no worker accepts on would leave its share hanging) and every worker must get some.

That a shared socket lets one busy worker take a whole burst shows only under load (wrk, 8
connections, 2 workers: all 8 on one worker in one round of three); bench/workers_bench.py
measures that, not this test."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import orjson
import pytest

from tests.support.serve_process import Served, serving

pytestmark = pytest.mark.live

CONNECTIONS = 16
BODY = {"jsonrpc": "2.0", "id": 1, "method": "block", "params": {"finality": "final"}}
CLIENT = re.compile(r"^(?P<client>\S+) - \"POST / ")


def _workers_started(served: Served, count: int) -> None:
    deadline = time.monotonic() + 60
    while sum("Application startup complete" in line for line in served.log_lines()) < count:
        assert time.monotonic() < deadline, served.log_lines()
        time.sleep(0.1)


def _access_records(served: Served, count: int) -> list[dict[str, str]]:
    """The JSON log records once `count` access lines are in (a worker logs after it answers)."""
    deadline = time.monotonic() + 10
    while True:
        records = [json.loads(line) for line in served.log_lines() if line.startswith("{")]
        if sum(record["logger"] == "uvicorn.access" for record in records) >= count or time.monotonic() > deadline:
            return records
        time.sleep(0.02)


def _burst(url: str) -> None:
    """Open every connection at once (as a load generator does), then send one request on each."""
    address = urlsplit(url)
    body = orjson.dumps(BODY)
    request = (
        f"POST / HTTP/1.1\r\nHost: {address.netloc}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    assert address.hostname is not None and address.port is not None
    connections = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(CONNECTIONS)]
    try:
        for connection in connections:  # all handshakes under way before any completes
            connection.setblocking(False)
            connection.connect_ex((address.hostname, address.port))
        for connection in connections:
            connection.settimeout(30)
            connection.sendall(request)
        for connection in connections:
            assert connection.recv(64).startswith(b"HTTP/1.1 200 ")
    finally:
        for connection in connections:
            connection.close()


def test_a_burst_of_connections_reaches_every_worker(sample_store: Path, tmp_path: Path) -> None:
    args = ("--store", sample_store, "--workers", "2", "--access-log", "--log-format", "json")
    with serving(*args, log=tmp_path / "serve.log") as served:
        _workers_started(served, 2)
        _burst(served.url)
        records = _access_records(served, CONNECTIONS)
    # the access log names the client's address:port, one per connection, and the worker's pid
    connections = {
        (match["client"], record["pid"])
        for record in records
        if record["logger"] == "uvicorn.access" and (match := CLIENT.match(record["message"]))
    }
    per_worker = Counter(pid for _, pid in connections)
    print(f"\nconnections per worker: {sorted(per_worker.values())}")
    assert sum(per_worker.values()) == CONNECTIONS and len(per_worker) == 2
    # a binomial spread: each worker gets at least 2 of 16 unless something holds it back (p < 0.1%)
    assert min(per_worker.values()) >= 2, per_worker


def _children(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        if int(fields[1]) == pid:  # the parent's pid, after the state
            found.add(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_workers_end_with_a_killed_supervisor(sample_store: Path, tmp_path: Path) -> None:
    # a supervisor killed with SIGKILL (an OOM kill, kill -9) must not leave its workers serving
    # on the port, where they would answer from a store nobody manages and refuse a restart
    with serving("--store", sample_store, "--workers", "2", log=tmp_path / "serve.log") as served:
        _workers_started(served, 2)
        workers = _children(served.pid)
        assert len(workers) >= 2, workers
        os.kill(served.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while any(_alive(pid) for pid in workers):
            assert time.monotonic() < deadline, [pid for pid in workers if _alive(pid)]
            time.sleep(0.1)
        with socket.socket() as probe:  # the port is free for the restart
            probe.bind(("127.0.0.1", int(served.url.rsplit(":", 1)[1])))
