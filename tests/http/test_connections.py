"""Every connection ends, and a normal client is answered at the cap on connections.

Real sockets against a real `nearrpc serve`, with short limits set by its flags: a connection
that sends nothing, half its headers or half its body is closed (a request cut short is
answered 408 first); one that asked and then idles is closed too. At the cap, a connection
waiting on its client past the grace period gives way to a new one, the longest waiting first;
a connection that just connected or is being answered never does, so a flood of new
connections is refused at once (503) and a client already in keeps its connection. One peer
address holds at most its share of the cap (half by default): past it its new connections are
refused at once, so clients from other addresses (127.0.0.x sources here) get in during its
flood, and at the cap the connections of the address holding the most give way first.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from nearrpc.http.connections import ConnectionLimits
from tests.fork.upstream_proxy import rpc, upstream_proxy
from tests.support.cli import nearrpc
from tests.support.serve_process import Served, serving

pytestmark = [pytest.mark.live, pytest.mark.deep]

KEEP_ALIVE = 1.0
REQUEST = 4.0  # well apart from KEEP_ALIVE: each deadline is told from the other
CAP = 24
GRACE = ConnectionLimits().grace  # how long a connection waits on its client before it may give way
# generous: what must happen after 1-2 s happens well within this, or never (uvicorn alone)
PATIENCE = 20.0
BLOCK = b'{"jsonrpc":"2.0","id":1,"method":"block","params":{"finality":"final"}}'


@pytest.fixture(scope="module")
def served(sample_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("connections")
    store = folder / "store.sqlite"
    shutil.copyfile(sample_store, store)
    flags = ("--keep-alive-timeout", KEEP_ALIVE, "--request-timeout", REQUEST, "--max-connections", CAP,
             "--max-connections-per-address", CAP)  # every test here connects from one address
    with serving("--store", store, *map(str, flags), log=folder / "log") as running:
        yield running


def _connect(served: Served, source: str | None = None) -> socket.socket:
    """A connection to the server, from the loopback address `source` (127.0.0.2, ...) when given."""
    address = urlsplit(served.url)
    assert address.hostname is not None and address.port is not None
    bound = None if source is None else (source, 0)
    sock = socket.create_connection((address.hostname, address.port), timeout=PATIENCE, source_address=bound)
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


def _refused_at_once(sock: socket.socket) -> bool:
    """Whether the server answered 503 and closed `sock` before reading anything of it."""
    sock.settimeout(PATIENCE)
    received, seconds = _until_closed(sock)
    return received.startswith(b"HTTP/1.1 503 ") and b"retry-after: 1" in received and seconds < GRACE


def test_at_the_cap_new_connections_are_refused_and_a_normal_client_is_answered(served: Served) -> None:
    """CAP + 10 connections that send nothing or half a request: the 10 past the cap are refused
    at once (503, nothing read; none of those in gives way, as none has waited past the grace
    period), and a normal client is answered once they have (closed to make room, or at their
    own deadline)."""
    holders: list[socket.socket] = []
    try:
        for index in range(CAP + 10):
            sock = _connect(served)
            if index % 2:
                sock.sendall(b"POST / HTTP/1.1\r\nhost: t\r\n")  # half its headers
            holders.append(sock)
        assert all(_refused_at_once(sock) for sock in holders[CAP:])
        time.sleep(GRACE)
        with httpx.Client(base_url=served.url, timeout=PATIENCE) as http:
            for _ in range(3):
                answer = http.post("/", content=BLOCK, headers={"content-type": "application/json"})
                assert answer.status_code == 200 and answer.json()["result"]["header"]["height"] > 0
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


def test_a_share_per_address_above_the_cap_is_refused_in_one_line(tmp_path: Path) -> None:
    store = str(tmp_path / "none.sqlite")
    result = nearrpc("serve", "--store", store, "--max-connections", "10", "--max-connections-per-address", "11")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "nearrpc serve: --max-connections-per-address 11 is more than --max-connections 10: at most 10\n"
    )


def test_a_share_per_address_above_the_cap_from_the_open_file_limit_is_refused(tmp_path: Path) -> None:
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft > 1_000_000:
        pytest.skip("no open-file limit under the flag's bound on this machine")
    cap = soft - 256  # what the open-file limit leaves for connections
    result = nearrpc("serve", "--store", str(tmp_path / "none.sqlite"), "--max-connections-per-address", str(cap + 1))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"nearrpc serve: --max-connections-per-address {cap + 1} is more than the connection cap ({cap}, from the "
        f"open-file limit): at most {cap}\n"
    )


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
                "--max-connections-per-address", "3", "--miss-timeout", "30", "--request-timeout", "1",
                log=tmp_path / "fork.log") as fork,
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
    (the last one opened first) and then idle. A fourth connection at once is refused: none of
    them has idled past the grace period. Past it, a fifth closes the one idle longest since its
    answer, not the one opened first nor the newest, and is answered; the others stay open and
    are answered again."""
    flags = ("--keep-alive-timeout", "60", "--request-timeout", "60", "--max-connections", "3",
             "--max-connections-per-address", "3")
    with serving("--store", sample_store, *flags, log=tmp_path / "log") as capped:
        first, second, third = (_connect(capped) for _ in range(3))
        try:
            for sock in (third, second, first):
                assert _asked(sock).startswith(b"HTTP/1.1 200 ")
            with _connect(capped) as fourth:
                assert _refused_at_once(fourth)
            time.sleep(GRACE)
            with _connect(capped) as fifth:
                assert _asked(fifth).startswith(b"HTTP/1.1 200 ")
                third.settimeout(PATIENCE)
                received, _ = _until_closed(third)
                assert received == b""
                for sock in (second, first, fifth):
                    assert _asked(sock).startswith(b"HTTP/1.1 200 ")
        finally:
            for sock in (first, second, third):
                sock.close()


