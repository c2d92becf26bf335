"""What the sandbox's client tests check of a transaction a client sent: its outcome read back
through `tx` and the changes methods, and the fees it burnt (the outcomes' own tokens_burnt, so no
fee constant is assumed here)."""

from __future__ import annotations

from typing import Any

import httpx


def rpc(url: str, method: str, params: object) -> dict[str, Any]:
    answer: dict[str, Any] = httpx.post(
        url, json={"jsonrpc": "2.0", "id": "sandbox-client", "method": method, "params": params}, timeout=30.0
    ).json()
    return answer


def burnt(outcome: dict[str, Any]) -> int:
    """The tokens a final execution outcome burnt: its transaction's and every receipt's."""
    ran = [outcome["transaction_outcome"], *outcome["receipts_outcome"]]
    return sum(int(o["outcome"]["tokens_burnt"]) for o in ran)


def lost_refunds(url: str, outcome: dict[str, Any]) -> int:
    """What the transaction's refunds that failed took out of circulation: a refund (from
    `system`) to an account deleted meanwhile fails, and nearcore burns its deposit without
    counting it in any outcome's tokens_burnt (runtime/runtime/src/lib.rs, a system receipt's
    failure: other_burnt_amount)."""
    transaction = outcome["transaction"]
    status = rpc(
        url,
        "EXPERIMENTAL_tx_status",
        {"tx_hash": transaction["hash"], "sender_account_id": transaction["signer_id"], "wait_until": "FINAL"},
    )["result"]
    failed = {o["id"] for o in status["receipts_outcome"] if "Failure" in o["outcome"]["status"]}
    return sum(
        int(action["Transfer"]["deposit"])
        for receipt in status["receipts"]
        if receipt["predecessor_id"] == "system" and receipt["receipt_id"] in failed
        for action in receipt["receipt"]["Action"]["actions"]
        if isinstance(action, dict) and "Transfer" in action
    )


def balance(url: str, account_id: str) -> int | None:
    """The account's amount at finality final; None when it does not exist."""
    answer = rpc(url, "query", {"request_type": "view_account", "account_id": account_id, "finality": "final"})
    return int(answer["result"]["amount"]) if "result" in answer else None


def read_back(url: str, outcome: dict[str, Any]) -> None:
    """`tx` answers the outcome the client got, and the changes of each block an outcome ran in
    name the transaction and its receipts as their causes."""
    transaction = outcome["transaction"]
    again = rpc(url, "tx", {"tx_hash": transaction["hash"], "sender_account_id": transaction["signer_id"],
                            "wait_until": "FINAL"})["result"]  # fmt: skip
    assert again["final_execution_status"] == "FINAL"
    for part in ("status", "transaction", "transaction_outcome", "receipts_outcome"):
        assert again[part] == outcome[part], part
    causes: set[tuple[str, str]] = set()
    for ran in [outcome["transaction_outcome"], *outcome["receipts_outcome"]]:
        touched = sorted({transaction["signer_id"], transaction["receiver_id"], ran["outcome"]["executor_id"]})
        changes = rpc(url, "EXPERIMENTAL_changes", {"changes_type": "account_changes", "account_ids": touched,
                                                     "block_id": ran["block_hash"]})["result"]["changes"]  # fmt: skip
        for change in changes:
            cause = change["cause"]
            causes.add((cause["type"], cause.get("tx_hash") or cause.get("receipt_hash") or ""))
    # nearcore lists each change of a block with its cause: the signer's charge is there even when
    # its receipt (a transaction to its own signer) changed the account again in the same block
    ids = {o["id"] for o in outcome["receipts_outcome"]}
    assert ("transaction_processing", transaction["hash"]) in causes, causes
    # the blocks hold this transaction alone (a test sends one at a time): every change they show
    # of these accounts is caused by it or one of its receipts (a processing, a refund, or a
    # contract's share of the gas as action_receipt_gas_reward)
    assert all(named == transaction["hash"] or named in ids for _, named in causes), causes
