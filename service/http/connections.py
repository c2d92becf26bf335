"""Every connection ends: uvicorn's HTTP protocol with deadlines and a cap on connections.

uvicorn times out a connection only after it has answered on it: a client that connects and
sends nothing, or sends half its headers or half its body, held its connection (and a file
descriptor) for good, and enough of them left no descriptor for anyone else. Here:

- a connection with no request under way (before its first, between two) is closed after
  `keep_alive` seconds;
- a request whose headers and body have not all arrived `request` seconds after its first
  byte is answered 408 (when nothing was answered yet) and closed; the time the server takes
  to answer is not counted;
- at most `max_connections` per process (below its open-file limit): at the cap, each new
  connection makes room by closing the one that has waited longest on its client (idle, or
  sending a request slowly). A request being answered is never cut; when every other
  connection is being answered, the new one is answered 503 and closed.

A normal client at the cap so still gets its answer: only connections that are waiting on
their own clients give way. A connection lost before its answer stops the view call its request
waits for (`methods.view_calls.stop_calls_of`): nobody would read the answer, and the execution
would hold a worker to its deadline. So does a server that begins to stop (uvicorn asks each
connection to shut down, then waits for the requests under way): the call is answered at once
that the server is shutting down. Found only then, by the request's task among the server's:
nothing is added to a request's way. `nearrpc serve` sets the limits (`configure`) before it listens.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import OrderedDict
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


_limits = ConnectionLimits()

_REQUEST_TIMEOUT: Final = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
_AT_CAPACITY: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nretry-after: 1\r\nconnection: close\r\n\r\n"
)

# per server: its connections that wait on their client, the longest waiting first
_waiting_by_server: weakref.WeakKeyDictionary[ServerState, OrderedDict[GuardedHttpProtocol, None]] = (
    weakref.WeakKeyDictionary()
)


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


class GuardedHttpProtocol(SingleWriteHttpProtocol):
    """`uvicorn --http nearrpc.http.connections:GuardedHttpProtocol`."""

    _deadline: asyncio.TimerHandle | None = None
    _receiving = False  # a request has begun and not all of it has arrived
    _headers_done = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._waiting = _waiting_by_server.setdefault(self.server_state, OrderedDict())
        self._wait_for_request()
        if len(self.connections) > _limits.max_connections:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self._set_deadline(None)
        self._waiting.pop(self, None)
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

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._receiving, self._headers_done = True, False
        self._set_deadline(_limits.request)  # its place among the waiting stays: since it went idle

    def on_headers_complete(self) -> None:
        self._headers_done = True
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._receiving = False
        self._set_deadline(None)  # the request is whole: answering it is the server's time
        self._waiting.pop(self, None)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        idle = not self._receiving and (self.cycle is None or self.cycle.response_complete)
        if idle and not self.transport.is_closing():
            self._wait_for_request()

    def _wait_for_request(self) -> None:
        self._waiting.pop(self, None)
        self._waiting[self] = None  # the newest to wait
        self._set_deadline(_limits.keep_alive)

    def _set_deadline(self, seconds: float | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = None if seconds is None else self.loop.call_later(seconds, self._deadline_passed)

    def _deadline_passed(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self._receiving and not self._answer_started():
            self.transport.write(_REQUEST_TIMEOUT)
        self.transport.close()

    def _answer_started(self) -> bool:
        """Whether this connection's current request has been answered in part already."""
        return self._headers_done and self.cycle is not None and self.cycle.response_started

    def _make_room(self) -> None:
        for other in self._waiting:  # the longest waiting first
            if other is not self:
                self._waiting.pop(other)
                other._set_deadline(None)
                other.transport.close()
                return
        self._set_deadline(None)
        self.transport.write(_AT_CAPACITY)
        self.transport.close()
