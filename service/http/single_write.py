"""uvicorn's HTTP protocol with each response sent in one piece.

An ASGI response is two messages (head, then body), which uvicorn writes to the socket as two
sends. A replica that dies between them leaves its load balancer a head without a body, which
no balancer can retry, since it has already passed the head on to the client. Here the writes
made in one turn of the event loop leave as one send: the head and body of a response are
written in the same turn, so a replica killed at any moment either answered whole or not at
all, and "not at all" is what balancers retry on another replica (docs/DEPLOYMENT.md).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class _CoalescingTransport:
    """A transport whose writes within one loop turn are joined into one write."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []
        self.is_closing = transport.is_closing  # asked per response: bound once, not looked up by __getattr__

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(bytes(data))

    def _flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            if not self._transport.is_closing():
                self._transport.write(data)

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(map(len, self._pending))

    def write_eof(self) -> None:
        self._flush()
        self._transport.write_eof()

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class SingleWriteHttpProtocol(HttpToolsProtocol):
    """`uvicorn --http nearrpc.http.single_write:SingleWriteHttpProtocol`."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_CoalescingTransport(transport, self.loop))  # type: ignore[arg-type]
