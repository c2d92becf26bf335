"""A transaction's `block_hash` against the chain: nearcore's transaction validity period
(chain/chain/src/store/utils.rs `check_transaction_validity_period`): the block must be known
(else `Expired`), the head at most `transaction_validity_period` heights above it (else
`Expired`), and on the head's chain (else `InvalidChain`).

The hash is read from the signed transaction's borsh bytes (core/primitives/src/transaction.rs:
`Transaction::V0` starts with the signer id's u32 length, `V1` with the byte 1 before V0's
fields; then the public key (its type byte and 32 or 64 bytes), the nonce (u64), the receiver
id, the block hash). Bytes that do not read so are left to the runtime's decoder, which refuses
them with nearcore's words.
"""

from __future__ import annotations

from typing import Final

import based58

from nearrpc.store import ChainReader, StoredBlock

# core/crypto KeyType: public key length by type byte
_KEY_LENGTHS: Final = {0: 32, 1: 64}
_MAX_ID: Final = 64  # an account id's longest


def _string_end(data: bytes, at: int) -> int | None:
    if at + 4 > len(data):
        return None
    length = int.from_bytes(data[at : at + 4], "little")
    end = at + 4 + length
    return end if length <= _MAX_ID and end <= len(data) else None


def block_hash_of(signed: bytes) -> str | None:
    """The base58 block hash a signed transaction names, None where its bytes do not read."""
    at = 1 if len(signed) > 1 and signed[0] == 1 and signed[1] != 0 else 0  # V1's tag
    end = _string_end(signed, at)  # signer id
    if end is None or end >= len(signed):
        return None
    key_length = _KEY_LENGTHS.get(signed[end])
    if key_length is None:
        return None
    end = _string_end(signed, end + 1 + key_length + 8)  # public key, nonce, receiver id
    if end is None or end + 32 > len(signed):
        return None
    return based58.b58encode(signed[end : end + 32]).decode("ascii")


def validity_refusal(reader: ChainReader, head: StoredBlock, block_hash: str, period: int) -> str | None:
    """The InvalidTxError that refuses a transaction on `block_hash` for a block on `head` (a
    variant without fields: its name), None when it is valid."""
    base = reader.block_by_hash(block_hash)
    if base is None or head.height > base.height + period:
        return "Expired"
    canonical = reader.block_by_height(base.height)
    if canonical is None or canonical.hash != base.hash:
        return "InvalidChain"
    return None
