"""A stub NEAR node on 127.0.0.1 that knows one block and a genesis config: the real testnet
answers captured in ../shared/reference/captured/, served byte for byte (with the request's id).

`block` answers the captured block for every finality, for its height and hash (object and
positional forms) and as the earliest available block; any other block is UNKNOWN_BLOCK, with
nearcore's 422 for a `block_id` height below it. Every other method is METHOD_NOT_FOUND.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.http_stub import StubHandler, serving_stub

BLOCK_FILE = "block_testnet_h187310138.json"
GENESIS_FILE = "genesis_config_testnet.json"


def _error(name: str, cause: str, info: dict[str, Any], code: int, message: str, data: str) -> dict[str, Any]:
    return {"name": name, "cause": {"name": cause, "info": info}, "code": code, "message": message, "data": data}


class _Node:
    def __init__(self, captured: Path) -> None:
        self.block = json.loads((captured / BLOCK_FILE).read_text())["result"]
        self.genesis = json.loads((captured / GENESIS_FILE).read_text())["result"]
        header = self.block["header"]
        self.height, self.hash = header["height"], header["hash"]

    def _is_the_block(self, params: Any) -> bool:
        if isinstance(params, list) and len(params) == 1:
            return params[0] in (self.height, self.hash)
        if not isinstance(params, dict):
            return False
        return ("finality" in params or params.get("sync_checkpoint") == "earliest_available"
                or params.get("block_id") in (self.height, self.hash))  # fmt: skip

    def answer(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        method, params = request.get("method"), request.get("params")
        if method == "genesis_config":
            return 200, {"result": self.genesis}
        if method != "block":
            error = _error("REQUEST_VALIDATION_ERROR", "METHOD_NOT_FOUND", {"method_name": method}, -32601,
                           "Method not found", str(method))
            return 400, {"error": error}
        if self._is_the_block(params):
            return 200, {"result": self.block}
        block_id = params.get("block_id") if isinstance(params, dict) else None
        below = isinstance(block_id, int) and block_id < self.height
        key = f"BLOCK HEIGHT: {block_id}" if isinstance(block_id, int) else f"BLOCK: {json.dumps(params)}"
        error = _error("HANDLER_ERROR", "UNKNOWN_BLOCK", {}, -32000, "Server error",
                       f"DB Not Found Error: {key} \n Cause: Unknown")
        return (422 if below else 200), {"error": error}


@contextmanager
def captured_node(captured: Path) -> Iterator[str]:
    node = _Node(captured)

    class Handler(StubHandler):
        def do_POST(self) -> None:
            try:
                request = json.loads(self.body())
                status, answer = node.answer(request)
                payload = json.dumps({"jsonrpc": "2.0", **answer, "id": request.get("id")}).encode()
                content_type = "application/json"
            except (ValueError, AttributeError):
                status, payload, content_type = 400, b"Failed to parse the request body as JSON", "text/plain"
            self.answer(status, payload, content_type)

    with serving_stub(Handler) as url:
        yield url
