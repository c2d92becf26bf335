"""A sandbox over a copy of the sample store, for the chain writer's tests: the chain writer
with the stand-in runtime, and the app's read path over the same store (an SQLite file or a
PostgreSQL database), on one event loop, wired as `serve --sandbox` wires them: the writer tells
the app's serving reader of each commit."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Coroutine
from typing import Any, TypeVar

import httpx
import orjson

from nearrpc.http.app import build_app
from nearrpc.nearcore.transaction import signed_transaction_bytes, transaction_bytes
from nearrpc.sample import crypto
from nearrpc.sandbox.chain import SandboxChainWriter
from nearrpc.sandbox.runtime.model import Runtime
from nearrpc.store import ChainReader, CommitListener, StoreLocation, open_store
from tests.sandbox.chain_fakes import TransferRuntime, signed_transfer

T = TypeVar("T")
ALICE, BOB = "alice.localnet", "bob.localnet"


class Sandbox:
    def __init__(
        self, store: StoreLocation, *, block_time: float | None = None, runtime: Runtime | None = None
    ) -> None:
        """`runtime`: the sandbox's own (or another) in place of the stand-in."""
        self.store = store
        self.loop = asyncio.new_event_loop()
        self.runtime = TransferRuntime()
        serving = open_store(store, "serve")  # first, as serve's create_app opens it
        assert isinstance(serving, CommitListener)
        self.chain = self.run(self._make_chain(block_time, runtime or self.runtime, serving))
        self.app = build_app(serving)
        self._lifespan = self.app.router.lifespan_context(self.app)
        self.run(self._lifespan.__aenter__())
        self.client = httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url="http://nearrpc")
        self.nonce = 10**12

    async def _make_chain(
        self, block_time: float | None, runtime: Runtime, serving: CommitListener
    ) -> SandboxChainWriter:
        chain = SandboxChainWriter(
            self.store, runtime, block_time=block_time, validate=True, on_commit=serving.committed
        )
        chain.start()
        await chain.settled()  # the blocks that make the store's head final, before a test looks
        return chain

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coroutine)

    def ask(self, method: str, params: Any) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        answer: dict[str, Any] = self.run(self.client.post("/", json=body)).json()
        return answer

    def result(self, method: str, params: Any) -> Any:
        answer = self.ask(method, params)
        assert "result" in answer, answer
        return answer["result"]

    def reader(self) -> ChainReader:
        return open_store(self.store, "read")

    def signed_by_alice(self, receiver_id: str, actions: list[dict[str, Any]]) -> bytes:
        """ALICE's transaction of `actions` (ActionViews), signed with her sample key (the sample's
        key pairs are derived from labels: sample/keys.py) on the head, at her key's next nonce."""
        label = f"full-access:{ALICE}"
        public_key = crypto.public_key(label)
        key = self.result(
            "query",
            {
                "request_type": "view_access_key",
                "finality": "optimistic",
                "account_id": ALICE,
                "public_key": public_key,
            },
        )
        head = self.result("block", {"finality": "optimistic"})["header"]["hash"]
        raw = transaction_bytes(
            signer_id=ALICE,
            public_key=public_key,
            nonce=key["nonce"] + 1,
            receiver_id=receiver_id,
            block_hash=head,
            actions=actions,
        )
        return signed_transaction_bytes(raw, crypto.sign(label, hashlib.sha256(raw).digest()))

    def full_access_key(self, account_id: str) -> str:
        keys = self.result("EXPERIMENTAL_view_access_key_list", {"finality": "optimistic", "account_id": account_id})
        return str(next(k["public_key"] for k in keys["keys"] if k["access_key"]["permission"] == "FullAccess"))

    def transfer(
        self, deposit: int, *, signer: str = ALICE, receiver: str = BOB, block_hash: str | None = None
    ) -> bytes:
        self.nonce += 1
        head = block_hash or self.result("block", {"finality": "optimistic"})["header"]["hash"]
        return signed_transfer(signer, self.full_access_key(signer), self.nonce, receiver, head, deposit)

    def close(self) -> None:
        self.run(self.client.aclose())
        self.run(self._lifespan.__aexit__(None, None, None))
        self.run(self.chain.close())
        self.loop.close()


def dump(reader: ChainReader) -> bytes:
    """Every row of the store, each table sorted, as bytes to compare."""
    tables = {
        "blocks": sorted((b.view_json, c) for b, c in reader.iter_blocks()),
        "epochs": sorted(repr(e) for e in reader.iter_epochs()),
        "accounts": sorted(reader.iter_account_states(), key=repr),
        "keys": sorted(reader.iter_access_keys(), key=repr),
        "codes": sorted(reader.iter_contract_codes()),
        "data": sorted(reader.iter_contract_data(), key=repr),
        "chunks": sorted(repr(c) for c in reader.iter_chunks()),
        "transactions": sorted(repr(t) for t in reader.iter_transactions()),
        "receipts": sorted(repr(r) for r in reader.iter_receipts()),
        "validators": sorted(repr(v) for v in reader.iter_validators()),
    }
    return repr(tables).encode() + orjson.dumps(reader.info().__repr__())
