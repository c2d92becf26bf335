"""py-near, the published NEAR Python client, writing to `nearrpc serve --sandbox` through its
Account: send_money, function_call on the sample's counter, deploy_contract, with the funded
accounts and secret keys the plugin's facts give. Each outcome is read back through `tx` and the
changes; each balance moves by exactly the amount and the tokens the outcomes burnt; the refusals
are py-near's own exception classes."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import based58
import pytest
from py_near import transactions
from py_near.account import Account
from py_near.exceptions.exceptions import FunctionCallError
from py_near.exceptions.provider import InvalidNonce, NotEnoughBalance

from nearrpc.testing.server import NearrpcSandbox
from tests.client.sandbox_outcomes import balance, burnt, read_back, rpc
from tests.conftest import reference_dir

pytestmark = pytest.mark.live
COUNTER = "counter.localnet"
COUNTER_WASM = Path(__file__).resolve().parents[2] / "service" / "sample" / "contracts" / "counter.wasm"
NEAR = 10**24


def _served(url: str, result: Any) -> dict[str, Any]:
    """What `tx` answers for the transaction py-near sent, checked against py-near's reading of it."""
    tx = result.transaction
    served: dict[str, Any] = rpc(url, "tx", {"tx_hash": tx.hash, "sender_account_id": tx.signer_id})["result"]
    assert result.status == served["status"]
    outcomes = served["receipts_outcome"]
    assert [o.receipt_id for o in result.receipt_outcome] == [o["id"] for o in outcomes]
    assert [int(o.tokens_burnt) for o in result.receipt_outcome] == [
        int(o["outcome"]["tokens_burnt"]) for o in outcomes
    ]
    read_back(url, served)
    return served


def _count(url: str, contract: str) -> int:
    answer = rpc(url, "query", {"request_type": "call_function", "account_id": contract, "method_name": "get_num",
                                "args_base64": "", "finality": "final"})["result"]  # fmt: skip
    return int(bytes(answer["result"]).decode())


async def _token(sandbox: NearrpcSandbox, owner: Account, code: bytes) -> dict[str, Any]:
    """Deployed and initialized by its account, a storage deposit and an ft_transfer by `owner`."""
    url, holder = sandbox.url, sandbox.facts.funded_accounts[1].account_id
    funded = sandbox.facts.funded_accounts[3]
    token = Account(funded.account_id, funded.secret_key, rpc_addr=url)
    await token.startup()
    try:
        found: dict[str, Any] = {"deploy": await token.deploy_contract(code)}
        found["new"] = await token.function_call(
            funded.account_id,
            "new_default_meta",
            {"owner_id": owner.account_id, "total_supply": "1000000"},
            gas=100 * 10**12,
        )
    finally:
        await token.shutdown()
    token_id, me = funded.account_id, owner.account_id
    bound = int((await owner.view_function(token_id, "storage_balance_bounds", {})).result["min"])
    before = balance(url, me)
    found["storage_deposit"] = await owner.function_call(token_id, "storage_deposit", {"account_id": holder},
                                                         amount=bound)  # fmt: skip
    between = balance(url, me)
    found["ft_transfer"] = await owner.function_call(token_id, "ft_transfer", {"receiver_id": holder, "amount": "250"},
                                                     amount=1)  # fmt: skip
    found["paid"] = (before, between, balance(url, me))
    found["balances"] = [(await owner.view_function(token_id, "ft_balance_of", {"account_id": who})).result
                         for who in (me, holder)]  # fmt: skip
    return found | {"bound": bound}