def test_a_flood_of_connections_never_closes_a_client_being_answered_or_just_idle(
    sample_store: Path, tmp_path: Path
) -> None:
    """Issue 43 item 6, scaled down: a client keeps one connection and asks on it, then 30
    connections arrive at once at a cap of 6 (an attacker's flood). Those past the cap are
    refused at once; the client's connection, idle for less than the grace period between its
    requests, is never the one closed, and its next requests are answered on it."""
    flags = ("--keep-alive-timeout", "60", "--request-timeout", "60", "--max-connections", "6",
             "--max-connections-per-address", "6")
    with serving("--store", sample_store, *flags, log=tmp_path / "log") as capped:
        client = _connect(capped)
        flood: list[socket.socket] = []
        try:
            assert _asked(client).startswith(b"HTTP/1.1 200 ")
            flood = [_connect(capped) for _ in range(30)]
            refused = sum(_refused_at_once(sock) for sock in flood[5:])
            for _ in range(3):
                assert _asked(client).startswith(b"HTTP/1.1 200 ")  # still open: answered on it
            assert refused == 25
        finally:
            client.close()
            for sock in flood:
                sock.close()


def test_without_a_cap_given_the_cap_is_below_the_open_file_limit(sample_store: Path, tmp_path: Path) -> None:
    """An open-file limit of 300 leaves room for 44 connections (256 files are kept for the
    store and logs), 22 of them (half) from one address: of 25 from each of two addresses the
    23rd and later are refused at once, long before any keep-alive deadline; past the grace
    period a client from a third address takes the place of the oldest idle one."""
    flags = ("--keep-alive-timeout", "60", "--request-timeout", "60")
    with serving("--store", sample_store, *flags, wrapper=("prlimit", "--nofile=300:300"),
                 log=tmp_path / "log") as capped:  # fmt: skip
        first = [_connect(capped, "127.0.0.2") for _ in range(25)]
        second = [_connect(capped, "127.0.0.3") for _ in range(25)]
        holders = first + second
        try:
            assert all(_refused_at_once(sock) for sock in first[22:] + second[22:])
            time.sleep(GRACE)
            with _connect(capped, "127.0.0.4") as client:
                assert _asked(client).startswith(b"HTTP/1.1 200 ")
            received, seconds = _until_closed(holders[0])  # the oldest: closed to make room
            assert received == b"" and seconds < PATIENCE
        finally:
            for sock in holders:
                sock.close()


def test_a_client_that_never_reads_its_answers_does_not_hold_its_connection(
    sample_store: Path, tmp_path: Path
) -> None:
    """A client pipelines many requests and reads none of the answers: once the unsent answers
    fill the socket, the server's answer waits on the client, and nothing of it leaves. After
    the grace period that connection gives way to a new one at the cap, and after the request
    timeout it is dropped with what is unsent (closing it would wait on the client for good)."""
    flags = ("--keep-alive-timeout", "60", "--request-timeout", "3", "--max-connections", "1")  # a share of 1 too
    config = b'{"jsonrpc":"2.0","id":1,"method":"EXPERIMENTAL_protocol_config","params":{"finality":"final"}}'
    request = _head(config) + config
    with serving("--store", sample_store, *flags, log=tmp_path / "log") as capped:
        stalled = _connect(capped)
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            stalled.settimeout(0.5)
            with contextlib.suppress(OSError):
                for _ in range(2000):  # until the server stops reading them
                    stalled.sendall(request * 10)
            time.sleep(GRACE + 1.0)  # stalled past the grace period (sweeps note it within a tick)
            with _connect(capped) as newcomer:
                assert _asked(newcomer).startswith(b"HTTP/1.1 200 ")
        finally:
            stalled.close()


