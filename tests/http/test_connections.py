"""Every connection ends, and a normal client is answered at the cap on connections.

Real sockets against a real `nearrpc serve`, with short limits set by its flags: a connection
that sends nothing, half its headers or half its body is closed (a request cut short is
answered 408 first); one that asked and then idles is closed too. At the cap, the connections
waiting longest on their clients give way to new ones, so a normal client still gets its
answer while slow or idle connections hold every slot.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.fork.upstream_proxy import rpc, upstream_proxy
from tests.support.cli import nearrpc
from tests.support.serve_process import Served, serving

pytestmark = [pytest.mark.live, pytest.mark.deep]

KEEP_ALIVE = 1.0
REQUEST = 4.0  # well apart from KEEP_ALIVE: each deadline is told from the other
CAP = 24
# generous: what must happen after 1-2 s happens well within this, or never (uvicorn alone)
PATIENCE = 20.0
BLOCK = b'{"jsonrpc":"2.0","id":1,"method":"block","params":{"finality":"final"}}'


@pytest.fixture(scope="module")
def served(sample_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("connections")
    store = folder / "store.sqlite"
    shutil.copyfile(sample_store, store)
    flags = ("--keep-alive-timeout", KEEP_ALIVE, "--request-timeout", REQUEST, "--max-connections", CAP)
    with serving("--store", store, *map(str, flags), log=folder / "log") as running:
        yield running


def _connect(served: Served) -> socket.socket:
    address = urlsplit(served.url)
    assert address.hostname is not None and address.port is not None
    sock = socket.create_connection((address.hostname, address.port), timeout=PATIENCE)
    return sock


def _until_closed(sock: socket.socket) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and the seconds it took;
    fails when it stays open for PATIENCE seconds."""
    started = time.monotonic()
    received = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            pytest.fail(f"still open after {PATIENCE} s; received {received!r}")
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return received, time.monotonic() - started
        received += chunk


def _head(body: bytes = BLOCK, length: int | None = None) -> bytes:
    size = len(body) if length is None else length
    return b"POST / HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % size


def test_a_connection_that_sends_nothing_is_closed(served: Served) -> None:
    with _connect(served) as sock:
        received, seconds = _until_closed(sock)
    assert received == b"" and KEEP_ALIVE * 0.5 <= seconds < REQUEST * 0.75


def test_half_sent_headers_are_answered_408_and_closed(served: Served) -> None:
    with _connect(served) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nhost: t\r\ncontent-")
        received, seconds = _until_closed(sock)
    assert received.startswith(b"HTTP/1.1 408 "), received
    assert seconds >= REQUEST * 0.5


def test_a_half_sent_body_is_answered_408_and_closed(served: Served) -> None:
    with _connect(served) as sock:
        sock.sendall(_head(length=len(BLOCK)) + BLOCK[:20])
        received, _ = _until_closed(sock)
    assert received.startswith(b"HTTP/1.1 408 "), received


def test_a_body_trickled_slower_than_the_request_timeout_is_cut(served: Served) -> None:
    """The deadline runs from the request's first byte: sending a byte now and then does not
    keep a request open."""
    with _connect(served) as sock:
        sock.sendall(_head(length=len(BLOCK)))
        started = time.monotonic()
        with contextlib.suppress(OSError):
            for byte in BLOCK[:-1]:
                sock.sendall(bytes([byte]))
                time.sleep(0.2)
                if time.monotonic() - started > PATIENCE:
                    break
        received, _ = _until_closed(sock)
    assert received.startswith(b"HTTP/1.1 408 "), received
    assert time.monotonic() - started < PATIENCE


def test_a_connection_idle_after_its_answer_is_closed(served: Served) -> None:
    with _connect(served) as sock:
        sock.sendall(_head() + BLOCK)
        received, _ = _until_closed(sock)
    assert received.startswith(b"HTTP/1.1 200 ") and b'"result"' in received


def test_at_the_cap_a_normal_client_is_answered(served: Served) -> None:
    """CAP + 10 connections that send nothing or half a request: the oldest give way, and a
    normal client's requests are answered; the server keeps no more than CAP open."""
    holders: list[socket.socket] = []
    try:
        for index in range(CAP + 10):
            sock = _connect(served)
            if index % 2:
                sock.sendall(b"POST / HTTP/1.1\r\nhost: t\r\n")  # half its headers
            holders.append(sock)
        with httpx.Client(base_url=served.url, timeout=PATIENCE) as http:
            for _ in range(3):
                answer = http.post("/", content=BLOCK, headers={"content-type": "application/json"})
                assert answer.status_code == 200 and answer.json()["result"]["header"]["height"] > 0
        closed = 0
        for sock in holders[:10]:  # the oldest: closed to make room
            sock.settimeout(PATIENCE)
            with contextlib.suppress(ConnectionResetError):
                if sock.recv(65536) == b"":
                    closed += 1
        assert closed == 10
    finally:
        for sock in holders:
            sock.close()


