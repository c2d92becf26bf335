"""The sample chain's transactions, chunks, receipts and validators through two published Python
clients, as their users write them, against the suite's server over the sample store (each
backend): near-jsonrpc-client's tx, EXPERIMENTAL_tx_status, chunk (both references),
EXPERIMENTAL_receipt, validators, EXPERIMENTAL_validators_ordered and the changes methods (both
names of each), and py-near's get_tx,
get_tx_status, get_chunk and get_validators. Each answer is what the sample stores; a hash the
chain does not have is each client's own error."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import near_jsonrpc_models as m
import pytest
from near_jsonrpc_client import NearClientSync, RpcError
from py_near.exceptions.provider import InternalError
from py_near.models import TransactionResult
from py_near.providers import JsonProvider

from nearrpc.conform.facts import UNKNOWN_HASH
from tests.client.chain import hash_at, stored_account
from tests.client.chain_records import (
    account_change,
    chain_records,
    first_transfer,
    receipt_ids,
    tx_result,
    tx_status,
    view,
)
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.live
R = chain_records()


def _json(model: Any) -> Any:
    """A client's model as the JSON it was read from (members it was not sent stay out)."""
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def _cause(error: RpcError) -> Any:
    return error.error.error.root.cause.root


def _block(height_or_hash: int | str) -> m.BlockId:
    if isinstance(height_or_hash, int):
        return m.BlockId(m.BlockIdBlockHeight(height_or_hash))
    return m.BlockId(m.BlockIdCryptoHash(height_or_hash))


# -- near-jsonrpc-client


def _tx_request(tx_hash: str, sender: str, wait_until: str = "EXECUTED_OPTIMISTIC") -> m.RpcTransactionStatusRequest:
    return m.RpcTransactionStatusRequest(m.RpcTransactionStatusRequestSenderAccountIdTxHash(
        tx_hash=m.CryptoHash(tx_hash), sender_account_id=m.AccountId(sender),
        wait_until=m.TxExecutionStatus(wait_until),
    ))  # fmt: skip


def test_near_jsonrpc_client_tx_and_its_receipts(near: NearClientSync) -> None:
    assert R.transactions, "the sample stores no transaction"
    for tx in R.transactions:
        request = _tx_request(tx.tx_hash, tx.signer_id)
        assert _json(near.tx(params=request)) == tx_result(tx)
        assert _json(near.experimental_tx_status(params=request)) == tx_status(tx)
        for receipt_id in receipt_ids(tx):
            receipt = near.experimental_receipt(params=m.RpcReceiptRequest(receipt_id=m.CryptoHash(receipt_id)))
            assert _json(receipt) == R.receipt(receipt_id)


def test_near_jsonrpc_client_chunk_by_hash_and_by_block_and_shard(near: NearClientSync) -> None:
    for chunk in R.chunks_with_transactions():
        chunk_id = m.CryptoHash(chunk.chunk_hash)
        by_hash = near.chunk(params=m.RpcChunkRequest(m.RpcChunkRequestChunkHash(chunk_id=chunk_id)))
        by_block = near.chunk(params=m.RpcChunkRequest(m.RpcChunkRequestBlockShardId(
            block_id=_block(chunk.block_hash), shard_id=m.ShardId(chunk.shard_id))))  # fmt: skip
        by_height = near.chunk(params=m.RpcChunkRequest(m.RpcChunkRequestBlockShardId(
            block_id=_block(chunk.height), shard_id=m.ShardId(chunk.shard_id))))  # fmt: skip
        assert _json(by_hash) == _json(by_block) == _json(by_height) == view(chunk.view_json)


def test_near_jsonrpc_client_validators(near: NearClientSync) -> None:
    for epoch_id, last_height in R.finished_epochs():
        by_epoch = near.validators(params=m.RpcValidatorRequest(m.RpcValidatorRequestEpochId(
            epoch_id=m.CryptoHash(epoch_id))))  # fmt: skip
        by_block = near.validators(params=m.RpcValidatorRequest(m.RpcValidatorRequestBlockId(
            block_id=_block(last_height))))  # fmt: skip
        assert _json(by_epoch) == _json(by_block) == R.epoch_validators(epoch_id)
    ordered = near.experimental_validators_ordered(params=m.RpcValidatorsOrderedRequest(block_id=None))
    current = R.current_validators()
    # the block producers in order, with repetition: each one of the epoch's validators
    names = {_json(stake)["account_id"] for stake in ordered}
    assert names and names <= {v["account_id"] for v in current["current_validators"]}


def test_near_jsonrpc_client_unknown_transaction_chunk_and_receipt(near: NearClientSync) -> None:
    sender = R.transactions[0].signer_id
    with pytest.raises(RpcError) as tx:  # wait_until NONE: at once (else nearcore polls, then times out)
        near.tx(params=_tx_request(UNKNOWN_HASH, sender, "NONE"))
    cause = _cause(tx.value)
    assert (cause.name, cause.info.requested_transaction_hash.root) == ("UNKNOWN_TRANSACTION", UNKNOWN_HASH)
    with pytest.raises(RpcError) as chunk:
        near.chunk(params=m.RpcChunkRequest(m.RpcChunkRequestChunkHash(chunk_id=m.CryptoHash(UNKNOWN_HASH))))
    cause = _cause(chunk.value)
    assert (cause.name, cause.info.chunk_hash.root) == ("UNKNOWN_CHUNK", UNKNOWN_HASH)
    with pytest.raises(RpcError) as receipt:
        near.experimental_receipt(params=m.RpcReceiptRequest(receipt_id=m.CryptoHash(UNKNOWN_HASH)))
    cause = _cause(receipt.value)
    assert (cause.name, cause.info.receipt_id.root) == ("UNKNOWN_RECEIPT", UNKNOWN_HASH)


