"""The methods, answered from a store: `ChainHandlers` implements generated.handlers.RpcHandlers.

Handlers know nothing of HTTP: they take typed params and return the serialized `result`, or
raise RpcError. Blocks and account states are stored as the bytes they are served as; the
protocol config of an epoch is composed once and kept, and finality and checkpoint references
are resolved once, until `refresh()` sees a write that changes what they were made from.

One module per family of methods, each a mixin over `resolution.Resolution` (the reader, block
references, held checks, limits, caches) with the reads it needs; `ChainHandlers` is their
union, so the endpoint calls each handler by name with no layer between. A new family is one
module here, one base below and, if it keeps anything, one `_init_` line in `__init__`.
"""

from __future__ import annotations

from nearrpc.methods.handlers.blocks import BlockMethods
from nearrpc.methods.handlers.changes import ChangesMethods
from nearrpc.methods.handlers.chunks import ChunkMethods
from nearrpc.methods.handlers.node import NodeMethods
from nearrpc.methods.handlers.query import QueryMethods
from nearrpc.methods.handlers.resolution import Resolution, store_failures_are_internal
from nearrpc.methods.handlers.sandbox import SandboxMethods
from nearrpc.methods.handlers.transactions import TransactionMethods
from nearrpc.methods.handlers.validators import ValidatorMethods
from nearrpc.methods.sandbox_hooks import SandboxChain
from nearrpc.methods.view_calls import CallUpstream, CallVerifier, ChangesUpstream, ViewCallMetrics
from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.store import ServingReader

__all__ = ["ChainHandlers", "store_failures_are_internal"]


class ChainHandlers(
    BlockMethods,
    QueryMethods,  # and through it the accounts' and the contracts' methods
    TransactionMethods,
    ChunkMethods,
    ValidatorMethods,
    ChangesMethods,
    NodeMethods,
    SandboxMethods,
):
    def __init__(
        self,
        reader: ServingReader,
        runtime_params: RuntimeParamStore,
        rpc_addr: str | None = None,
        *,
        heads_move: bool = False,
        reads_through: bool = False,
        call_upstream: CallUpstream | None = None,
        call_verifier: CallVerifier | None = None,
        view_call_metrics: ViewCallMetrics | None = None,
        changes_upstream: ChangesUpstream | None = None,
        sandbox: SandboxChain | None = None,
    ) -> None:
        """`heads_move`, `reads_through`: what the reader is (`Resolution`); `rpc_addr`: where the
        server listens, for status; `call_upstream`: who answers a view call that cannot run here;
        `call_verifier`: who compares every local call answer; `view_call_metrics`: where view
        calls are counted by path and differences; `changes_upstream`: who answers the changes
        methods instead of the store's rows. A fork provides all three hooks (cli.fork_calls).
        `sandbox`: the chain the writing methods hand transactions to (`serve --sandbox`); None
        answers them as a read-only node."""
        Resolution.__init__(self, reader, runtime_params, heads_move=heads_move, reads_through=reads_through)
        self._init_accounts()
        self._init_contracts(call_upstream, call_verifier, view_call_metrics)
        self._init_changes(changes_upstream)
        self._init_node(rpc_addr)
        self._init_sandbox(sandbox)
