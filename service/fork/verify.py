"""`--verify-calls`: every view call answered here is asked of the upstream too (through the
fork, so the upstream's answer is kept like any other) and compared; a difference is logged
with both answers, and the local answer stands. The handlers see this as their
`CallVerifier` (methods.view_calls), counting what it reports as a difference."""

from __future__ import annotations

import logging
from typing import Protocol

import orjson

from nearrpc.fork.calls import CallAnswer
from nearrpc.store import StoredBlock

# the view calls' logger: where a call's answers are told apart, whoever ran them
_LOG = logging.getLogger("nearrpc.view_calls")


class UpstreamCalls(Protocol):
    """The upstream's answer to a view call at a block (`ForkReader.call_function`)."""

    async def call_function(self, account_id: str, method_name: str, args: bytes, block: StoredBlock) -> CallAnswer: ...


class UpstreamVerifier:
    """Compares local view call answers with the upstream's."""

    def __init__(self, upstream: UpstreamCalls) -> None:
        self._upstream = upstream

    async def differs(self, account_id: str, method_name: str, args: bytes, block: StoredBlock, local: bytes) -> bool:
        """Whether the upstream answers the call otherwise than `local` (query's form; an error
        answer always differs, shown by its cause); logged when so. An upstream that cannot
        answer is no verdict on the executor: logged, and no difference."""
        try:
            answer = await self._upstream.call_function(account_id, method_name, args, block)
        except Exception as failure:
            _LOG.warning(
                "verify-calls: no upstream answer for %s.%s at %s: %s", account_id, method_name, block.hash, failure
            )
            return False
        upstream: object
        if answer.error is not None:
            cause = answer.error.get("cause")
            upstream = {"error cause": cause.get("name") if isinstance(cause, dict) else None,
                        "data": answer.error.get("data")}  # fmt: skip
        else:
            upstream = orjson.loads(answer.result or b"null")
        if upstream == orjson.loads(local):
            return False
        _LOG.warning(
            "verify-calls: %s.%s at block %s (%d) differs: local %s, upstream %s",
            account_id,
            method_name,
            block.hash,
            block.height,
            local.decode(errors="replace"),
            orjson.dumps(upstream).decode(),
        )
        return True
