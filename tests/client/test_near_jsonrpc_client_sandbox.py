"""near-jsonrpc-client (the published Python client generated from nearcore's OpenAPI document)
sending to `nearrpc serve --sandbox`: `send_tx` and `broadcast_tx_commit` of transactions signed
with the funded account's secret key the plugin's facts give, read back through its `tx` and
`changes`; balances move by exactly the amount and the tokens burnt; refusals are its RpcError
over its parsed error model, a failed call its parsed Failure status."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import near_jsonrpc_models as m
import pytest
from near_jsonrpc_client import NearClientSync
from near_jsonrpc_client.errors import RpcError

from nearrpc.sandbox.runtime import model
from nearrpc.sandbox.runtime.encode import sign_transaction
from nearrpc.testing.facts import FundedAccount
from nearrpc.testing.server import NearrpcSandbox
from tests.client.sandbox_outcomes import balance, burnt, read_back, rpc

pytestmark = pytest.mark.live
COUNTER = "counter.localnet"
NEAR = 10**24


@pytest.fixture
def client(nearrpc_sandbox: NearrpcSandbox) -> Iterator[NearClientSync]:
    near = NearClientSync(rpc_urls=nearrpc_sandbox.url)
    try:
        yield near
    finally:
        near.close()


def _signed(url: str, signer: FundedAccount, receiver: str, action: model.Action, nonce: int | None = None) -> str:
    """A transaction as a client signs it: the key's next nonce (or `nonce`), the final block's hash."""
    key = rpc(url, "query", {"request_type": "view_access_key", "account_id": signer.account_id,
                             "public_key": signer.public_key, "finality": "final"})["result"]  # fmt: skip
    final = rpc(url, "block", {"finality": "final"})["result"]["header"]["hash"]
    tx = model.Transaction(signer.account_id, signer.public_key, key["nonce"] + 1 if nonce is None else nonce,
                           receiver, final, (action,))  # fmt: skip
    return base64.b64encode(sign_transaction(tx, signer.secret_key)).decode()


def _as_served(result: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def _error(failure: pytest.ExceptionInfo[RpcError]) -> dict[str, Any]:
    error = failure.value.error
    assert not isinstance(error, str)
    dumped: dict[str, Any] = error.model_dump(mode="json", by_alias=True, exclude_none=True)["error"]
    return dumped


def test_near_jsonrpc_client_sends_and_reads_back(nearrpc_sandbox: NearrpcSandbox, client: NearClientSync) -> None:
    url, me = nearrpc_sandbox.url, nearrpc_sandbox.funded
    them = nearrpc_sandbox.facts.funded_accounts[1].account_id

    before, theirs = balance(url, me.account_id), balance(url, them)
    signed = _signed(url, me, them, model.Transfer(deposit=NEAR))
    sent = client.send_tx(params=m.RpcSendTransactionRequest(signed_tx_base64=signed, wait_until="FINAL"))
    served = _as_served(sent)
    raw = rpc(url, "tx", {"tx_hash": served["transaction"]["hash"], "sender_account_id": me.account_id})["result"]
    assert served == raw  # the client's models take the whole answer, and give it back the same
    read_back(url, served)
    assert before is not None and theirs is not None
    assert before - (balance(url, me.account_id) or 0) == NEAR + burnt(served)
    assert (balance(url, them) or 0) - theirs == NEAR

    by_hash = m.RpcTransactionStatusRequestSenderAccountIdTxHash(
        tx_hash=served["transaction"]["hash"], sender_account_id=me.account_id, wait_until="FINAL"
    )
    assert _as_served(client.tx(params=m.RpcTransactionStatusRequest(by_hash))) == served
    where = served["receipts_outcome"][0]["block_hash"]
    changes = client.changes(params=m.RpcStateChangesInBlockByTypeRequest(
        m.RpcStateChangesInBlockByTypeRequestAccountChangesByBlockId(
            block_id=where, changes_type="account_changes", account_ids=[them])))  # fmt: skip
    (change,) = _as_served(changes)["changes"]
    assert change["cause"]["receipt_hash"] == served["receipts_outcome"][0]["id"]
    assert int(change["change"]["amount"]) == theirs + NEAR

    before = balance(url, me.account_id)
    call = model.FunctionCall(method_name="increment", args=b"{}", gas=30 * 10**12, deposit=0)
    committed = _as_served(client.broadcast_tx_commit(
        params=m.RpcSendTransactionRequest(signed_tx_base64=_signed(url, me, COUNTER, call))))  # fmt: skip
    assert committed["status"] == {"SuccessValue": ""}
    read_back(url, committed)
    assert (before or 0) - (balance(url, me.account_id) or 0) == burnt(committed)

    # refusals: a nonce already used, more than the balance; a call to an account without code
    key = rpc(url, "query", {"request_type": "view_access_key", "account_id": me.account_id,
                             "public_key": me.public_key, "finality": "final"})["result"]  # fmt: skip
    stale = _signed(url, me, them, model.Transfer(deposit=1), nonce=key["nonce"])
    with pytest.raises(RpcError) as used:
        client.send_tx(params=m.RpcSendTransactionRequest(signed_tx_base64=stale))
    invalid = {"TxExecutionError": {"InvalidTxError": {"InvalidNonce": {"ak_nonce": key["nonce"],
                                                                        "tx_nonce": key["nonce"]}}}}  # fmt: skip
    # nearcore serializes the cause's context away (info: {}) and puts the TxExecutionError in
    # `data`; this client's error model, generated from nearcore's OpenAPI document, has no `data`
    # member: it keeps the cause's name, and the nonces are only in the raw answer
    assert _error(used) == {"name": "HANDLER_ERROR", "cause": {"name": "INVALID_TRANSACTION", "info": {}}}
    assert rpc(url, "send_tx", {"signed_tx_base64": stale})["error"]["data"] == invalid
    too_much = _signed(url, me, them, model.Transfer(deposit=2 * (balance(url, me.account_id) or 0)))
    with pytest.raises(RpcError) as poor:
        client.broadcast_tx_commit(params=m.RpcSendTransactionRequest(signed_tx_base64=too_much))
    assert _error(poor)["cause"]["name"] == "INVALID_TRANSACTION"
    refused = rpc(url, "broadcast_tx_commit", [too_much])["error"]["data"]["TxExecutionError"]["InvalidTxError"]
    assert refused["NotEnoughBalance"]["signer_id"] == me.account_id

    no_code = nearrpc_sandbox.facts.funded_accounts[2].account_id
    failed = client.send_tx(params=m.RpcSendTransactionRequest(
        signed_tx_base64=_signed(url, me, no_code, call), wait_until="FINAL"))  # fmt: skip
    status = failed.root.status.root  # the models' own Failure variant
    assert type(status).__name__ == "FinalExecutionStatusFailure", type(status)
    assert _as_served(failed)["status"]["Failure"]["ActionError"]["kind"] == {
        "FunctionCallError": {"CompilationError": {"CodeDoesNotExist": {"account_id": no_code}}}
    }
