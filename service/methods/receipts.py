"""`EXPERIMENTAL_receipt`: a stored receipt by its id (nearcore's GetReceipt)."""

from __future__ import annotations

from nearrpc.methods import errors
from nearrpc.store import ServingReader


async def receipt_answer(reader: ServingReader, receipt_id: str) -> bytes:
    receipt = await reader.receipt(receipt_id)
    if receipt is None:
        raise errors.unknown_receipt(receipt_id)
    return receipt.view_json
