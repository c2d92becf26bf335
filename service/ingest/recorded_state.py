"""The contract-state rows a recording writes: only where a storage key's value changes.

The same reasoning as the access keys' (`recorded_keys`): the store answers "the latest row at
or below the height", so a batch compares each account's whole state (`view_state` without a
prefix) with the store as committed before the batch at the account's first height in it, and
with the previous recorded state at each later height; a key gone since gets a removal row.
Filling a gap below recorded heights gives every key the batch changed its earlier value back
just above the batch (`restoring`). A height whose state the node would not give (None) writes
no rows: the store's answer there stays what the rows below say, and the recorder marks the
height as not held (`store.contract_state_not_held`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from nearrpc.ingest import row_changes
from nearrpc.store import ChainReader

ContractState = dict[bytes, bytes]  # storage key -> value, the whole state at one height

# Compared with the store's state at a height: at most this many keys are read back (a node
# answers view_state up to its size limit, 50 kB by default, so far fewer keys than this).
_MAX_KEYS: Final = 1 << 20


@dataclass(frozen=True, slots=True)
class StateRow:
    """One `put_contract_data` call."""

    account_id: str
    key: bytes
    height: int
    value: bytes | None  # None: removed at `height`


def _stored(reader: ChainReader, account_id: str, height: int) -> ContractState:
    return dict(reader.contract_state(account_id, b"", height, _MAX_KEYS))


def changed_rows(
    reader: ChainReader, account_id: str, states: Iterable[tuple[int, ContractState | None]]
) -> list[StateRow]:
    """The rows that make the store answer each state at its height; `states` ascend by height.
    A state of None (not held there) writes nothing: the answer stays what the rows below say."""
    return row_changes.changed_rows(
        lambda height: _stored(reader, account_id, height),
        states,
        lambda key, height, value: StateRow(account_id, key, height, value),
    )


def restoring(reader: ChainReader, rows: list[StateRow], above: int) -> list[StateRow]:
    """Rows at `above` giving each key the batch changed the value the store gave it there
    before the batch, where the batch's last row for the key says otherwise."""
    return row_changes.restoring(
        ((row.account_id, row.key, row.value) for row in rows),
        lambda account_id, key: reader.contract_value(account_id, key, above),
        lambda account_id, key, value: StateRow(account_id, key, above, value),
    )
