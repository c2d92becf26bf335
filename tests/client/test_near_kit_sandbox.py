"""near-kit (the published Python SDK imported as `near`) writing to `nearrpc serve --sandbox`
through its transaction builder: `send_transaction` of actions made by `near.actions` (a transfer,
a function call on the sample's counter), signed with the funded account's secret key the
plugin's facts give. Each outcome is read back through `tx` and the changes; balances move by
exactly the amount and the tokens the outcomes burnt; a balance short of the amount and a call
to an account without code are near-kit's own error classes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from near import Near, actions
from near.errors import ContractPanicError, InsufficientBalanceError
from near.models import TransactionResult

from nearrpc.testing.server import NearrpcSandbox
from tests.client.sandbox_outcomes import balance, burnt, read_back, rpc

pytestmark = pytest.mark.live
COUNTER = "counter.localnet"
NEAR = 10**24


@pytest.fixture
def near_kit(nearrpc_sandbox: NearrpcSandbox) -> Iterator[Near]:
    funded = nearrpc_sandbox.funded
    client = Near(
        "localnet",
        rpc_url=nearrpc_sandbox.url,
        account_id=funded.account_id,
        private_key=funded.secret_key,
        retries=0,  # no retry: a failure shows at once
    )
    try:
        yield client
    finally:
        client.close()


def _served(url: str, sent: TransactionResult) -> dict[str, Any]:
    """What `tx` answers for the transaction near-kit sent, checked against near-kit's reading."""
    assert sent.transaction is not None and sent.transaction_outcome is not None
    tx_hash, signer = sent.transaction["hash"], sent.transaction["signer_id"]
    served: dict[str, Any] = rpc(url, "tx", {"tx_hash": tx_hash, "sender_account_id": signer})["result"]
    assert sent.status == served["status"]
    assert sent.transaction_outcome.outcome == served["transaction_outcome"]["outcome"]
    assert [o.id for o in sent.receipts_outcome] == [o["id"] for o in served["receipts_outcome"]]
    read_back(url, served)
    return served


def _count(url: str) -> int:
    answer = rpc(url, "query", {"request_type": "call_function", "account_id": COUNTER, "method_name": "get_num",
                                "args_base64": "", "finality": "final"})["result"]  # fmt: skip
    return int(bytes(answer["result"]).decode())


def test_near_kit_sends_a_transfer_and_a_call(nearrpc_sandbox: NearrpcSandbox, near_kit: Near) -> None:
    url, me = nearrpc_sandbox.url, nearrpc_sandbox.funded.account_id
    them = nearrpc_sandbox.facts.funded_accounts[1].account_id

    mine, theirs = balance(url, me), balance(url, them)
    assert mine is not None and theirs is not None
    sent = near_kit.send_transaction(them, [actions.transfer("1 NEAR")], wait_until="FINAL")
    served = _served(url, sent)
    assert served["final_execution_status"] == "FINAL"
    assert served["transaction"]["actions"] == [{"Transfer": {"deposit": str(NEAR)}}]
    assert mine - (balance(url, me) or 0) == NEAR + burnt(served)
    assert (balance(url, them) or 0) - theirs == NEAR

    count, before = _count(url), balance(url, me)
    assert before is not None
    called = near_kit.send_transaction(
        COUNTER, [actions.function_call("increment", {}, gas="30 Tgas")], wait_until="FINAL"
    )
    served = _served(url, called)
    assert "SuccessValue" in served["status"]
    assert _count(url) == count + 1
    assert before - (balance(url, me) or 0) == burnt(served)


def test_near_kit_errors_are_its_own_classes(nearrpc_sandbox: NearrpcSandbox, near_kit: Near) -> None:
    url, me = nearrpc_sandbox.url, nearrpc_sandbox.funded.account_id
    them = nearrpc_sandbox.facts.funded_accounts[1].account_id
    with pytest.raises(InsufficientBalanceError):
        near_kit.send_transaction(them, [actions.transfer(str(2 * (balance(url, me) or 0)) + " yocto")])
    no_code = nearrpc_sandbox.facts.funded_accounts[2].account_id
    with pytest.raises(ContractPanicError) as failed:
        near_kit.send_transaction(no_code, [actions.function_call("increment", {})], wait_until="FINAL")
    assert failed.value.receipt_id is not None
    status = failed.value.data["status"]["Failure"]["ActionError"]["kind"]
    assert status == {"FunctionCallError": {"CompilationError": {"CodeDoesNotExist": {"account_id": no_code}}}}
