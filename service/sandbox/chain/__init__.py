"""The sandbox's chain writer: blocks produced over the runtime's results, written through the
store's writer; implements methods.sandbox_hooks.SandboxChain (`SandboxChainWriter`).

Modules: `writer` (the SandboxChain on the event loop: automine or a block time, waits), `producer`
(block production, snapshot and revert, on the writer's thread), `blocks` (a block and its chunks
built on the parent's), `records` (a transaction followed to its stored outcome), `state` (the
runtime's StateView over the store), `views` (account and key JSON), `patch`
(sandbox_patch_state's records), `validity` (a transaction's block hash against the chain)."""

from nearrpc.sandbox.chain.patch import MAX_RECORDS, InvalidStateRecord
from nearrpc.sandbox.chain.writer import MAX_FAST_FORWARD, SandboxChainWriter

__all__ = ["MAX_FAST_FORWARD", "MAX_RECORDS", "InvalidStateRecord", "SandboxChainWriter"]