def test_an_address_holding_its_share_is_refused_while_others_get_in(sample_store: Path, tmp_path: Path) -> None:
    """A cap of 8 gives one address 4 (half, the default): of 8 connections from 127.0.0.2 the
    last 4 are refused at once though the server has room, the 4 in are kept, and a client
    from 127.0.0.3 gets in and is answered on connections of its own."""
    flags = ("--keep-alive-timeout", "60", "--request-timeout", "60", "--max-connections", "8")
    with serving("--store", sample_store, *flags, log=tmp_path / "log") as capped:
        held = [_connect(capped, "127.0.0.2") for _ in range(8)]
        clients: list[socket.socket] = []
        try:
            assert [_refused_at_once(sock) for sock in held[4:]] == [True] * 4
            clients = [_connect(capped, "127.0.0.3") for _ in range(3)]
            for sock in clients * 2:
                assert _asked(sock).startswith(b"HTTP/1.1 200 ")
            for sock in held[:4]:  # still open: nothing was closed to let the client in
                sock.settimeout(0.2)
                with pytest.raises(TimeoutError):
                    sock.recv(1)
        finally:
            for sock in held + clients:
                sock.close()


def test_at_the_cap_the_address_holding_the_most_gives_way_first(sample_store: Path, tmp_path: Path) -> None:
    """A client from 127.0.0.3 is answered and idles; then 127.0.0.2 fills the cap of 4 with 3
    connections that send nothing. Past the grace period a newcomer from 127.0.0.4 closes the
    oldest of 127.0.0.2's (which holds the most), not the client's, idle longer."""
    flags = ("--keep-alive-timeout", "60", "--request-timeout", "60", "--max-connections", "4",
             "--max-connections-per-address", "3")
    with serving("--store", sample_store, *flags, log=tmp_path / "log") as capped:
        client = _connect(capped, "127.0.0.3")
        held: list[socket.socket] = []
        try:
            assert _asked(client).startswith(b"HTTP/1.1 200 ")
            held = [_connect(capped, "127.0.0.2") for _ in range(3)]
            time.sleep(GRACE + 0.2)
            with _connect(capped, "127.0.0.4") as newcomer:
                assert _asked(newcomer).startswith(b"HTTP/1.1 200 ")
            received, _ = _until_closed(held[0])
            assert received == b""
            assert _asked(client).startswith(b"HTTP/1.1 200 ")  # still open: answered on it
        finally:
            client.close()
            for sock in held:
                sock.close()


def _flood(served: Served, source: str, slow: bool, stop: threading.Event) -> None:
    """16 connections from `source`, each opened again as soon as it is closed (or refused):
    idle, or sending its headers a byte every 0.3 s (issue 43's idle and slow floods, scaled)."""
    head = b"POST / HTTP/1.1\r\nhost: attacker\r\nx-padding: " + b"a" * 200
    held: list[tuple[socket.socket, int] | None] = [None] * 16
    last_byte = 0.0
    while not stop.wait(0.02):
        send = slow and time.monotonic() - last_byte >= 0.3
        if send:
            last_byte = time.monotonic()
        for index, entry in enumerate(held):
            try:
                if entry is None:
                    entry = held[index] = (_connect(served, source), 0)
                    entry[0].setblocking(False)  # a recv with a timeout would wait for data first
                sock, sent = entry
                with contextlib.suppress(BlockingIOError):
                    sock.recv(4096, socket.MSG_DONTWAIT)
                    raise ConnectionResetError  # closed, or refused (503): open it again
                if send:
                    sock.sendall(head[sent : sent + 1])
                    held[index] = (sock, (sent + 1) % len(head))
            except OSError:
                if entry is not None:
                    entry[0].close()
                held[index] = None
    for entry in held:
        if entry is not None:
            entry[0].close()


def _new_connection_answered(served: Served, source: str) -> bytes:
    """The status line a new connection from `source` gets for `block` (b"" when cut)."""
    received = b""
    with contextlib.suppress(OSError), _connect(served, source) as sock:
        sock.sendall(_head() + BLOCK)
        while b"\r\n" not in received:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    return received.partition(b"\r\n")[0]


@pytest.mark.parametrize("slow", [False, True], ids=["idle", "slow"])
def test_during_a_flood_from_one_address_new_clients_from_another_get_in(
    sample_store: Path, tmp_path: Path, slow: bool
) -> None:
    """Issue 43's last open item, scaled down: 16 connections from 127.0.0.2, idle or sending a
    byte now and then, reopened as soon as closed, against a cap of 8. Each stalled connection
    the server closed to make room went to the flood's next reconnect; with a share per address
    the flood holds its 4 and every new connection of a client from 127.0.0.3 is answered."""
    flags = ("--keep-alive-timeout", "60", "--request-timeout", "60", "--max-connections", "8")
    with serving("--store", sample_store, *flags, log=tmp_path / "log") as capped:
        stop = threading.Event()
        flood = threading.Thread(target=_flood, args=(capped, "127.0.0.2", slow, stop))
        flood.start()
        try:
            time.sleep(GRACE + 0.5)  # the flood's connections have stalled past the grace period
            answers = []
            for _ in range(10):
                answers.append(_new_connection_answered(capped, "127.0.0.3"))
                time.sleep(0.2)
        finally:
            stop.set()
            flood.join()
    assert answers == [b"HTTP/1.1 200 OK"] * 10, answers
