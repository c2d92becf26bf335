"""A secp256k1 access key on the sandbox, end to end through the JSON-RPC methods: added by
`sandbox_patch_state`, it signs a transfer that succeeds and an AddKey of another secp256k1 key,
which signs in turn; every answer on the way (the patch, the key views, the sends, the statuses,
asked by hash and by signed transaction, and the chunk) holds to the spec, whose PublicKey admits
`secp256k1:` keys (overlay wire-public-key-syntax), as nearcore writes them."""

from __future__ import annotations

import asyncio
import base64
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from nearrpc.generated.methods import METHODS
from nearrpc.http.app import build_app
from nearrpc.sandbox.chain import SandboxChainWriter
from nearrpc.sandbox.runtime import encode, model
from nearrpc.sandbox.runtime.apply import SandboxRuntime
from nearrpc.spec import validate_component
from nearrpc.store import open_store
from tests.sandbox.support import secp256k1_secret

ALICE, BOB = "alice.localnet", "bob.localnet"
NEAR = 10**24
Ask = Callable[[str, Any], dict[str, Any]]


@pytest.fixture
def ask(sample_store: Path, tmp_path: Path) -> Iterator[Ask]:
    """A JSON-RPC call to `serve --sandbox`'s app over a copy of the sample chain, with the
    sandbox's own runtime; every answer is validated against its method's response schema."""
    path = tmp_path / "sandbox.sqlite"
    shutil.copyfile(sample_store, path)
    loop = asyncio.new_event_loop()
    chain = SandboxChainWriter(path, SandboxRuntime(), block_time=None, validate=True)
    app = build_app(open_store(path, "serve"), metrics=False, sandbox=chain)
    lifespan = app.router.lifespan_context(app)
    loop.run_until_complete(lifespan.__aenter__())  # starts the chain
    loop.run_until_complete(chain.settled())
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://nearrpc")

    def call(method: str, params: Any) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        answer: dict[str, Any] = loop.run_until_complete(client.post("/", json=body)).json()
        validate_component(METHODS[method].response_schema, answer)
        assert "result" in answer, answer
        return answer

    yield call
    loop.run_until_complete(client.aclose())
    loop.run_until_complete(lifespan.__aexit__(None, None, None))
    loop.close()


def _key_view(ask: Ask, public_key: str) -> dict[str, Any]:
    request = {"request_type": "view_access_key", "finality": "optimistic", "account_id": ALICE}
    result: dict[str, Any] = ask("query", {**request, "public_key": public_key})["result"]
    return result


def _signed(ask: Ask, secret: str, *actions: model.Action) -> str:
    public_key = encode.public_key_of(secret)
    head = ask("block", {"finality": "optimistic"})["result"]["header"]["hash"]
    transaction = model.Transaction(
        signer_id=ALICE,
        public_key=public_key,
        nonce=_key_view(ask, public_key)["nonce"] + 1,
        receiver_id=BOB if isinstance(actions[0], model.Transfer) else ALICE,
        block_hash=head,
        actions=actions,
    )
    return base64.b64encode(encode.sign_transaction(transaction, secret)).decode()


def test_a_secp256k1_key_patched_in_signs_a_transfer_and_adds_another(ask: Ask) -> None:
    secret = secp256k1_secret("alice's secp256k1 key")
    public_key = encode.public_key_of(secret)
    assert public_key.startswith("secp256k1:")
    record = {"account_id": ALICE, "public_key": public_key, "access_key": {"nonce": 0, "permission": "FullAccess"}}
    assert ask("sandbox_patch_state", {"records": [{"AccessKey": record}]})["result"] == {}
    assert _key_view(ask, public_key)["permission"] == "FullAccess"
    listed = ask("EXPERIMENTAL_view_access_key_list", {"finality": "optimistic", "account_id": ALICE})["result"]
    assert public_key in [key["public_key"] for key in listed["keys"]]

    bob_before = int(ask("query", {"request_type": "view_account", "finality": "optimistic", "account_id": BOB})
                     ["result"]["amount"])  # fmt: skip
    signed = _signed(ask, secret, model.Transfer(NEAR))
    sent = ask("send_tx", {"signed_tx_base64": signed, "wait_until": "FINAL"})["result"]
    assert "SuccessValue" in sent["status"], sent["status"]
    assert sent["transaction"]["public_key"] == public_key
    assert sent["transaction"]["signature"].startswith("secp256k1:")
    bob_after = ask("query", {"request_type": "view_account", "finality": "optimistic", "account_id": BOB})
    assert int(bob_after["result"]["amount"]) == bob_before + NEAR

    # asked again by hash and by the signed transaction itself: the same answer
    tx_hash = sent["transaction"]["hash"]
    for method in ("tx", "EXPERIMENTAL_tx_status"):
        by_hash = ask(method, {"tx_hash": tx_hash, "sender_account_id": ALICE, "wait_until": "FINAL"})["result"]
        assert ask(method, {"signed_tx_base64": signed, "wait_until": "FINAL"})["result"] == by_hash
        assert by_hash["transaction"]["public_key"] == public_key
    chunk = ask("chunk", {"block_id": sent["transaction_outcome"]["block_hash"], "shard_id": 0})["result"]
    assert public_key in [tx["public_key"] for tx in chunk["transactions"]]

    # the key adds a second secp256k1 key, which signs a transfer of its own
    second = secp256k1_secret("alice's second secp256k1 key")
    second_key = encode.public_key_of(second)
    add = model.AddKey(public_key=second_key, access_key=model.AccessKey(nonce=0, permission=None))
    added = ask("send_tx", {"signed_tx_base64": _signed(ask, secret, add), "wait_until": "FINAL"})["result"]
    assert "SuccessValue" in added["status"], added["status"]
    assert added["transaction"]["actions"] == [
        {"AddKey": {"public_key": second_key, "access_key": {"nonce": 0, "permission": "FullAccess"}}}
    ]
    assert _key_view(ask, second_key)["permission"] == "FullAccess"
    again = ask("send_tx", {"signed_tx_base64": _signed(ask, second, model.Transfer(1)), "wait_until": "FINAL"})
    assert "SuccessValue" in again["result"]["status"], again["result"]["status"]
