"""The calls a client makes first, through the published client's own API, in its order:
status, query view_account, query view_access_key_list, gas_price, block. Each answer is the
sample chain's (methods beyond interface 1.2.14)."""

from __future__ import annotations

from typing import Any

import near_jsonrpc_models as m
import pytest
from near_jsonrpc_client import NearClientSync

from tests.client.chain import hash_at, stored_access_keys, stored_account, stored_block
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.live
ACCOUNT = "alice.localnet"


def _view(response: Any) -> Any:
    """The view inside a RpcQueryResponse (an anyOf the client keeps as a root model)."""
    return response.root if hasattr(response, "root") else response


def test_a_clients_first_calls(near: NearClientSync) -> None:
    facts = sample_facts()

    status = near.status()
    assert status.chain_id == facts.chain_id
    assert status.genesis_hash.root == facts.genesis_hash
    assert status.sync_info.latest_block_height == facts.head_height
    assert [v.account_id.root for v in status.validators] == list(facts.validators)
    head = status.sync_info.latest_block_height

    account = _view(
        near.query(
            params=m.RpcQueryRequest(
                m.RpcQueryRequestViewAccountByBlockId(block_id=head, account_id=ACCOUNT, request_type="view_account")
            )
        )
    )
    stored = stored_account(ACCOUNT, head)
    assert stored is not None
    assert (account.amount.root, account.block_height, account.block_hash.root) == (
        stored["amount"], head, hash_at(head),
    )  # fmt: skip

    keys = _view(
        near.query(
            params=m.RpcQueryRequest(
                m.RpcQueryRequestViewAccessKeyListByFinality(
                    finality="final", account_id=ACCOUNT, request_type="view_access_key_list"
                )
            )
        )
    )
    assert keys.block_height == facts.final_height
    stored_keys = stored_access_keys(ACCOUNT, facts.final_height)
    assert [k.public_key.root for k in keys.keys] == [k["public_key"] for k in stored_keys]

    gas = near.gas_price(params=m.RpcGasPriceRequest(block_id=head))
    assert gas.gas_price.root == stored_block(head)["header"]["gas_price"]
    latest = near.gas_price(params=m.RpcGasPriceRequest(block_id=None))
    assert latest.gas_price.root == stored_block(facts.head_height)["header"]["gas_price"]

    block = near.block(params=m.RpcBlockRequest(m.RpcBlockRequestBlockId(block_id=head)))
    assert block.header.hash.root == hash_at(head)


def test_access_keys_and_code_through_the_experimental_methods(near: NearClientSync) -> None:
    facts = sample_facts()
    by_finality = m.RpcViewAccessKeyListRequestFinality(finality="final", account_id=ACCOUNT)
    listed = near.experimental_view_access_key_list(params=m.RpcViewAccessKeyListRequest(by_finality))
    first = listed.keys[0]
    key = near.experimental_view_access_key(
        params=m.RpcViewAccessKeyRequest(
            m.RpcViewAccessKeyRequestFinality(finality="final", account_id=ACCOUNT, public_key=first.public_key.root)
        )
    )
    assert key.nonce == first.access_key.nonce
    code = near.experimental_view_code(
        params=m.RpcViewCodeRequest(m.RpcViewCodeRequestFinality(finality="final", account_id=facts.contract_account))
    )
    assert code.hash.root == facts.contract_code_hash
    assert code.block_height == facts.final_height
