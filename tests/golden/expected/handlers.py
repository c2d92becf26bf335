"""Generated from spec/openapi.json by `python -m tools.regenerate`. Do not edit."""

from __future__ import annotations

from typing import Protocol

from nearrpc.generated import models


class RpcHandlers(Protocol):
    """The typed interface nearrpc implements: one method per JSON-RPC method.

    Each receives its params as the generated model and returns the serialized `result`
    (compact JSON bytes of the result schema), so immutable answers can be cached as bytes.
    Handler errors are raised as exceptions that the service's error layer renders. Handlers
    are coroutines, so a store that waits on the network does not block the server.
    """

    async def ping(self, params: models.PingParams) -> bytes:
        """Result schema: Pong."""
        ...

    async def lookup(self, params: models.LookupParams) -> bytes:
        """Result schema: LookupResult."""
        ...
