"""A changes method's answer from the upstream (`EXPERIMENTAL_changes_in_block` / `block_effects`,
`EXPERIMENTAL_changes` / `changes`), checked before a fork keeps it verbatim: the result is of
the block asked for and validates against the method's spec component; an error answer is in
nearcore's shape (and is never kept: what a node cannot answer at a block now, it may later).
`upstream_params` says what is asked."""

from __future__ import annotations

from typing import Any, Final

import orjson

from nearrpc.spec import validate_component
from nearrpc.store import StoredBlock

# method -> the kind its answers are kept under (a stable name answers as its EXPERIMENTAL_ one)
_KINDS: Final = {
    "EXPERIMENTAL_changes_in_block": "in-block",
    "block_effects": "in-block",
    "EXPERIMENTAL_changes": "by-type",
    "changes": "by-type",
}
_RESULTS: Final = {"in-block": "RpcStateChangesInBlockByTypeResponse", "by-type": "RpcStateChangesInBlockResponse"}
_RESPONSES: Final = {
    "in-block": "JsonRpcResponse_for_RpcStateChangesInBlockByTypeResponse_and_RpcStateChangesError",
    "by-type": "JsonRpcResponse_for_RpcStateChangesInBlockResponse_and_RpcStateChangesError",
}


_BLOCK_REFERENCES: Final = ("block_id", "finality", "sync_checkpoint")


def upstream_params(request: dict[str, Any]) -> dict[str, Any]:
    """What the upstream is asked beside the block (the fork asks at the block it resolved, by
    hash): the request without its block reference and without members left out (null)."""
    return {key: value for key, value in request.items() if key not in _BLOCK_REFERENCES and value is not None}


def changes_kind(method: str) -> str:
    """The kind of changes `method` answers (KeyError: not a changes method)."""
    return _KINDS[method]


def checked_changes(method: str, result: Any, block: StoredBlock) -> bytes:
    """The result, of `block` exactly, as JSON bytes; ValueError (or SchemaViolation) otherwise."""
    validate_component(_RESULTS[changes_kind(method)], result)
    if result["block_hash"] != block.hash:
        raise ValueError(f"the changes are of block {result['block_hash']}, not {block.hash}")
    return orjson.dumps(result)


def checked_changes_error(method: str, error: dict[str, Any]) -> dict[str, Any]:
    """An error answer in nearcore's shape (a structured cause); ValueError otherwise."""
    validate_component(_RESPONSES[changes_kind(method)], {"jsonrpc": "2.0", "id": 0, "error": error})
    cause = error.get("cause")
    if not isinstance(cause, dict) or not isinstance(cause.get("name"), str):
        raise ValueError("the error names no cause")
    return error
