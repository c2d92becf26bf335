"""near-api-js, the published NEAR JavaScript client, making an application's first calls through
its own provider (first_calls.mjs: status, view_account, view_access_key_list, gas_price, block)
against the plugin's `nearrpc_server` over the sample chain, in one node process. Each answer is
the sample chain's, as the store holds it (methods beyond interface 1.2.14)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nearrpc.testing.server import NearrpcServer
from tests.client.chain import hash_at, stored_access_keys, stored_account, stored_block
from tests.client.node_scripts import run_script
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.live
ACCOUNT = "alice.localnet"
SCRIPT = Path(__file__).resolve().parent / "first_calls.mjs"


def _big(number: int | str) -> str:
    """How first_calls.mjs writes the BigInt the library made of `number`."""
    return f"{number}n"


def test_an_applications_first_calls_through_near_api_js(
    near_api_js: Path, nearrpc_server: NearrpcServer, tmp_path: Path
) -> None:
    facts = sample_facts()
    final = facts.final_height
    stored_keys = stored_access_keys(ACCOUNT, final)
    absent_key = next(key for account, key in nearrpc_server.facts.access_keys if account != ACCOUNT)
    assert absent_key not in [k["public_key"] for k in stored_keys]
    missing = nearrpc_server.facts.missing_account
    answers = run_script(SCRIPT, near_api_js, tmp_path, nearrpc_server.url, ACCOUNT, missing, absent_key)

    status = answers["status"]
    assert status["chain_id"] == facts.chain_id
    assert status["genesis_hash"] == facts.genesis_hash
    assert status["sync_info"]["latest_block_height"] == facts.head_height
    assert status["sync_info"]["latest_block_hash"] == facts.head_hash
    assert [v["account_id"] for v in status["validators"]] == list(facts.validators)
    head = facts.head_height

    # viewAccount makes BigInts of the amounts; exact, though the amount is far above 2**53
    stored = stored_account(ACCOUNT, head)
    assert stored is not None
    account = answers["account"]
    assert (account["amount"], account["locked"]) == (_big(stored["amount"]), _big(stored["locked"]))
    assert (account["block_height"], account["block_hash"]) == (head, hash_at(head))
    stored_final = stored_account(ACCOUNT, final)
    assert stored_final is not None
    assert answers["account_query"] == {**stored_final, "block_height": final, "block_hash": hash_at(final)}

    # the whole listing: keys in nearcore's order, nonces and permissions as stored
    assert answers["access_key_list"] == {"keys": stored_keys, "block_height": final, "block_hash": hash_at(final)}
    at_head = {"keys": stored_access_keys(ACCOUNT, head), "block_height": head, "block_hash": hash_at(head)}
    assert answers["access_key_list_query"] == at_head
    first = stored_keys[0]["access_key"]
    assert answers["access_key"] == {
        "nonce": _big(first["nonce"]), "permission": first["permission"], "block_height": final,
        "block_hash": hash_at(final),
    }  # fmt: skip

    assert answers["gas_price_head"] == {"gas_price": stored_block(head)["header"]["gas_price"]}
    assert answers["gas_price_latest"] == {"gas_price": stored_block(facts.head_height)["header"]["gas_price"]}

    # the block as stored, but for one number: the library reads answers with JSON.parse, so the
    # header's nanosecond timestamp (above 2**53) comes back as the nearest double, as it does from
    # a node; timestamp_nanosec, the same instant as a string, is exact
    block, stored_head = answers["block"], stored_block(head)
    timestamp = stored_head["header"]["timestamp"]
    assert float(block["header"]["timestamp"]) == float(timestamp)
    assert block["header"]["timestamp_nanosec"] == str(timestamp)
    assert block == {**stored_head, "header": {**stored_head["header"], "timestamp": block["header"]["timestamp"]}}
    previous = facts.block_heights[facts.block_heights.index(head) - 1]
    assert answers["block_by_hash"]["header"]["hash"] == hash_at(previous) == block["header"]["prev_hash"]

    # what does not exist, as the library's typed errors
    gone = answers["missing_account"]
    assert gone["class"] == "AccountDoesNotExistError", gone
    assert (gone["accountId"], gone["blockHeight"], gone["blockHash"]) == (missing, head, hash_at(head))
    absent = answers["missing_access_key"]
    assert absent["class"] == "AccessKeyDoesNotExistError", absent
    assert (absent["publicKey"], absent["blockHeight"], absent["blockHash"]) == (absent_key, final, hash_at(final))
