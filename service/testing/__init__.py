"""Test support for client libraries: a real nearrpc server for a test session.

The pytest plugin (`nearrpc.testing.plugin`, registered through the `pytest11` entry point)
offers the session fixture `nearrpc_server`; outside pytest, `running_server(store, log)`
does the same job. pytest is imported by the plugin module only: it is the client's test
dependency, not nearrpc's.

The names below load on first use: pytest imports this package for the plugin in every
session, and sessions that never start a server should not pay for the store and httpx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nearrpc.testing.facts import ChainFacts, read_chain_facts
    from nearrpc.testing.server import NearrpcServer, ServerError, running_server

_HOMES = {
    "ChainFacts": "nearrpc.testing.facts",
    "read_chain_facts": "nearrpc.testing.facts",
    "NearrpcServer": "nearrpc.testing.server",
    "ServerError": "nearrpc.testing.server",
    "running_server": "nearrpc.testing.server",
}
__all__ = ["ChainFacts", "NearrpcServer", "ServerError", "read_chain_facts", "running_server"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
