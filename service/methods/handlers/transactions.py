"""Transactions and receipts: tx, EXPERIMENTAL_tx_status (a transaction's status measured by
the chain's final block), EXPERIMENTAL_receipt."""

from __future__ import annotations

from nearrpc.generated import models
from nearrpc.methods import errors
from nearrpc.methods.blocks import BlockReference
from nearrpc.methods.handlers.resolution import Resolution, store_failures_are_internal
from nearrpc.methods.receipts import receipt_answer
from nearrpc.methods.transactions import transaction_answer, transaction_request
from nearrpc.store import StoredBlock


class TransactionMethods(Resolution):
    @store_failures_are_internal
    async def tx(self, params: models.RpcTransactionStatusRequest) -> bytes:
        return await transaction_answer(
            self._reader, transaction_request(params), await self._final_block(), with_receipts=False
        )

    @store_failures_are_internal
    async def EXPERIMENTAL_tx_status(self, params: models.RpcTransactionStatusRequest) -> bytes:
        return await transaction_answer(
            self._reader, transaction_request(params), await self._final_block(), with_receipts=True
        )

    @store_failures_are_internal
    async def EXPERIMENTAL_receipt(self, params: models.RpcReceiptRequest) -> bytes:
        return await receipt_answer(self._reader, params.receipt_id.root)

    async def _final_block(self) -> StoredBlock | None:
        """The chain's final block (None: no blocks), which a transaction's status is measured by."""
        try:
            return await self._resolve("tx", BlockReference("finality", "final"))
        except errors.RpcError:
            return None
