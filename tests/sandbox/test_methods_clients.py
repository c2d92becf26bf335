"""What two published Python clients make of the writing methods' answers (issue 45, item 6):
py-near 1.2.22 raises its own error class for each refusal (its get_error_from_response walks
`data` as nearcore writes it), and near-jsonrpc-client's generated models (from nearcore's
OpenAPI document) parse each answer and error. The answers come from the app over the sample
chain and a fake sandbox chain."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import near_jsonrpc_models as m
import pydantic
import pytest
from py_near.exceptions.provider import InvalidNonce, NotEnoughBalance, RPCTimeoutError
from py_near.providers import JsonProvider

from nearrpc.sandbox.runtime.model import TransactionRefused
from tests.sandbox.methods_fake_chain import FakeChain, caller
from tests.support.sample_facts import sample_facts

TRANSFER = sample_facts().transaction(action="Transfer")
SIGNED_B64 = base64.b64encode(bytes(80)).decode()
UNKNOWN_HASH = "4reLvkAWfqk5fsqio1KLudk46cqRz9erQdaHkWZKMJDZ"


def _send(store: Path, chain: FakeChain, params: object, method: str = "send_tx") -> dict[str, Any]:
    _status, body = caller(store, chain)(method, params)
    return body


def _py_near_error(body: dict[str, Any]) -> Exception:
    error = JsonProvider.get_error_from_response(body)
    assert isinstance(error, Exception), body
    return error


def test_py_near_raises_its_own_class_for_each_refusal(sample_store: Path) -> None:
    nonce = TransactionRefused({"InvalidNonce": {"tx_nonce": 5, "ak_nonce": 7}})
    body = _send(sample_store, FakeChain(TRANSFER.tx_hash, refusal=nonce), [SIGNED_B64], "broadcast_tx_commit")
    assert isinstance(_py_near_error(body), InvalidNonce)
    balance = TransactionRefused({"NotEnoughBalance": {"signer_id": "alice.near", "balance": "1", "cost": "2"}})
    body = _send(sample_store, FakeChain(TRANSFER.tx_hash, refusal=balance), {"signed_tx_base64": SIGNED_B64})
    assert isinstance(_py_near_error(body), NotEnoughBalance)
    body = _send(sample_store, FakeChain(UNKNOWN_HASH, reached="INCLUDED"), [SIGNED_B64], "broadcast_tx_commit")
    assert isinstance(_py_near_error(body), RPCTimeoutError)


def test_near_jsonrpc_client_models_parse_every_answer(sample_store: Path) -> None:
    sends = m.JsonRpcResponseForRpcTransactionResponseAndRpcTransactionError
    chain = FakeChain(TRANSFER.tx_hash)
    parsed = sends.model_validate({**_send(sample_store, chain, {"signed_tx_base64": SIGNED_B64}), "id": "1"}).root
    assert isinstance(parsed, m.JsonRpcResponseForRpcTransactionResponseAndRpcTransactionErrorResult)
    # NONE's answer is nearcore's too (an absent outcome flattened away: final_execution_status
    # alone, spec overlay wire-tx-response-pending); this client's models, generated from an
    # upstream document whose third shape is empty, do not take it
    pending = _send(sample_store, chain, {"signed_tx_base64": SIGNED_B64, "wait_until": "NONE"})
    assert pending["result"] == {"final_execution_status": "NONE"}
    with pytest.raises(pydantic.ValidationError):
        sends.model_validate({**pending, "id": "1"})
    refused = FakeChain(TRANSFER.tx_hash, refusal=TransactionRefused({"Expired": None}))
    for failing in (refused, FakeChain(UNKNOWN_HASH, reached="NONE")):
        parsed = sends.model_validate({**_send(sample_store, failing, [SIGNED_B64]), "id": "1"}).root
        assert isinstance(parsed, m.JsonRpcResponseForRpcTransactionResponseAndRpcTransactionErrorError)
    hashes = m.JsonRpcResponseForCryptoHashAndRpcTransactionError
    answer = _send(sample_store, chain, [SIGNED_B64], "broadcast_tx_async")
    assert hashes.model_validate({**answer, "id": "1"}).root.result.root == TRANSFER.tx_hash
