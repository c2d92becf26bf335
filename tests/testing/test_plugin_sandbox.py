"""The plugin's sandbox (issue 45, item 6): `nearrpc_sandbox` hands each test a funded account and
its secret key, and reverts what the test sent, so the next test starts from the same chain."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from nearrpc.sample import sample_chain
from nearrpc.sample.crypto import b58decode
from nearrpc.testing.facts import read_chain_facts
from tests.testing.test_plugin import run_pytest

SANDBOX_TESTS = """
import base64, json, os
import httpx
from nearrpc.sandbox.runtime import model
from nearrpc.sandbox.runtime.encode import sign_transaction

OUT = os.environ["PROBE_OUT"]


def rpc(url, method, params):
    return httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, timeout=30).json()


def balance(url, account_id):
    return int(rpc(url, "query", {"request_type": "view_account", "account_id": account_id,
                                  "finality": "final"})["result"]["amount"])


def nonce(url, funded):
    return rpc(url, "query", {"request_type": "view_access_key", "account_id": funded.account_id,
                              "public_key": funded.public_key, "finality": "final"})["result"]["nonce"]


def test_1_a_transfer_lands(nearrpc_sandbox):
    url, sender = nearrpc_sandbox.url, nearrpc_sandbox.funded
    receiver = nearrpc_sandbox.facts.funded_accounts[1].account_id
    assert balance(url, sender.account_id) == sender.balance
    final = rpc(url, "block", {"finality": "final"})["result"]["header"]["hash"]
    tx = model.Transaction(sender.account_id, sender.public_key, nonce(url, sender) + 1, receiver, final,
                           (model.Transfer(deposit=10**24),))
    sent = rpc(url, "broadcast_tx_commit", [base64.b64encode(sign_transaction(tx, sender.secret_key)).decode()])
    assert "SuccessValue" in sent["result"]["status"], sent
    burnt = sum(int(o["outcome"]["tokens_burnt"]) for o in [sent["result"]["transaction_outcome"],
                                                              *sent["result"]["receipts_outcome"]])
    assert balance(url, sender.account_id) == sender.balance - 10**24 - burnt
    with open(OUT, "w") as out:
        json.dump({"tx_hash": sent["result"]["transaction"]["hash"], "receiver": receiver,
                   "snapshot_id": nearrpc_sandbox.snapshot_id}, out)


def test_2_the_next_test_does_not_see_it(nearrpc_sandbox):
    url, sender = nearrpc_sandbox.url, nearrpc_sandbox.funded
    probe = json.load(open(OUT))
    assert balance(url, sender.account_id) == sender.balance
    receiver = [f for f in nearrpc_sandbox.facts.funded_accounts if f.account_id == probe["receiver"]][0]
    assert balance(url, receiver.account_id) == receiver.balance
    head = rpc(url, "block", {"finality": "final"})["result"]["header"]
    assert (head["height"], head["hash"]) == (nearrpc_sandbox.facts.final_height, nearrpc_sandbox.facts.final_hash)
    gone = rpc(url, "tx", {"tx_hash": probe["tx_hash"], "sender_account_id": sender.account_id})
    assert "result" not in gone and gone["error"]["cause"]["name"] in ("TIMEOUT_ERROR", "UNKNOWN_TRANSACTION"), gone


def test_3_fails_on_purpose(nearrpc_sandbox):
    rpc(nearrpc_sandbox.url, "block", {"block_id": 10**9})
    assert False, "the sandbox's log shows this request"
"""


def test_the_funded_accounts_sign_with_the_keys_the_sample_gave_them(sample_store: Path) -> None:
    funded = read_chain_facts(sample_store).funded_accounts
    assert len(funded) >= 2
    assert [f.balance for f in funded] == sorted((f.balance for f in funded), reverse=True)
    keys = {(row.account_id, row.public_key) for row in sample_chain().access_keys if row.view_json is not None}
    for account in funded:
        assert (account.account_id, account.public_key) in keys
        raw = b58decode(account.secret_key.removeprefix("ed25519:"))
        public = b58decode(account.public_key.removeprefix("ed25519:"))
        assert raw[32:] == public  # NEAR's 64-byte form: the seed, then the public key
        Ed25519PrivateKey.from_private_bytes(raw[:32]).public_key().verify(
            Ed25519PrivateKey.from_private_bytes(raw[:32]).sign(b"x"), b"x"
        )


@pytest.mark.live
@pytest.mark.deep  # a pytest run of a client suite against a sandbox: a scenario, as test_plugin.py's
def test_each_sandbox_test_starts_from_the_same_chain(tmp_path: Path) -> None:
    (tmp_path / "test_sandbox.py").write_text(SANDBOX_TESTS)
    probe = tmp_path / "probe.json"
    done = run_pytest(tmp_path, env={"PROBE_OUT": str(probe)})
    output = done.stdout + done.stderr
    assert "1 failed, 2 passed" in output, output
    served: dict[str, Any] = json.loads(probe.read_text())
    assert served["snapshot_id"]
    # the failing test's report carries the sandbox's log from its start: its request
    section = output.split("nearrpc server log (http://127.0.0.1:")[1].split("short test summary")[0]
    assert '"POST / HTTP/1.1"' in section, output
