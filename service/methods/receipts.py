"""`EXPERIMENTAL_receipt`: a stored receipt by its id (nearcore's GetReceipt), or the answer a
fork kept for it (`store.kept_receipt`), so a plain `serve` of a fork's store replays it too."""

from __future__ import annotations

from nearrpc.methods import errors
from nearrpc.store import ServingReader, kept_receipt


async def receipt_answer(reader: ServingReader, receipt_id: str) -> bytes:
    receipt = await reader.receipt(receipt_id)
    if receipt is not None:
        return receipt.view_json
    kept = await reader.kept_answer(kept_receipt(receipt_id))
    if kept is None:
        raise errors.unknown_receipt(receipt_id)
    return kept
