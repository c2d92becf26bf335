"""The chain writer's entry: signed transactions as their borsh bytes, checked on arrival and
applied in a block; what cannot be decoded or is no longer valid is refused or dropped."""

from __future__ import annotations

import pytest

from nearrpc.sandbox.runtime.apply import SandboxRuntime
from nearrpc.sandbox.runtime.decode import TransactionDecodeError
from nearrpc.sandbox.runtime.encode import public_key_of, sign_transaction
from nearrpc.sandbox.runtime.model import AccessKey, Account, Receipt, Transaction, TransactionRefused, Transfer
from tests.sandbox.runtime_support import NEAR, Chain
from tests.sandbox.support import ed25519_secret

SECRET = ed25519_secret("alice")


def _chain() -> Chain:
    chain = Chain()
    chain.state.accounts["alice.test"] = Account(10 * NEAR, 0, "11111111111111111111111111111111", 182)
    chain.state.keys[("alice.test", public_key_of(SECRET))] = AccessKey(nonce=5, permission=None)
    chain.state.accounts["bob.test"] = Account(NEAR, 0, "11111111111111111111111111111111", 182)
    return chain


def _transfer(chain: Chain, nonce: int) -> bytes:
    tx = Transaction("alice.test", public_key_of(SECRET), nonce, "bob.test", chain.block_hash, (Transfer(NEAR),))
    return sign_transaction(tx, SECRET)


def test_check_then_apply_the_same_bytes() -> None:
    chain = _chain()
    runtime = SandboxRuntime()
    raw = _transfer(chain, 6)
    checked = runtime.check_transaction(chain.state, chain.context(), raw)
    result = runtime.apply_block(chain.state, chain.context(), [raw], [])
    applied = result.transactions[0]
    assert (checked.tx_hash, checked.view) == (applied.tx_hash, applied.view)
    assert checked.outcome == applied.outcome
    assert result.changes.access_keys[("alice.test", public_key_of(SECRET))].nonce == 6  # type: ignore[union-attr]


def test_a_stale_nonce_is_refused_on_arrival_and_dropped_from_a_block() -> None:
    chain = _chain()
    runtime = SandboxRuntime()
    raw = _transfer(chain, 5)
    with pytest.raises(TransactionRefused) as refused:
        runtime.check_transaction(chain.state, chain.context(), raw)
    assert refused.value.error == {"InvalidNonce": {"tx_nonce": 5, "ak_nonce": 5}}
    result = runtime.apply_block(chain.state, chain.context(), [raw, b"\x00garbage"], [])
    assert not result.transactions and not result.receipts and not result.changes.accounts


def test_bytes_that_are_no_transaction_are_a_decode_error() -> None:
    chain = _chain()
    with pytest.raises(TransactionDecodeError):
        SandboxRuntime().check_transaction(chain.state, chain.context(), b"\x01")


def test_a_carried_receipt_without_its_decoded_actions_is_read_from_its_view() -> None:
    chain = _chain()
    runtime = SandboxRuntime()
    first = runtime.apply_block(chain.state, chain.context(), [_transfer(chain, 6)], [])
    chain.state.apply(first.changes)
    carried = first.outgoing[0]
    bare = Receipt(view=carried.view, produced_at=carried.produced_at)  # as a store would keep it
    chain.height += 1
    with_actions = runtime.apply_block(chain.state, chain.context(), [], [carried])
    from_view = runtime.apply_block(chain.state, chain.context(), [], [bare])
    assert with_actions.receipts == from_view.receipts
    assert from_view.changes.accounts["bob.test"].amount == 2 * NEAR  # type: ignore[union-attr]
