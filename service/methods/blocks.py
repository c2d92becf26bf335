"""Which stored block a block reference means, as nearcore resolves it.

optimistic = the head; near-final = the head's `last_ds_final_block`; final = the head's
`last_final_block`; a height = the canonical block at it; a hash = any stored block with it;
genesis = the genesis block; earliest_available = the lowest block still stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from nearrpc.store import ServingReader, StoredBlock

ReferenceKind = Literal["block_id", "finality", "sync_checkpoint"]
MAX_HEIGHT: Final = 2**64 - 1  # heights are u64

# nearcore's Rust names of the finality and checkpoint variants, for its Debug-style messages
_FINALITY_VARIANT = {"optimistic": "None", "near-final": "DoomSlug", "final": "Final"}
_CHECKPOINT_VARIANT = {"genesis": "Genesis", "earliest_available": "EarliestAvailable"}


@dataclass(frozen=True, slots=True)
class BlockReference:
    kind: ReferenceKind
    value: int | str  # a height, a base58 hash, a finality or a sync checkpoint name

    def as_json(self) -> dict[str, Any]:
        return {self.kind: self.value}

    def rust_debug(self) -> str:
        """How nearcore prints the reference in its messages, e.g. BlockId(Height(5))."""
        if self.kind == "block_id":
            inner = f"Height({self.value})" if isinstance(self.value, int) else f"Hash({self.value})"
            return f"BlockId({inner})"
        if self.kind == "finality":
            return f"Finality({_FINALITY_VARIANT[str(self.value)]})"
        return f"SyncCheckpoint({_CHECKPOINT_VARIANT[str(self.value)]})"


def height_of(value: object) -> int | None:
    """The block height a JSON `block_id` value names, or None when it names none.

    JSON Schema, the spec's language, calls 5.0 the integer 5, so an integral float names that
    height too; nearcore's parser refuses it (spec/DEVIATIONS.md, `block_id: 5.0`).
    """
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_HEIGHT:
        return value
    return None


class UnknownBlock(Exception):
    """No block for the reference; `db_message` is nearcore's store key text."""

    def __init__(self, db_message: str) -> None:
        super().__init__(db_message)
        self.db_message = db_message


class NoEarliestBlock(Exception):
    """`earliest_available` on a store that holds no block at all."""


async def _by_hash(reader: ServingReader, block_hash: str) -> StoredBlock:
    block = await reader.block_by_hash(block_hash)
    if block is None:
        raise UnknownBlock(f"BLOCK: {block_hash}")
    return block


async def _head(reader: ServingReader) -> StoredBlock:
    head = await reader.head()
    if head is None:
        raise UnknownBlock("BLOCK HEAD")
    return head


async def resolve(reader: ServingReader, reference: BlockReference) -> StoredBlock:
    kind, value = reference.kind, reference.value
    if kind == "block_id":  # most requests: one await straight to the store
        if isinstance(value, int):
            block = await reader.block_by_height(value)
            if block is None:
                raise UnknownBlock(f"BLOCK HEIGHT: {value}")
            return block
        block = await reader.block_by_hash(value)
        if block is None:
            raise UnknownBlock(f"BLOCK: {value}")
        return block
    if kind == "finality":
        head = await _head(reader)
        if value == "optimistic":
            return head
        return await _by_hash(reader, head.last_ds_final_block if value == "near-final" else head.last_final_block)
    if value == "genesis":
        genesis = await reader.genesis_block()
        if genesis is None:
            raise UnknownBlock("GENESIS BLOCK")
        return genesis
    earliest = await reader.earliest_block()
    if earliest is None:
        raise NoEarliestBlock()
    return earliest


# the references by name, made once: most requests name one (each request reads its reference
# twice, for its answer and for what the answer depends on)
_NAMED: Final = {
    **{("finality", name): BlockReference("finality", name) for name in _FINALITY_VARIANT},
    **{("sync_checkpoint", name): BlockReference("sync_checkpoint", name) for name in _CHECKPOINT_VARIANT},
}


def _named(kind: ReferenceKind, name: str) -> BlockReference:
    named = _NAMED.get((kind, name))
    return BlockReference(kind, name) if named is None else named


def reference_of(params: Any) -> BlockReference:
    """The block reference inside a generated params model (any of its branches).

    Read from the branch's field values (`vars`), not with getattr: a pydantic model answers
    getattr of a field it lacks through its slow path (an AttributeError), microseconds a request.
    """
    fields = vars(params.root)
    positional = fields.get("root")  # `block`'s [block_id] branch is a one-tuple
    if isinstance(positional, tuple):
        (block_id,) = positional
        if block_id is None:  # gas_price's [null]: the head
            return BlockReference("finality", "optimistic")
        return BlockReference("block_id", block_id.root.root)
    block_id = fields.get("block_id")
    if block_id is not None:
        return BlockReference("block_id", block_id.root.root)
    finality = fields.get("finality")
    if finality is not None:
        return _named("finality", finality.root)
    return _named("sync_checkpoint", fields["sync_checkpoint"].root)
