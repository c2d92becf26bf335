"""A contract's state as a fork keeps it: what the upstream's `view_state` answer holds, checked,
and the rows that make the store answer it at exactly one height.

The store answers a storage key "the latest row at or below the height", so a value kept at a
height would also answer for the heights above it. The rows below are planned from the store as
committed, on the writer's thread just before the batch (`writer.AfterReading`, so no other fork
write falls between): a row at `height` only where the store's answer there differs, and at
`height + 1` the value the store gave there before, where the new row would change it.
"""

from __future__ import annotations

import base64
from typing import Any, Final

from nearrpc.spec import validate_component
from nearrpc.store import ChainReader, StoredBlock

ContractState = dict[bytes, bytes]  # storage key -> value
Row = tuple[bytes, int, bytes | None]  # (key, height, value; None: absent from that height)

_ALL: Final = (1 << 31) - 1  # rows under a prefix: the upstream's answer bounds what is kept
_MAX_HEIGHT: Final = (1 << 63) - 1


def state_of(answer: dict[str, Any], block: StoredBlock, prefix: bytes, *, whole: bool) -> ContractState:
    """The (key, value) pairs a `view_state` answer lists under `prefix`, for `block` only.
    `whole`: every key under the prefix is needed, so one page of them (`last_key`) is refused;
    otherwise a page is enough, as its first key is the prefix itself when that key exists (the
    trie lists keys in byte order). Raises ValueError (or SchemaViolation) for anything else."""
    if answer.get("block_hash") != block.hash or answer.get("block_height") != block.height:
        raise ValueError(f"the state is of block {answer.get('block_hash')} at {answer.get('block_height')}")
    validate_component("ViewStateResult", answer)
    values = answer["values"]
    if answer.get("last_key") is not None and (whole or not values):
        raise ValueError("the node answered one page of the state (last_key), not all of it")
    state: ContractState = {}
    for item in values:
        key = base64.b64decode(item["key"], validate=True)
        if not key.startswith(prefix):
            raise ValueError("the node listed a storage key outside the prefix asked for")
        if key in state:
            raise ValueError("the node listed a storage key twice")
        state[key] = base64.b64decode(item["value"], validate=True)
    return state


def value_rows(
    store: ChainReader, account_id: str, key: bytes, height: int, value: bytes | None, *, restore_above: bool = True
) -> list[Row]:
    """The rows that make the store answer `value` for `key` at `height`, and nothing new elsewhere
    (`restore_above` False: at the heights above too, up to a row there: a sandboxed fork's pinned head,
    whose blocks above inherit its state)."""
    if store.contract_value(account_id, key, height) == value:
        return []
    rows: list[Row] = [(key, height, value)]
    if restore_above and height < _MAX_HEIGHT:
        above = store.contract_value(account_id, key, height + 1)
        if above != value:
            rows.append((key, height + 1, above))
    return rows


def state_rows(
    store: ChainReader, account_id: str, prefix: bytes, height: int, state: ContractState, *, restore_above: bool = True
) -> list[Row]:
    """The rows that make the store list exactly `state` under `prefix` at `height` (keys it lists
    there that `state` lacks are removed at `height`), and nothing new elsewhere (`restore_above`: as
    `value_rows`)."""
    known = dict(store.contract_state(account_id, prefix, height, _ALL))
    changed: dict[bytes, bytes | None] = {key: value for key, value in state.items() if known.get(key) != value}
    changed.update(dict.fromkeys(key for key in known if key not in state))
    rows: list[Row] = [(key, height, value) for key, value in changed.items()]
    if restore_above and changed and height < _MAX_HEIGHT:
        above = dict(store.contract_state(account_id, prefix, height + 1, _ALL))
        rows += [(key, height + 1, above.get(key)) for key, value in changed.items() if above.get(key) != value]
    return rows