def test_max_connections_above_the_open_file_limit_is_refused(tmp_path: Path) -> None:
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        pytest.skip("no open-file limit on this machine")
    result = nearrpc("serve", "--store", str(tmp_path / "none.sqlite"), "--max-connections", str(soft))
    assert result.returncode == 2
    assert result.stderr.startswith(f"nearrpc serve: --max-connections {soft} is more than the open-file limit")


def test_at_the_cap_with_every_other_connection_being_answered_a_new_one_gets_503(
    sample_store: Path, tmp_path: Path
) -> None:
    """A request being answered is never cut to make room: a fork whose upstream answers slowly
    holds its cap of 3 connections with misses under way, and a fourth is answered 503 at once
    (a balancer retries it elsewhere); the three are then answered in full, though answering
    takes longer than the request timeout (the server's time is not the client's)."""
    with (
        serving("--store", sample_store, log=tmp_path / "upstream.log") as upstream,
        upstream_proxy(upstream.url + "/") as proxy,
        serving("--store", tmp_path / "fork.sqlite", "--upstream", proxy.url, "--max-connections", "3",
                "--miss-timeout", "30", "--request-timeout", "1", log=tmp_path / "fork.log") as fork,
        ThreadPoolExecutor(max_workers=3) as pool,
    ):
        proxy.delay = 3.0
        asked = proxy.total()
        misses = [pool.submit(rpc, fork.url, "block", {"block_id": height}) for height in (50, 51, 52)]
        deadline = time.monotonic() + PATIENCE
        while proxy.total() < asked + 3 and time.monotonic() < deadline:  # all three under way
            time.sleep(0.05)
        with _connect(fork) as sock:
            received, _ = _until_closed(sock)
        assert received.startswith(b"HTTP/1.1 503 ") and b"retry-after: 1" in received, received
        proxy.delay = 0.0
        answers = [miss.result() for miss in misses]
    assert [answer.status_code for answer in answers] == [200, 200, 200]
    assert [answer.json()["result"]["header"]["height"] for answer in answers] == [50, 51, 52]


def _asked(sock: socket.socket) -> bytes:
    """One request on a kept-alive connection, and its whole answer."""
    sock.sendall(_head() + BLOCK)
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(65536)
    head, _, body = received.partition(b"\r\n\r\n")
    length = int(next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))[15:])
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def test_at_the_cap_the_connection_idle_longest_since_its_answer_gives_way(
    sample_store: Path, tmp_path: Path
) -> None:
    """Long limits, so no deadline acts: three connections at a cap of three are answered in turn
    (the last one opened first) and then idle. A fourth connection closes the one idle longest
    since its answer, not the one opened first nor the newest, and is answered; the others stay
    open and are answered again."""
    flags = ("--keep-alive-timeout", "60", "--request-timeout", "60", "--max-connections", "3")
    with serving("--store", sample_store, *flags, log=tmp_path / "log") as capped:
        first, second, third = (_connect(capped) for _ in range(3))
        try:
            for sock in (third, second, first):
                assert _asked(sock).startswith(b"HTTP/1.1 200 ")
            with _connect(capped) as fourth:
                assert _asked(fourth).startswith(b"HTTP/1.1 200 ")
                third.settimeout(PATIENCE)
                received, _ = _until_closed(third)
                assert received == b""
                for sock in (second, first, fourth):
                    assert _asked(sock).startswith(b"HTTP/1.1 200 ")
        finally:
            for sock in (first, second, third):
                sock.close()


def test_without_a_cap_given_the_cap_is_below_the_open_file_limit(sample_store: Path, tmp_path: Path) -> None:
    """An open-file limit of 300 leaves room for 44 connections (256 files are kept for the
    store and logs): the 45th and later close the oldest idle ones at once, long before their
    keep-alive deadline."""
    flags = ("--keep-alive-timeout", "60", "--request-timeout", "60")
    with serving("--store", sample_store, *flags, wrapper=("prlimit", "--nofile=300:300"),
                 log=tmp_path / "log") as capped:  # fmt: skip
        holders = [_connect(capped) for _ in range(50)]
        try:
            with _connect(capped) as client:
                assert _asked(client).startswith(b"HTTP/1.1 200 ")
            for sock in holders[:5]:  # the oldest: closed to make room
                received, seconds = _until_closed(sock)
                assert received == b"" and seconds < PATIENCE
        finally:
            for sock in holders:
                sock.close()
