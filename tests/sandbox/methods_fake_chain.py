"""A SandboxChain that records what the writing methods ask of it and answers as told: the
tests of the methods' JSON-RPC face (test_methods_*) run without the runtime or the chain
writer, over the sample chain's store."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from nearrpc.generated.methods import METHODS
from nearrpc.http.app import RunningSandbox, build_app
from nearrpc.spec import validate_component
from nearrpc.store import open_store

Call = Callable[..., tuple[int, dict[str, Any]]]


@dataclass
class FakeChain:
    """`tx_hash`: what submit answers (a transaction the store holds, to be answered as `tx`
    does); `refusal` / `undecodable`: what submit raises instead; `reached`: the status wait
    answers (None: the status asked)."""

    tx_hash: str
    refusal: Exception | None = None
    reached: str | None = None
    calls: list[tuple[str, Any]] = field(default_factory=list)
    snapshots: list[str] = field(default_factory=list)

    def start(self) -> None:
        self.calls.append(("start", None))

    async def close(self) -> None:
        self.calls.append(("close", None))

    async def submit(self, signed_transaction: bytes) -> str:
        self.calls.append(("submit", signed_transaction))
        if self.refusal is not None:
            raise self.refusal
        return self.tx_hash

    async def wait(self, tx_hash: str, status: str, timeout_s: float) -> str:
        self.calls.append(("wait", (tx_hash, status, timeout_s)))
        return self.reached if self.reached is not None else status

    async def patch_state(self, records: Sequence[Mapping[str, Any]]) -> None:
        self.calls.append(("patch_state", list(records)))

    async def fast_forward(self, delta_height: int) -> None:
        self.calls.append(("fast_forward", delta_height))

    async def snapshot(self) -> str:
        self.snapshots.append(f"snapshot-{len(self.snapshots)}")
        self.calls.append(("snapshot", None))
        return self.snapshots[-1]

    async def revert(self, snapshot_id: str) -> None:
        self.calls.append(("revert", snapshot_id))
        if snapshot_id not in self.snapshots:
            raise KeyError(snapshot_id)
        del self.snapshots[self.snapshots.index(snapshot_id) :]


def as_sandbox(chain: FakeChain) -> RunningSandbox:
    """The fake, typed as the hook the handlers take (mypy checks that it fits)."""
    return chain


def caller(store: Path, chain: FakeChain | None) -> Call:
    """A JSON-RPC call through the whole app over `store`, with `chain` as its sandbox (None: a
    read-only server); every answer is validated against its method's response in the spec."""
    app = build_app(
        open_store(store, "serve"),
        metrics=False,
        sandbox=None if chain is None else as_sandbox(chain),
    )

    def call(method: str, params: object) -> tuple[int, dict[str, Any]]:
        async def post() -> tuple[int, dict[str, Any]]:
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://nearrpc") as client:
                body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
                answer = await client.post("/", json=body)
            return answer.status_code, answer.json()

        status, body = asyncio.run(post())
        validate_component(METHODS[method].response_schema, body)  # every answer is the spec's
        return status, body

    return call
