"""Every connection ends: uvicorn's HTTP protocol with deadlines and a cap on connections.

uvicorn times out a connection only after it has answered on it: a client that connects and
sends nothing, or sends half its headers or half its body, held its connection (and a file
descriptor) for good, and enough of them left no descriptor for anyone else. Here:

- a connection with no request under way (before its first, between two) is closed after
  `keep_alive` seconds;
- a request whose headers and body have not all arrived `request` seconds after its first
  byte is answered 408 (when nothing was answered yet) and closed; the time the server takes
  to answer is not counted;
- a connection whose client reads nothing of its answer for `request` seconds is dropped with
  what is unsent (closing it would wait for the client for good);
- at most `max_connections` per process (below its open-file limit). At the cap a new
  connection takes the place of the one that has waited longest on its client (idle, sending
  a request slowly, or not reading its answer), if that one has waited at least `grace` seconds; otherwise the
  new one is answered 503 and closed before anything of it is read. A connection that just
  connected, or whose request is being answered, never gives way: a flood of new connections
  is refused at the door rather than paid for by the clients already in;
- at most `max_per_address` of them from one peer address (by default half the cap): a new
  connection from an address that holds its share takes the place of one of its own that has
  waited past the grace period, else it is answered 503 at once, however many places are
  free; and at the cap the connections that give way are those of the address holding the
  most. Without it one address that reconnects as fast as places free up (an idle
  or slow-sending flood) took each place an evicted connection of its own left, before any
  other client's new connection came; with it the other half of the places is always another
  address's. An IPv6 peer counts by its /64 (one host commonly holds a whole /64), an
  IPv4-mapped one as its IPv4 address.

A connection lost before its answer stops the view call its request waits for
(`methods.view_calls.stop_calls_of`): nobody would read the answer, and the execution would hold
a worker to its deadline. So does a server that begins to stop (uvicorn asks each connection to
shut down, then waits for the requests under way): the call is answered at once that the server
is shutting down. Found only then, by the request's task among the server's.

The hot path: a request costs the guard a few attribute writes and two clock reads, no timer;
the per-address share is a dict of the connections of each address, changed once at accept and
once at close.
The deadlines are kept by one sweep per server every `tick` seconds (a quarter of the shortest
limit, between 50 ms and 1 s) over its connections, and this protocol arms no keep-alive timer of
uvicorn's either (the sweep closes idle connections). `nearrpc serve` sets the limits
(`configure`) before it listens.
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from uvicorn.server import ServerState

from nearrpc.contracts import CANCELLED, SHUTDOWN
from nearrpc.http.single_write import SingleWriteHttpProtocol
from nearrpc.methods.view_calls import stop_calls_of


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    keep_alive: float = 15.0  # seconds idle
    request: float = 30.0  # seconds for a request's headers and body to arrive
    max_connections: int = 1024  # per process
    grace: float = 1.0  # seconds a connection waits on its client before it may give way at the cap
    max_per_address: int = 512  # connections one peer address may hold (`address_share` of the cap)

    def tick(self) -> float:
        """The sweep's period: deadlines act within it."""
        return max(0.05, min(1.0, min(self.keep_alive, self.request, self.grace) / 4))


_limits = ConnectionLimits()
_clock: Final = time.monotonic

_REQUEST_TIMEOUT: Final = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
_AT_CAPACITY: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nretry-after: 1\r\nconnection: close\r\n\r\n"
)


def address_share(max_connections: int) -> int:
    """The default share of one peer address: half the cap (at least one), so an address that
    takes all it may still leaves the other half to everyone else."""
    return max(1, max_connections // 2)


def peer_of(peername: object) -> str:
    """The address a connection counts against (transport's `peername`): an IPv4 address, an
    IPv6 one's /64, an IPv4-mapped IPv6 address as its IPv4 address; "" when there is none (a
    Unix socket)."""
    if not isinstance(peername, tuple) or not peername or not isinstance(peername[0], str):
        return ""
    host: str = peername[0]
    if ":" not in host:
        return host
    try:
        address = ipaddress.IPv6Address(host.partition("%")[0])  # without a link-local scope
    except ValueError:
        return host
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.IPv6Network((address, 64), strict=False))


def request_task(tasks: Iterable[asyncio.Task[Any]], cycle: object) -> asyncio.Task[Any] | None:
    """The task running `cycle` (uvicorn runs each request as a task of `cycle.run_asgi`)
    among the server's."""
    for task in tasks:
        frame = getattr(task.get_coro(), "cr_frame", None)
        if frame is not None and frame.f_locals.get("self") is cycle:
            return task
    return None


def configure(limits: ConnectionLimits) -> None:
    """The limits of the connections this process accepts from now on."""
    global _limits
    _limits = limits


class _Sweep:
    """One server's deadlines: every tick, each connection past one is closed. It runs while the
    server has connections and starts again with the next one."""

    def __init__(self, loop: asyncio.AbstractEventLoop, connections: set[Any]) -> None:
        self._loop = loop
        self._connections = connections
        self._handle: asyncio.TimerHandle | None = None

    def ensure(self) -> None:
        if self._handle is None:
            self._handle = self._loop.call_later(_limits.tick(), self._run)

    def _run(self) -> None:
        self._handle = None
        now = _clock()
        limits = _limits
        for protocol in tuple(self._connections):
            if isinstance(protocol, GuardedHttpProtocol):
                protocol.check_deadlines(now, limits)
        if self._connections:
            self.ensure()


