"""near-api-js running near-sdk-rs's cross-contract flows against `nearrpc serve --sandbox`
(sandbox_cross_contract.mjs): ft_transfer_call to the DeFi example, whose callback refunds the 10
tokens the receiver gave back, and nft_transfer_call to the token receiver, which keeps it after a
call of its own. What the library got is what `tx` answers; the callback's refund shows in
EXPERIMENTAL_tx_status's receipts and in the block's data changes, caused by that receipt."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from nearrpc.testing.server import NearrpcSandbox
from tests.client.node_scripts import run_script
from tests.client.sandbox_outcomes import read_back, rpc
from tests.conftest import reference_dir

pytestmark = pytest.mark.live
SCRIPT = Path(__file__).resolve().parent / "sandbox_cross_contract.mjs"
WASMS = ("new_fungible_token.wasm", "defi.wasm", "new_non_fungible_token.wasm", "token_receiver.wasm")


def cross_contract_answers(
    near_api_js: Path, url: str, account_id: str, secret_key: str, folder: Path
) -> dict[str, Any]:
    paths = [reference_dir() / "contracts" / name for name in WASMS]
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        pytest.skip(f"{missing} not found (set NEARRPC_REFERENCE_DIR)")
    return run_script(SCRIPT, near_api_js, folder, url, account_id, secret_key, *map(str, paths))


def _value(answer: dict[str, Any]) -> Any:
    status = answer["returned"]["status"]
    assert "SuccessValue" in status, answer
    return json.loads(base64.b64decode(status["SuccessValue"]))


def check_cross_contract_answers(url: str, account_id: str, answers: dict[str, Any]) -> None:
    token, defi = f"token.{account_id}", f"defi.{account_id}"
    for name in ("token_create", "token_deploy", "token_init", "defi_init", "nft_init", "receiver_init", "ft_register"):
        assert "SuccessValue" in answers[name]["returned"]["status"], (name, answers[name])

    moved = answers["ft_transfer_call"]["returned"]
    read_back(url, moved)
    assert _value(answers["ft_transfer_call"]) == "90"  # ft_resolve_transfer: the amount used
    assert [b["returned"] for b in answers["ft_balances"]] == ["910", "90"]
    assert answers["ft_total_supply"]["returned"] == "1000"

    asked = {"tx_hash": moved["transaction"]["hash"], "sender_account_id": account_id, "wait_until": "FINAL"}
    status = rpc(url, "EXPERIMENTAL_tx_status", asked)["result"]
    receipts = {r["receipt_id"]: r for r in status["receipts"]}
    resolved = [
        o for o in status["receipts_outcome"]
        if o["outcome"]["executor_id"] == token and any('"memo":"refund"' in line for line in o["outcome"]["logs"])
    ]  # fmt: skip
    assert len(resolved) == 1, status["receipts_outcome"]
    callback = resolved[0]
    (action,) = receipts[callback["id"]]["receipt"]["Action"]["actions"]
    assert action["FunctionCall"]["method_name"] == "ft_resolve_transfer"
    assert receipts[callback["id"]]["predecessor_id"] == token
    # the receipt waited for the receiver's answer: it names the data it was given
    assert receipts[callback["id"]]["receipt"]["Action"]["input_data_ids"]
    # the refund changed the token's storage in the callback's block, caused by the callback
    asked = {"changes_type": "data_changes", "account_ids": [token], "key_prefix_base64": "",
             "block_id": callback["block_hash"]}  # fmt: skip
    changes = rpc(url, "EXPERIMENTAL_changes", asked)["result"]["changes"]
    assert {"type": "receipt_processing", "receipt_hash": callback["id"]} in [c["cause"] for c in changes]
    assert defi in {o["outcome"]["executor_id"] for o in status["receipts_outcome"]}

    minted = answers["nft_mint"]["returned"]
    read_back(url, minted)
    kept = answers["nft_transfer_call"]["returned"]
    read_back(url, kept)
    assert _value(answers["nft_transfer_call"]) is True  # nft_resolve_transfer: the receiver kept it
    assert answers["nft_token"]["returned"]["owner_id"] == f"receiver.{account_id}"


def test_near_api_js_runs_cross_contract_flows(
    near_api_js: Path, nearrpc_sandbox: NearrpcSandbox, tmp_path: Path
) -> None:
    funded = nearrpc_sandbox.funded
    answers = cross_contract_answers(near_api_js, nearrpc_sandbox.url, funded.account_id, funded.secret_key, tmp_path)
    check_cross_contract_answers(nearrpc_sandbox.url, funded.account_id, answers)
