"""`nearrpc conform URL`: hold any NEAR JSON-RPC endpoint to `spec/openapi.json` and to
nearcore's documented error rules, for the five methods of the interface.

    report = run_conformance(Options(url, Limits(max_requests=200, rate=10, timeout=10, retries=3)))

This room reads the spec (nearrpc.spec) and the error catalogue (nearrpc.methods.errors) and
talks to the endpoint over HTTP only; it knows nothing of this service's HTTP room or store.
"""

from nearrpc.conform.endpoint import Limits, Unreachable
from nearrpc.conform.report import Report, render
from nearrpc.conform.runner import AccountRefused, Options, run_conformance

__all__ = ["AccountRefused", "Limits", "Options", "Report", "Unreachable", "render", "run_conformance"]
