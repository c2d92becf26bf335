"""Transactions and receipts: tx, EXPERIMENTAL_tx_status (a transaction's status measured by
the chain's final block), EXPERIMENTAL_receipt."""

from __future__ import annotations

import orjson

from nearrpc.generated import models
from nearrpc.methods import errors
from nearrpc.methods.blocks import BlockReference
from nearrpc.methods.handlers.resolution import Resolution, store_failures_are_internal
from nearrpc.methods.receipts import receipt_answer
from nearrpc.methods.sandbox_hooks import SandboxChain
from nearrpc.methods.transactions import (
    INCLUDED,
    INCLUDED_FINAL,
    TransactionRequest,
    transaction_answer,
    transaction_request,
)
from nearrpc.store import StoredBlock


class TransactionMethods(Resolution):
    _sandbox: SandboxChain | None  # set by SandboxMethods: the chain of `serve --sandbox`, else None

    @store_failures_are_internal
    async def tx(self, params: models.RpcTransactionStatusRequest) -> bytes:
        return await self._transaction(transaction_request(params), with_receipts=False)

    @store_failures_are_internal
    async def EXPERIMENTAL_tx_status(self, params: models.RpcTransactionStatusRequest) -> bytes:
        return await self._transaction(transaction_request(params), with_receipts=True)

    async def _transaction(self, request: TransactionRequest, *, with_receipts: bool) -> bytes:
        try:
            return await transaction_answer(
                self._reader, request, await self._final_block(), with_receipts=with_receipts
            )
        except errors.RpcError:
            if self._sandbox is None or request.wait_until not in (INCLUDED, INCLUDED_FINAL):
                raise
            # a sandbox's transaction included, its receipts not all executed: the store holds it only
            # once they are. nearcore answers it without an outcome (view_client_actor.rs get_tx_status):
            # its status alone, as send_tx does. The status now: a read does not wait for blocks
            reached = await self._sandbox.wait(request.tx_hash, request.wait_until, 0.0)
            if reached in (INCLUDED, INCLUDED_FINAL) and request.wait_until in (INCLUDED, reached):
                return orjson.dumps({"final_execution_status": reached})
            raise

    @store_failures_are_internal
    async def EXPERIMENTAL_receipt(self, params: models.RpcReceiptRequest) -> bytes:
        return await receipt_answer(self._reader, params.receipt_id.root)

    async def _final_block(self) -> StoredBlock | None:
        """The chain's final block (None: no blocks), which a transaction's status is measured by."""
        try:
            return await self._resolve("tx", BlockReference("finality", "final"))
        except errors.RpcError:
            return None
