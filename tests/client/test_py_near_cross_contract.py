"""py-near running near-sdk-rs's cross-contract flows against `nearrpc serve --sandbox`: the
fungible token's ft_transfer_call to the DeFi example accepting all, part and none of the amount
(the token's callback refunds 0, 10 and 100), and the NFT's nft_transfer_call to the token
receiver that sends it back. Balances and total supply are what the contracts' sources say; what
py-near got is what `tx` answers."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest
from py_near.account import Account

from nearrpc.sample_keys import full_access_label, key_pair
from nearrpc.testing.facts import FundedAccount
from nearrpc.testing.server import NearrpcSandbox, sandbox_call
from tests.client.sandbox_outcomes import rpc
from tests.conftest import reference_dir
from tests.support.serve_process import serving

pytestmark = pytest.mark.live
NEAR = 10**24
ALICE = "alice.localnet"
TGAS = 10**12


def _wasm(name: str) -> bytes:
    path = reference_dir() / "contracts" / name
    if not path.is_file():
        pytest.skip(f"{path} not found (set NEARRPC_REFERENCE_DIR)")
    return path.read_bytes()


def _value(result: Any) -> Any:
    assert "SuccessValue" in result.status, result.status
    return json.loads(base64.b64decode(result.status["SuccessValue"]))


def _same_as_served(url: str, result: Any) -> None:
    served = rpc(url, "tx", {"tx_hash": result.transaction.hash, "sender_account_id": result.transaction.signer_id,
                             "wait_until": "FINAL"})["result"]  # fmt: skip
    assert served["status"] == result.status
    assert [o["id"] for o in served["receipts_outcome"]] == [o.receipt_id for o in result.receipt_outcome]


async def _flows(url: str, funded: FundedAccount) -> dict[str, Any]:
    me = Account(funded.account_id, funded.secret_key, rpc_addr=url)
    await me.startup()
    found: dict[str, Any] = {}
    accounts = []
    try:

        async def contract(name: str, wasm: str, init: str, args: dict[str, Any]) -> str:
            account_id = f"{name}.{funded.account_id}"
            # a key of its own (py-near keeps a key's nonce for the process: a sub-account given the
            # funded key would leave a nonce no revert takes back), the same at every run
            pair = key_pair(full_access_label(account_id))
            await me.create_account(account_id, pair.public_key, 20 * NEAR)
            account = Account(account_id, pair.secret_key, rpc_addr=url)
            await account.startup()
            accounts.append(account)
            await account.deploy_contract(_wasm(wasm))
            await account.function_call(account_id, init, args, gas=100 * TGAS)
            return account_id

        token = await contract("token", "new_fungible_token.wasm", "new_default_meta",
                               {"owner_id": funded.account_id, "total_supply": "1000"})  # fmt: skip
        defi = await contract("defi", "defi.wasm", "new", {"fungible_token_account_id": token})
        bound = int((await me.view_function(token, "storage_balance_bounds", {})).result["min"])
        await me.function_call(token, "storage_deposit", {"account_id": defi}, amount=bound)
        for msg in ("take-my-money", "10", "100"):
            args = {"receiver_id": defi, "amount": "100", "msg": msg}
            result = await me.function_call(token, "ft_transfer_call", args, gas=150 * TGAS, amount=1)
            _same_as_served(url, result)
            balances = [(await me.view_function(token, "ft_balance_of", {"account_id": who})).result
                        for who in (funded.account_id, defi)]  # fmt: skip
            found[msg] = (_value(result), balances)
        found["supply"] = (await me.view_function(token, "ft_total_supply", {})).result

        nft = await contract("nft", "new_non_fungible_token.wasm", "new_default_meta", {"owner_id": funded.account_id})
        receiver = await contract("receiver", "token_receiver.wasm", "new", {"non_fungible_token_account_id": nft})
        await me.function_call(nft, "nft_mint", {"token_id": "0", "token_owner_id": funded.account_id,
                                                 "token_metadata": {"title": "t"}}, amount=NEAR // 10)  # fmt: skip
        args = {"receiver_id": receiver, "token_id": "0", "msg": "return-it-later"}
        result = await me.function_call(nft, "nft_transfer_call", args, gas=150 * TGAS, amount=1)
        _same_as_served(url, result)
        found["nft"] = (
            _value(result),
            (await me.view_function(nft, "nft_token", {"token_id": "0"})).result["owner_id"],
        )
    finally:
        for account in [me, *accounts]:
            await account.shutdown()
    return found


def _check(found: dict[str, Any], me: str) -> None:
    # keeps all, refunds 10 of 100, refunds all 100: used amounts and balances after each
    assert found["take-my-money"] == ("100", ["900", "100"])
    assert found["10"] == ("90", ["810", "190"])
    assert found["100"] == ("0", ["810", "190"])
    assert found["supply"] == "1000"
    assert found["nft"] == (False, me)  # returned to the sender: the receiver did not keep it


def test_py_near_runs_cross_contract_flows(nearrpc_sandbox: NearrpcSandbox) -> None:
    _check(asyncio.run(_flows(nearrpc_sandbox.url, nearrpc_sandbox.funded)), nearrpc_sandbox.funded.account_id)


@pytest.mark.deep  # three servers: the upstream, the fork recording, the fork replaying
def test_py_near_flows_through_a_sandboxed_fork_replay_offline(sample_store: Path, tmp_path: Path) -> None:
    """The same flows through a sandboxed fork of another nearrpc, recorded while it runs, then
    run again from the same point with the upstream stopped: the same values and balances."""
    pair = key_pair(full_access_label(ALICE))
    funded = FundedAccount(ALICE, pair.public_key, pair.secret_key, 0)
    store = tmp_path / "fork.sqlite"
    with serving("--store", sample_store, log=tmp_path / "upstream.log") as upstream:
        fork_args = ("--store", store, "--upstream", upstream.url + "/", "--sandbox")
        with serving(*fork_args, log=tmp_path / "fork.log") as fork:
            mark = sandbox_call(fork.url, "sandbox_snapshot", {})
            recorded = asyncio.run(_flows(fork.url, funded))
            sandbox_call(fork.url, "sandbox_revert", {"snapshot_id": str(mark["snapshot_id"])})
    _check(recorded, ALICE)
    with serving(*fork_args, log=tmp_path / "replay.log") as fork:
        replayed = asyncio.run(_flows(fork.url, funded))
    assert replayed == recorded
