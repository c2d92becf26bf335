"""Receipt ids, action hashes and a call's random seed, as nearcore derives them.

core/primitives/src/utils.rs: `create_hash_upgradable` is SHA-256 of the base hash, then the
block's height (u64 little-endian; since protocol 77, ProtocolFeature::BlockHeightForReceiptId:
before it, the block's hash), then a salt (u64 little-endian). A transaction's receipt takes the
transaction's hash and salt 0 (`create_receipt_id_from_transaction`); a receipt a receipt makes,
the parent receipt's id and its index among the new receipts (`create_receipt_id_from_receipt_id`);
an action's hash, the receipt's id and u64::MAX minus the action's index
(`create_action_hash_from_receipt_id`); a data id (a promise's result awaited by another
receipt), the action hash of the call that made it and the count of data ids that call made
before (`create_data_id`). `create_random_seed`: SHA-256 of the action hash and the
block's random seed.
"""

from __future__ import annotations

import hashlib

import based58

from nearrpc.sandbox.runtime.features import BLOCK_HEIGHT_FOR_RECEIPT_ID

_U64_MAX = (1 << 64) - 1


def _b58(digest: bytes) -> str:
    return based58.b58encode(digest).decode()


def _raw(hash_text: str) -> bytes:
    return based58.b58decode(hash_text.encode())


def _hash(base: str, block_hash: str, height: int, salt: int, protocol_version: int) -> str:
    extra = height.to_bytes(8, "little") if protocol_version >= BLOCK_HEIGHT_FOR_RECEIPT_ID else _raw(block_hash)
    return _b58(hashlib.sha256(_raw(base) + extra + salt.to_bytes(8, "little")).digest())


class IdMaker:
    """The ids of one block (its hash, height and protocol version)."""

    def __init__(self, block_hash: str, height: int, protocol_version: int) -> None:
        self.block_hash = block_hash
        self.height = height
        self.protocol_version = protocol_version

    def receipt_of_transaction(self, tx_hash: str) -> str:
        return _hash(tx_hash, self.block_hash, self.height, 0, self.protocol_version)

    def receipt_of_receipt(self, receipt_id: str, index: int) -> str:
        return _hash(receipt_id, self.block_hash, self.height, index, self.protocol_version)

    def data_id(self, action_hash: str, data_index: int) -> str:
        return _hash(action_hash, self.block_hash, self.height, data_index, self.protocol_version)

    def action_hash(self, receipt_id: str, action_index: int) -> str:
        return _hash(receipt_id, self.block_hash, self.height, _U64_MAX - action_index, self.protocol_version)


def random_seed(action_hash: str, block_seed: bytes) -> bytes:
    return hashlib.sha256(_raw(action_hash) + block_seed).digest()