async def _writes(sandbox: NearrpcSandbox, token_code: bytes | None) -> dict[str, Any]:
    url, funded, other = sandbox.url, sandbox.funded, sandbox.facts.funded_accounts[1]
    me, them = funded.account_id, other.account_id
    account = Account(me, funded.secret_key, rpc_addr=url)
    deployer = Account(them, other.secret_key, rpc_addr=url)
    await account.startup()
    await deployer.startup()
    found: dict[str, Any] = {}
    try:
        before = (balance(url, me), balance(url, them))
        found["send_money"] = (before, await account.send_money(them, NEAR), (balance(url, me), balance(url, them)))
        count, before_call = _count(url, COUNTER), balance(url, me)
        called = await account.function_call(COUNTER, "increment", {})
        found["function_call"] = (count, before_call, called, _count(url, COUNTER), balance(url, me))
        before_deploy = balance(url, them)
        found["deploy"] = (before_deploy, await deployer.deploy_contract(COUNTER_WASM.read_bytes()), balance(url, them))
        found["deployed_call"] = await deployer.function_call(them, "increment", {})
        found["deployed_count"] = _count(url, them)

        if token_code is not None:  # near-sdk's fungible token on a fourth account, funded's supply
            found["ft"] = await _token(sandbox, account, token_code)

        # refusals: a nonce already used, more than the balance, a call to an account without code
        signer = based58.b58decode(funded.secret_key.removeprefix("ed25519:").encode())
        key = rpc(url, "query", {"request_type": "view_access_key", "account_id": me, "public_key": funded.public_key,
                                 "finality": "final"})["result"]  # fmt: skip
        head = rpc(url, "block", {"finality": "final"})["result"]["header"]["hash"]
        stale = transactions.sign_and_serialize_transaction(
            me, signer, them, key["nonce"], [transactions.create_transfer_action(1)], based58.b58decode(head.encode())
        )
        refusals: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
            ("bad_nonce", lambda: account.provider.send_tx_and_wait(stale)),
            ("no_balance", lambda: account.send_money(them, int(balance(url, me) or 0) * 2)),
            ("no_code", lambda: account.function_call(sandbox.facts.funded_accounts[2].account_id, "increment", {})),
        ]
        for name, call in refusals:
            try:
                found[name] = await call()
            except Exception as refused:  # the class is the point
                found[name] = refused
        found["ak_nonce"] = key["nonce"]
    finally:
        await account.shutdown()
        await deployer.shutdown()
    return found


def test_py_near_writes_to_the_sandbox(nearrpc_sandbox: NearrpcSandbox) -> None:
    url, me = nearrpc_sandbox.url, nearrpc_sandbox.funded.account_id
    token = reference_dir() / "contracts" / "new_fungible_token.wasm"  # near-sdk's, when the reference is there
    found = asyncio.run(_writes(nearrpc_sandbox, token.read_bytes() if token.is_file() else None))

    (mine, theirs), sent, (mine_after, theirs_after) = found["send_money"]
    served = _served(url, sent)
    assert mine - mine_after == NEAR + burnt(served)
    assert theirs_after - theirs == NEAR

    count, before, called, count_after, after = found["function_call"]
    served = _served(url, called)
    assert count_after == count + 1
    assert before - after == burnt(served)

    before, deployed, after = found["deploy"]
    served = _served(url, deployed)
    assert before - after == burnt(served)
    code = rpc(url, "query", {"request_type": "view_code", "account_id": served["transaction"]["signer_id"],
                              "finality": "final"})["result"]  # fmt: skip
    assert base64.b64decode(code["code_base64"]) == COUNTER_WASM.read_bytes()
    assert code["hash"] == based58.b58encode(hashlib.sha256(COUNTER_WASM.read_bytes()).digest()).decode()
    _served(url, found["deployed_call"])
    assert found["deployed_count"] == 1

    assert ("ft" in found) == token.is_file()
    if "ft" in found:
        ft = found["ft"]
        for name in ("deploy", "new"):
            assert "SuccessValue" in _served(url, ft[name])["status"], name
        before, between, after = ft["paid"]
        deposit, moved = _served(url, ft["storage_deposit"]), _served(url, ft["ft_transfer"])
        assert before - between == ft["bound"] + burnt(deposit)  # exactly the bound: none of it comes back
        assert between - after == 1 + burnt(moved)
        assert ft["balances"] == [str(1_000_000 - 250), "250"]

    assert isinstance(found["bad_nonce"], InvalidNonce), found["bad_nonce"]
    assert isinstance(found["no_balance"], NotEnoughBalance), found["no_balance"]
    # a failed call is a result, not a raise: py-near parses its receipt's Failure into its class
    failed = _served(url, found["no_code"])
    (error,) = [o.error for o in found["no_code"].receipt_outcome if o.error is not None]
    assert isinstance(error, FunctionCallError), error
    no_code = {"CodeDoesNotExist": {"account_id": failed["transaction"]["receiver_id"]}}
    assert error.error == {"CompilationError": no_code}
    assert failed["transaction"]["signer_id"] == me
