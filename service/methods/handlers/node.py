"""The node itself: status, health, rpc.discover (whatever the store holds)."""

from __future__ import annotations

import orjson

from nearrpc.generated import models
from nearrpc.methods import errors
from nearrpc.methods.handlers.resolution import Resolution, store_failures_are_internal
from nearrpc.methods.status import StatusReport, missing_members
from nearrpc.spec import openrpc_compact


class NodeMethods(Resolution):
    def _init_node(self, rpc_addr: str | None) -> None:
        """`rpc_addr`: where the server listens (host:port), which status reports."""
        self._status = StatusReport(self._reader, rpc_addr)

    @store_failures_are_internal
    async def status(self, params: models.RpcStatusRequest) -> bytes:
        document = await self._status.document()
        missing = missing_members(document)
        if missing:
            raise errors.internal_error(f"the store cannot fill the status members {', '.join(missing)}")
        return orjson.dumps(document)

    @store_failures_are_internal
    async def health(self, params: models.RpcHealthRequest) -> bytes:
        # what GET /health checks: a replaced file noticed, the store readable
        self._reader.version()
        await self._reader.info()
        return b"null"

    async def rpc_discover(self, params: models.RpcDiscoverRequest) -> bytes:
        # OpenRPC's service discovery: the packaged document, whatever the store holds
        return openrpc_compact()
