"""A view call the upstream answers (`query call_function`): checked, then kept verbatim, so a
replay answers it with the upstream stopped.

Kept: a result (nearcore's CallResult with the block, or query's result with an `error` text
where the contract failed), and the error answers that hold for good at a block (the account
unknown there, no code, the contract failed). Not kept: what a node may answer otherwise later
(an unknown or collected block, a shard it does not track, its own failures)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import orjson

from nearrpc.spec import validate_component
from nearrpc.store import StoredBlock

# the error causes a node answers for a call at a block whatever it is asked later
KEPT_CAUSES: Final = frozenset({"UNKNOWN_ACCOUNT", "NO_CONTRACT_CODE", "CONTRACT_EXECUTION_ERROR"})
_RESPONSE: Final = "JsonRpcResponse_for_RpcQueryResponse_and_RpcQueryError"


@dataclass(frozen=True, slots=True)
class CallAnswer:
    """The upstream's answer to a view call: its `result` (JSON bytes) or its `error` object."""

    result: bytes | None
    error: dict[str, Any] | None

    def kept(self) -> bytes:
        """What the store keeps: the JSON-RPC member the upstream answered, verbatim."""
        if self.error is not None:
            return orjson.dumps({"error": self.error})
        return orjson.dumps({"result": orjson.loads(self.result or b"null")})

    @staticmethod
    def from_kept(kept: bytes) -> CallAnswer:
        member = orjson.loads(kept)
        if "error" in member:
            return CallAnswer(None, member["error"])
        return CallAnswer(orjson.dumps(member["result"]), None)


def checked_result(result: Any, block: StoredBlock) -> bytes:
    """A call result for `block` exactly, in nearcore's shape; ValueError (or SchemaViolation) otherwise."""
    if not isinstance(result, dict):
        raise ValueError("the result is not an object")
    if result.get("block_hash") != block.hash or result.get("block_height") != block.height:
        raise ValueError(f"the result is of block {result.get('block_hash')} at {result.get('block_height')}")
    validate_component(_RESPONSE, {"jsonrpc": "2.0", "id": 0, "result": result})
    logs = result.get("logs")
    if not isinstance(logs, list) or not all(isinstance(line, str) for line in logs):
        raise ValueError("the result's logs are not a list of strings")
    if "error" in result:  # query's answer for a contract that failed
        if not isinstance(result["error"], str) or set(result) != {"error", "logs", "block_height", "block_hash"}:
            raise ValueError("the failed call's result is not nearcore's (error, logs, block_height, block_hash)")
    else:
        validate_component("RpcCallFunctionResponse", result)
    return orjson.dumps(result)


def checked_error(error: dict[str, Any]) -> dict[str, Any]:
    """An error answer in nearcore's shape (a structured cause); ValueError (or SchemaViolation) otherwise."""
    validate_component(_RESPONSE, {"jsonrpc": "2.0", "id": 0, "error": error})
    cause = error.get("cause")
    if not isinstance(cause, dict) or not isinstance(cause.get("name"), str):
        raise ValueError("the error names no cause")
    return error
