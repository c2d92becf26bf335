"""The error catalogue, as data: every error cause the service can answer with.

Each entry fixes nearcore's top-level `name`, the `cause.name`, the legacy `code` and
`message`, whether `cause` carries an `info` member, and the default HTTP status. Handlers raise
`RpcError(cause, info, data)`; only `service.wire` turns one into bytes on the wire.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

REQUEST_VALIDATION_ERROR: Final = "REQUEST_VALIDATION_ERROR"
HANDLER_ERROR: Final = "HANDLER_ERROR"
INTERNAL_ERROR: Final = "INTERNAL_ERROR"


@dataclass(frozen=True, slots=True)
class ErrorKind:
    name: str  # top-level `name`
    cause: str  # `cause.name`
    code: int  # legacy JSON-RPC code
    message: str  # legacy JSON-RPC message
    has_info: bool  # unit variants (NOT_SYNCED_YET) carry no `info` at all
    http_status: int  # before the UNKNOWN_BLOCK-by-height rule (service.endpoint)


CATALOGUE: Final[dict[str, ErrorKind]] = {
    kind.cause: kind
    for kind in (
        ErrorKind(REQUEST_VALIDATION_ERROR, "PARSE_ERROR", -32700, "Parse error", True, 400),
        ErrorKind(REQUEST_VALIDATION_ERROR, "METHOD_NOT_FOUND", -32601, "Method not found", True, 400),
        ErrorKind(HANDLER_ERROR, "UNKNOWN_BLOCK", -32000, "Server error", True, 200),
        ErrorKind(HANDLER_ERROR, "NOT_SYNCED_YET", -32000, "Server error", False, 200),
        ErrorKind(HANDLER_ERROR, "UNKNOWN_ACCOUNT", -32000, "Server error", True, 200),
        ErrorKind(HANDLER_ERROR, "INVALID_ACCOUNT", -32000, "Server error", True, 200),
        ErrorKind(INTERNAL_ERROR, "INTERNAL_ERROR", -32000, "Server error", True, 500),
    )
}

# Which causes each method can answer with (beyond the request validation ones every method has).
METHOD_CAUSES: Final[dict[str, tuple[str, ...]]] = {
    "genesis_config": (),
    "client_config": ("INTERNAL_ERROR",),
    "EXPERIMENTAL_protocol_config": ("UNKNOWN_BLOCK", "INTERNAL_ERROR"),
    "EXPERIMENTAL_view_account": ("UNKNOWN_BLOCK", "INVALID_ACCOUNT", "UNKNOWN_ACCOUNT", "INTERNAL_ERROR"),
    "block": ("UNKNOWN_BLOCK", "NOT_SYNCED_YET", "INTERNAL_ERROR"),
}


class RpcError(Exception):
    """A JSON-RPC error on its way to the wire."""

    def __init__(self, cause: str, info: dict[str, object] | None, data: object) -> None:
        super().__init__(f"{cause}: {data}")
        self.kind = CATALOGUE[cause]
        self.info = info if self.kind.has_info else None
        self.data = data


def parse_error(message: str) -> RpcError:
    return RpcError("PARSE_ERROR", {"error_message": message}, message)


def method_not_found(method: str) -> RpcError:
    return RpcError("METHOD_NOT_FOUND", {"method_name": method}, method)


def internal_error(error_message: str, data: str | None = None) -> RpcError:
    return RpcError("INTERNAL_ERROR", {"error_message": error_message}, data or error_message)
