"""Contract view calls answered from stored state: `call_function` runs the account's code on
the execution room (nearrpc.contracts) in a worker thread, reading storage through the store's
reader; `view_state` lists the stored contract state under a prefix.

`CallUpstream` is the hook a fork provides: where local execution cannot run (a host function
the executor lacks, a state refused as too large) the handlers answer its `call_function`
result verbatim; with `verify_calls` they ask it for every local answer too and count each
difference.
"""

from __future__ import annotations

from typing import Protocol

from nearrpc.store import StoredBlock


class CallUpstream(Protocol):
    """An upstream node's `query call_function`, for a block it holds."""

    async def call_function(self, account_id: str, method_name: str, args: bytes, block: StoredBlock) -> bytes:
        """The upstream's `query call_function` result JSON for `block`'s hash (CallResult:
        result, logs, block_height, block_hash), verbatim; raises RpcError as it answered."""
        ...