# -- py-near: JsonProvider (asyncio, aiohttp)


def _py_near(server: LiveServer, call: Callable[[JsonProvider], Awaitable[Any]]) -> Any:
    """What `call` returned, or the exception it raised (the SDK's own error is the answer)."""

    async def run() -> Any:
        provider = JsonProvider(server.url)
        try:
            return await call(provider)
        except Exception as error:
            return error
        finally:
            await provider.shutdown()

    return asyncio.run(run())


def test_py_near_get_tx_and_get_tx_status(server: LiveServer) -> None:
    async def every(provider: JsonProvider) -> list[tuple[TransactionResult, TransactionResult]]:
        return [
            (await provider.get_tx(tx.tx_hash, tx.signer_id), await provider.get_tx_status(tx.tx_hash, tx.signer_id))
            for tx in R.transactions
        ]

    for tx, (result, status) in zip(R.transactions, _py_near(server, every), strict=True):
        stored = tx_status(tx)
        for answer in (result, status):
            assert (answer.transaction.hash, answer.transaction.signer_id) == (tx.tx_hash, tx.signer_id)
            assert answer.status == stored["status"]
            assert answer.transaction_outcome.receipt_id == tx.tx_hash
            assert [o.receipt_id for o in answer.receipt_outcome] == receipt_ids(tx)
            assert answer.logs == [log for o in [stored["transaction_outcome"], *stored["receipts_outcome"]]
                                   for log in o["outcome"]["logs"]]  # fmt: skip
        assert status.receipts == stored["receipts"] and result.receipts == []


def test_py_near_get_chunk(server: LiveServer) -> None:
    chunks = R.chunks_with_transactions()

    async def every(provider: JsonProvider) -> list[Any]:
        return [await provider.get_chunk(chunk.chunk_hash) for chunk in chunks]

    assert _py_near(server, every) == [view(chunk.view_json) for chunk in chunks]


def test_py_near_get_validators(server: LiveServer) -> None:
    assert _py_near(server, JsonProvider.get_validators) == R.current_validators()


def test_py_near_unknown_transaction(server: LiveServer) -> None:
    sender = R.transactions[0].signer_id
    unknown = _py_near(server, lambda provider: provider.get_tx(UNKNOWN_HASH, sender))
    # get_tx asks [hash, sender], whose wait_until is EXECUTED_OPTIMISTIC: nearcore polls for the
    # transaction and answers TIMEOUT_ERROR with HTTP 408, which py-near reads as an HTTP failure
    # (its RPC_ERROR) and raises as its catch-all InternalError, with the body as sent
    assert type(unknown) is InternalError, unknown
    assert unknown.error_json["cause"] == {"name": "RPC_ERROR", "message": "Status: 408"}
    assert json.loads(unknown.error_json["data"])["error"]["cause"] == {"name": "TIMEOUT_ERROR"}


# -- the changes methods: what a transfer changed, block by block


def _changes_request(kind: str, accounts: list[str], height: int) -> m.RpcStateChangesInBlockByTypeRequest:
    return m.RpcStateChangesInBlockByTypeRequest(m.RpcStateChangesInBlockByTypeRequestAccountChangesByBlockId(
        block_id=_block(height), changes_type=kind, account_ids=[m.AccountId(a) for a in accounts]))  # fmt: skip


def _held_to_the_store(change: dict[str, Any], height: int) -> None:
    account = change["account_id"]
    assert {k: v for k, v in change.items() if k != "account_id"} == stored_account(account, height)


def test_near_jsonrpc_client_changes_of_a_transfer(near: NearClientSync) -> None:
    transfer = first_transfer()
    in_block = m.RpcStateChangesInBlockRequest(m.RpcStateChangesInBlockRequestBlockId(block_id=_block(transfer.height)))
    for touched in (near.experimental_changes_in_block(params=in_block), near.block_effects(params=in_block)):
        answer = _json(touched)
        assert answer["block_hash"] == hash_at(transfer.height)
        assert {"type": "account_touched", "account_id": transfer.signer_id} in answer["changes"]
    by_signer = _changes_request("account_changes", [transfer.signer_id], transfer.height)
    by_receiver = _changes_request("account_changes", [transfer.receiver_id], transfer.receipt_height)
    for ask in (near.experimental_changes, near.changes):
        signer = _json(ask(params=by_signer))["changes"]
        change = account_change(signer, transfer.signer_id, {"type": "transaction_processing",
                                                            "tx_hash": transfer.tx_hash})  # fmt: skip
        _held_to_the_store(change, transfer.height)
        receiver = _json(ask(params=by_receiver))["changes"]
        change = account_change(receiver, transfer.receiver_id, {"type": "receipt_processing",
                                                                "receipt_hash": transfer.receipt_id})  # fmt: skip
        _held_to_the_store(change, transfer.receipt_height)
