"""The execution room: a NEAR contract's view method run on Wasmtime, with NEAR's host
functions for views and nearcore's gas, limits and error texts. It knows nothing of HTTP,
JSON-RPC or the store: code and state come in through `run_view`'s arguments (`StateReader`)."""

from nearrpc.contracts.budget import EXECUTION_MEMORY_MB, MemoryBudget
from nearrpc.contracts.compiled_cache import CacheStats, CompiledCache, open_compiled_cache
from nearrpc.contracts.engine import (
    MODULE_CACHE_MB,
    ViewEngine,
    ViewOutcome,
    default_engine,
    run_view,
    use_compiled_cache,
    use_execution_limits,
)
from nearrpc.contracts.errors import HostFunctionUnavailable, ViewCallError
from nearrpc.contracts.gas import GasCosts, SliceExhausted
from nearrpc.contracts.host import PROHIBITED_IN_VIEW, StateReader, ViewContext
from nearrpc.contracts.interrupt import (
    BUSY,
    CANCELLED,
    DEADLINE,
    MEMORY,
    SHUTDOWN,
    SLICE,
    ExecutionInterrupted,
    Interrupt,
)

__all__ = [
    "BUSY",
    "CANCELLED",
    "DEADLINE",
    "EXECUTION_MEMORY_MB",
    "MEMORY",
    "MODULE_CACHE_MB",
    "PROHIBITED_IN_VIEW",
    "SHUTDOWN",
    "SLICE",
    "CacheStats",
    "CompiledCache",
    "ExecutionInterrupted",
    "GasCosts",
    "HostFunctionUnavailable",
    "Interrupt",
    "MemoryBudget",
    "SliceExhausted",
    "StateReader",
    "ViewCallError",
    "ViewContext",
    "ViewEngine",
    "ViewOutcome",
    "default_engine",
    "open_compiled_cache",
    "run_view",
    "use_compiled_cache",
    "use_execution_limits",
]