class _Server:
    """One server's bookkeeping of its connections: its sweep, and those each peer address holds."""

    __slots__ = ("held", "sweep")

    def __init__(self, loop: asyncio.AbstractEventLoop, connections: set[Any]) -> None:
        self.sweep = _Sweep(loop, connections)
        # peer address -> its connections among the server's (never empty: an address holding none is not in it)
        self.held: dict[str, set[GuardedHttpProtocol]] = {}


_servers: weakref.WeakKeyDictionary[ServerState, _Server] = weakref.WeakKeyDictionary()


class GuardedHttpProtocol(SingleWriteHttpProtocol):
    """`uvicorn --http nearrpc.http.connections:GuardedHttpProtocol`."""

    # since when the connection waits on its client (connected, or answered and idle; a request
    # arriving slowly keeps it): None while a whole request is being answered
    _waiting_since: float | None = None
    _request_began: float | None = None  # a request's first byte, until all of it has arrived
    _refused = False  # closed at the cap before anything was read
    # the sweep's view of the answer leaving: bytes unsent at the last tick, and since when none left
    _unsent = 0
    _stalled_since: float | None = None
    # the peer address this connection counts against in `_held` (its server's), until released
    _peer: str | None = None
    _held: dict[str, set[GuardedHttpProtocol]]

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        now = _clock()
        server = _servers.get(self.server_state)
        if server is None:
            server = _servers[self.server_state] = _Server(self.loop, self.connections)
        held = server.held
        peer = peer_of(transport.get_extra_info("peername"))
        own = held.get(peer)
        if own is not None and len(own) >= _limits.max_per_address:
            room = self._make_room(now, own, held)  # one of its own gives way, or none: neither count grows
        else:
            room = len(self.connections) < _limits.max_connections or self._make_room(now, self.connections, held)
        if not room:
            self._refused = True  # never one of the server's connections: nothing of it is read
            transport.write(_AT_CAPACITY)
            transport.close()
            return
        if own is None:
            own = held[peer] = set()
        own.add(self)
        self._peer, self._held = peer, held
        super().connection_made(transport)
        self._waiting_since = now
        server.sweep.ensure()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._refused:
            return
        self._release()
        self._waiting_since = self._request_began = None
        self._stop_call(CANCELLED)
        super().connection_lost(exc)

    def shutdown(self) -> None:
        self._stop_call(SHUTDOWN)
        super().shutdown()

    def _stop_call(self, reason: str) -> None:
        """Stop the view call of the request under way here, if any."""
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            task = request_task(self.tasks, cycle)
            if task is not None:
                stop_calls_of(task, reason)

    # -- per request: attribute writes only

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._request_began = _clock()  # its place among the waiting stays: since it went idle

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._request_began = self._waiting_since = None  # whole: answering it is the server's time

    def on_response_complete(self) -> None:
        # uvicorn's (0.54.0, pinned) without its keep-alive timer: the sweep closes idle connections
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self.flow.resume_reading()
        if self.pipeline:
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
        else:
            self._waiting_since = _clock()  # idle, or the next request arriving: on its client

    # -- the sweep and the cap

    def check_deadlines(self, now: float, limits: ConnectionLimits) -> None:
        """Close this connection if it is past a deadline (the sweep's, each tick)."""
        transport = self.transport
        unsent = transport.get_write_buffer_size()
        if unsent and unsent == self._unsent:  # nothing of the answer left since the last tick
            if self._stalled_since is None:
                self._stalled_since = now
            elif now - self._stalled_since >= limits.request:
                transport.abort()  # a client that does not read: close() would wait on it for good
                return
        else:
            self._stalled_since = None
        self._unsent = unsent
        if transport.is_closing():
            return
        began = self._request_began
        if began is not None:
            if now - began >= limits.request:
                if not self._answering():
                    transport.write(_REQUEST_TIMEOUT)
                transport.close()
        elif self._waiting_since is not None and now - self._waiting_since >= limits.keep_alive and not unsent:
            transport.close()  # idle (an answer still leaving is not idle)

    def _answering(self) -> bool:
        """Whether an answer is being written on this connection (a 408 would break into it)."""
        cycle = self.cycle
        return cycle is not None and cycle.response_started and not cycle.response_complete

    def _release(self) -> None:
        """No longer count this connection against its peer address (once: at its eviction or loss)."""
        peer = self._peer
        if peer is None:
            return
        self._peer = None
        own = self._held[peer]
        own.discard(self)
        if not own:
            del self._held[peer]

    def _make_room(self, now: float, among: Iterable[Any], held: dict[str, set[GuardedHttpProtocol]]) -> bool:
        """Close one of `among` (the server's connections at the cap, or those of an address at
        its share) waiting on its client (idle, sending slowly, or not reading its answer) past
        the grace period: of the peer address holding the most connections, the one that has
        waited longest; whether one was closed."""
        grace = min(_limits.grace, _limits.keep_alive)
        oldest: GuardedHttpProtocol | None = None
        since = now - grace
        most = 0  # connections held by the address of `oldest`
        for other in among:
            if not isinstance(other, GuardedHttpProtocol):
                continue
            if other._stalled_since is not None:
                waiting: float | None = other._stalled_since
            elif other._unsent:
                continue  # an answer still leaving: being answered
            else:
                waiting = other._waiting_since
            if waiting is None or waiting > now - grace or other._peer is None:
                continue
            holds = len(held[other._peer])
            if holds > most or (holds == most and waiting <= since):
                oldest, since, most = other, waiting, holds
        if oldest is None:
            return False
        oldest._release()
        oldest._waiting_since = oldest._stalled_since = None
        if oldest.transport.get_write_buffer_size():
            oldest.transport.abort()  # what it does not read is dropped, not waited for
        else:
            oldest.transport.close()
        self.connections.discard(oldest)  # its place is free now, not when its loss is reported
        return True
