"""A fork's upstream as the handlers' `CallUpstream` and `ChangesUpstream` (nearrpc.methods.view_calls):
the fork asks, checks and keeps the answer (`ForkReader.call_function`, `ForkReader.changes`);
here its error answers become the RpcError the upstream answered, so a client meets the
upstream's error as it was sent. (The fork's `CallVerifier` is `fork.verify.UpstreamVerifier`,
which needs no RpcError.)"""

from __future__ import annotations

from typing import Any

import orjson

from nearrpc.fork.changes import upstream_params
from nearrpc.fork.reader import ForkReader
from nearrpc.methods import errors
from nearrpc.store import StoredBlock


def upstream_error(error: dict[str, Any], what: str = "the view call") -> errors.RpcError:
    """The upstream's error answer as the catalogue's RpcError (a cause the catalogue does not
    know is INTERNAL_ERROR, naming it and `what` was asked)."""
    named = error.get("cause")
    cause: dict[str, Any] = named if isinstance(named, dict) else {}
    data = error.get("data")
    text = data if isinstance(data, str) else orjson.dumps(data).decode()
    try:
        kind = errors.Cause(str(cause.get("name")))
    except ValueError:
        return errors.internal_error(f"the upstream answered {what} with {cause.get('name')}: {text}")
    info = cause.get("info")
    return errors.RpcError(kind, info if isinstance(info, dict) else None, text)


class ForkCallUpstream:
    def __init__(self, fork: ForkReader) -> None:
        self._fork = fork

    async def call_function(self, account_id: str, method_name: str, args: bytes, block: StoredBlock) -> bytes:
        answer = await self._fork.call_function(account_id, method_name, args, block)
        if answer.error is not None:
            raise upstream_error(answer.error)
        assert answer.result is not None  # a CallAnswer holds one of the two
        return answer.result

    async def changes(self, method: str, request: dict[str, Any], block: StoredBlock) -> bytes:
        answer = await self._fork.changes(method, upstream_params(request), block)
        if answer.error is not None:
            raise upstream_error(answer.error, method)
        assert answer.result is not None
        return answer.result
