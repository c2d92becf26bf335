"""near-api-js, the published NEAR JavaScript client, writing to `nearrpc serve --sandbox` through
its own Account (sandbox_writes.mjs): a transfer, calls on the sample's counter, a sub-account
created, given the counter's code, a key added and deleted, a signed delegate relayed, the
sub-account deleted, with the funded account and secret key the plugin's facts give. Each outcome
is read back through `tx` and the changes; each balance moves by exactly the amount and the
tokens the outcomes burnt; the refusals are the library's own error classes."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import based58
import pytest

from nearrpc.testing.server import NearrpcSandbox
from tests.client.node_scripts import run_script
from tests.client.sandbox_outcomes import burnt, lost_refunds, read_back, rpc
from tests.conftest import reference_dir

pytestmark = pytest.mark.live
SCRIPT = Path(__file__).resolve().parent / "sandbox_writes.mjs"
COUNTER_WASM = Path(__file__).resolve().parents[2] / "service" / "sample" / "contracts" / "counter.wasm"
NEAR = 10**24


def _moved(step: dict[str, Any], account_id: str) -> int:
    """How much `account_id`'s balance went down over the step."""
    return int(step["before"][account_id]) - int(step["after"][account_id])


def _outcome(step: dict[str, Any]) -> dict[str, Any]:
    returned: dict[str, Any] = step["answer"]["returned"]
    assert "SuccessValue" in returned["status"], returned
    return returned


def test_near_api_js_writes_to_the_sandbox(near_api_js: Path, nearrpc_sandbox: NearrpcSandbox, tmp_path: Path) -> None:
    url, funded = nearrpc_sandbox.url, nearrpc_sandbox.funded
    receiver = nearrpc_sandbox.facts.funded_accounts[1].account_id
    me, sub = funded.account_id, f"sub.{funded.account_id}"
    token = reference_dir() / "contracts" / "new_fungible_token.wasm"  # near-sdk's, when the reference is there
    extra = [str(token)] if token.is_file() else []
    answers = run_script(SCRIPT, near_api_js, tmp_path, url, me, funded.secret_key, receiver, str(COUNTER_WASM), *extra)

    transfer = _outcome(answers["transfer"])
    read_back(url, transfer)
    assert _moved(answers["transfer"], me) == NEAR + burnt(transfer)
    assert _moved(answers["transfer"], receiver) == -NEAR
    # the total supply goes down by the tokens burnt alone (within one epoch: no reward minted). A
    # block's total_supply counts the burn of the chunks it includes, each applied on the block
    # before (nearcore's Block::produce): from the transaction's block to the one after its last receipt
    first = rpc(url, "block", {"block_id": transfer["transaction_outcome"]["block_hash"]})["result"]["header"]
    last = rpc(url, "block", {"block_id": transfer["receipts_outcome"][-1]["block_hash"]})["result"]["header"]
    after = rpc(url, "block", {"block_id": last["height"] + 1})["result"]["header"]
    if first["epoch_id"] == after["epoch_id"]:
        assert int(first["total_supply"]) - int(after["total_supply"]) == burnt(transfer)

    # callFunction: the count moves; callFunctionRaw's outcome accounts for every yocto
    assert answers["count_after"]["returned"] == answers["count_before"]["returned"] + 1
    assert answers["increment"]["answer"] == {"returned": ""}
    assert _moved(answers["increment"], me) > 0
    decrement = _outcome(answers["decrement"])
    read_back(url, decrement)
    assert _moved(answers["decrement"], me) == burnt(decrement)

    created = _outcome(answers["create_account"])
    read_back(url, created)
    assert answers["create_account"]["before"][sub] is None
    assert int(answers["create_account"]["after"][sub]) == 10 * NEAR
    assert _moved(answers["create_account"], me) == 10 * NEAR + burnt(created)

    deployed = _outcome(answers["deploy"])
    read_back(url, deployed)
    assert _moved(answers["deploy"], sub) == burnt(deployed)
    code_hash = based58.b58encode(hashlib.sha256(COUNTER_WASM.read_bytes()).digest()).decode()
    assert answers["deployed_code"]["returned"]["hash"] == code_hash
    incremented = _outcome(answers["sub_increment"])
    assert _moved(answers["sub_increment"], sub) == burnt(incremented)
    assert answers["sub_count"] == {"returned": 1}

    added, deleted = _outcome(answers["add_key"]), _outcome(answers["delete_key"])
    read_back(url, added)
    read_back(url, deleted)
    assert answers["extra_key"] in answers["keys_after_add"]
    assert answers["extra_key"] not in answers["keys_after_delete"] and answers["keys_after_delete"]
    assert _moved(answers["add_key"], sub) == burnt(added)
    assert _moved(answers["delete_key"], sub) == burnt(deleted)

    # the relayer pays for the delegate; the delegating account pays nothing; the call lands
    relayed = _outcome(answers["relay"])
    read_back(url, relayed)
    assert answers["delegate_count_after"]["returned"] == answers["delegate_count_before"]["returned"] + 1
    assert _moved(answers["relay"], me) == burnt(relayed)
    assert _moved(answers["relay"], sub) == 0

    # the whole balance goes to the beneficiary, less what the deletion burnt, and less the gas
    # refund to the deleted account itself, which fails and is burnt (at protocol 85+ the gas
    # bought above the block's price comes back by that refund)
    gone = _outcome(answers["delete_account"])
    read_back(url, gone)
    assert answers["delete_account"]["after"][sub] is None
    lost = lost_refunds(url, gone)
    assert lost > 0
    assert -_moved(answers["delete_account"], me) == int(answers["delete_account"]["before"][sub]) - burnt(gone) - lost

    if extra:  # near-sdk's fungible token: deployed, initialized, a storage deposit, an ft_transfer
        for name in ("ft_create", "ft_deploy", "ft_new"):
            assert "SuccessValue" in answers[name]["returned"]["status"], answers[name]
        deposit = _outcome(answers["ft_storage_deposit"])
        read_back(url, deposit)
        # exactly the contract's bound: nothing of the deposit comes back, only the unused gas
        assert _moved(answers["ft_storage_deposit"], me) == int(answers["ft_bound"]) + burnt(deposit)
        moved = _outcome(answers["ft_transfer"])
        read_back(url, moved)
        assert any("ft_transfer" in log for o in moved["receipts_outcome"] for log in o["outcome"]["logs"])
        assert _moved(answers["ft_transfer"], me) == 1 + burnt(moved)  # the one yocto ft_transfer asks
        assert answers["ft_balances"] == [str(1_000_000 - 250), "250"]

    bad_nonce = answers["bad_nonce"]
    assert bad_nonce["class"] == "InvalidNonceError"
    assert bad_nonce["accessKeyNonce"] == bad_nonce["transactionNonce"] == int(answers["bad_nonce_ak_nonce"])
    no_balance = answers["no_balance"]
    assert (no_balance["class"], no_balance["signerId"]) == ("NotEnoughBalanceError", me)
    assert int(no_balance["cost"].rstrip("n")) > int(no_balance["balance"].rstrip("n"))
    no_code = answers["no_code"]
    assert (no_code["answer"]["class"], no_code["answer"]["contractId"]) == ("ContractCodeDoesNotExistError", receiver)
    assert _moved(no_code, me) > 0  # the failed call's gas is burnt all the same
