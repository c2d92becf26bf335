"""A synthetic chain of any size, for benchmarks and tests that need a big store.

Blocks are the sample chain's block at one height, re-addressed: each gets its own height,
hash (sha256 of the height, base58), parent, epoch and finality links, so lookups by height
and by hash find exactly one block. Accounts `a000000.synthetic`... get `states` states each,
spread over the chain. The genesis and client configs are the sample's, with chain id
`nearrpc-synthetic` and an epoch length that gives a few dozen epochs per million blocks.

What is validated: the configs, the epochs and the first `VALIDATED_ROWS` blocks and account
states are checked against the spec in full (they share their shape with every later row);
every row is parsed and index-checked by the store as any write is (`batch(validate=False)`),
because full validation (about 5 ms a block) would take hours for a million blocks.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain, islice
from typing import Any, Final

import based58
import orjson

from nearrpc.nearcore.views import ZERO_HASH
from nearrpc.sample.build import sample_chain
from nearrpc.store import StoredBlock, StoredEpoch, StoreLocation, WriteBatch, open_store

CHAIN_ID: Final = "nearrpc-synthetic"
EPOCH_LENGTH: Final = 43_200  # mainnet's
VALIDATED_ROWS: Final = 100
ROWS_PER_BATCH: Final = 5_000
_TEMPLATE_HEIGHT: Final = 10


@dataclass(frozen=True, slots=True)
class SyntheticShape:
    blocks: int
    accounts: int
    states: int  # per account

    def account_id(self, index: int) -> str:
        return f"a{index:06d}.synthetic"

    def state_heights(self, index: int) -> list[int]:
        """The heights of an account's states: spread evenly, offset per account."""
        step = max(1, self.blocks // self.states)
        return sorted({(index * 7 + k * step) % self.blocks for k in range(self.states)})


def block_hash(height: int) -> str:
    return str(based58.b58encode(hashlib.sha256(f"synthetic:{height}".encode()).digest()).decode())


def epoch_id_of(height: int) -> str:
    """nearcore's rule: the first epoch is the zero hash; epoch k >= 1 is named after a block of
    the epoch before it (here: its first block)."""
    index = height // EPOCH_LENGTH
    return ZERO_HASH if index == 0 else block_hash((index - 1) * EPOCH_LENGTH)


class _Blocks:
    def __init__(self) -> None:
        chain = sample_chain()
        template = next(block for block in chain.blocks if block.height == _TEMPLATE_HEIGHT)
        self._view: dict[str, Any] = orjson.loads(template.view_json)

    def block(self, height: int) -> StoredBlock:
        view = self._view
        header = view["header"]
        parent = block_hash(height - 1) if height > 0 else ZERO_HASH
        header.update(
            height=height,
            prev_height=max(height - 1, 0),
            hash=block_hash(height),
            prev_hash=parent,
            epoch_id=epoch_id_of(height),
            next_epoch_id=epoch_id_of(height + EPOCH_LENGTH),
            last_final_block=block_hash(height - 2) if height >= 2 else ZERO_HASH,
            last_ds_final_block=parent,
            block_ordinal=height + 1,
        )
        return StoredBlock(
            height=height,
            hash=header["hash"],
            prev_hash=header["prev_hash"],
            epoch_id=header["epoch_id"],
            last_final_block=header["last_final_block"],
            last_ds_final_block=header["last_ds_final_block"],
            view_json=orjson.dumps(view),
        )


def _configs() -> tuple[bytes, bytes, StoredEpoch]:
    chain = sample_chain()
    genesis = {**orjson.loads(chain.genesis_config_json), "chain_id": CHAIN_ID, "epoch_length": EPOCH_LENGTH}
    client = {**orjson.loads(chain.client_config_json), "chain_id": CHAIN_ID}
    first = chain.epochs[0]
    settings = {**orjson.loads(first.config_json), "epoch_length": EPOCH_LENGTH}
    epoch = StoredEpoch(ZERO_HASH, first.protocol_version, orjson.dumps(settings))
    return orjson.dumps(genesis), orjson.dumps(client), epoch


def _account_view(index: int, state: int) -> bytes:
    amount = 10**24 * (index + 1) + state
    return orjson.dumps(
        {"amount": str(amount), "locked": "0", "code_hash": ZERO_HASH, "storage_usage": 182 + state,
         "storage_paid_at": 0}
    )


# One row to write: a block, or an account state (account id, height, view).
_Row = StoredBlock | tuple[str, int, bytes]


def _block_rows(start: int, stop: int) -> Iterator[_Row]:
    blocks = _Blocks()
    for height in range(start, stop):
        yield blocks.block(height)


def _account_rows(shape: SyntheticShape, start: int, stop: int) -> Iterator[_Row]:
    for index in range(start, stop):
        account_id = shape.account_id(index)
        for state, height in enumerate(shape.state_heights(index)):
            yield account_id, height, _account_view(index, state)


def _write(batch: WriteBatch, row: _Row) -> None:
    if isinstance(row, StoredBlock):
        batch.put_block(row)
    else:
        batch.put_account_state(*row)


def write_synthetic_chain(
    location: StoreLocation, shape: SyntheticShape, advance: Callable[[int], None] | None = None
) -> None:
    """Write the chain into a new store at `location` (replacing one there): a first batch
    validated in full, then batches of `ROWS_PER_BATCH` rows; `advance` is told how many rows
    each later batch wrote."""
    genesis, client, first_epoch = _configs()
    epochs = [first_epoch] + [
        StoredEpoch(epoch_id_of(index * EPOCH_LENGTH), first_epoch.protocol_version, first_epoch.config_json)
        for index in range(1, (shape.blocks - 1) // EPOCH_LENGTH + 1)
    ]
    first_blocks = min(VALIDATED_ROWS, shape.blocks)
    first_accounts = min(-(-VALIDATED_ROWS // shape.states), shape.accounts)
    with open_store(location, "replace") as writer:
        with writer.batch() as batch:
            batch.put_genesis_config(genesis)
            batch.put_client_config(client)
            for epoch in epochs:
                batch.put_epoch(epoch)
            for row in chain(_block_rows(0, first_blocks), _account_rows(shape, 0, first_accounts)):
                _write(batch, row)
        rest = chain(_block_rows(first_blocks, shape.blocks), _account_rows(shape, first_accounts, shape.accounts))
        while chunk := list(islice(rest, ROWS_PER_BATCH)):
            with writer.batch(validate=False) as batch:
                for row in chunk:
                    _write(batch, row)
            if advance is not None:
                advance(len(chunk))
