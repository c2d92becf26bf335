"""The access-key rows a recording writes: only where a key's state changes.

The store answers "the latest row at or below the height", so a key that did not change since
the row below need not be written again. What a batch compares against:

- at an account's first height in the batch, the store as committed before the batch (every
  key it lists there that the node no longer lists gets a deletion row);
- at each later height of the batch, the node's listing at the previous recorded height, which
  the batch's rows have made the store's answer there.

Rows already in the store inside the batch's range were recorded from the same final chain, so
they agree with the node at their heights and can only repeat what the batch would write.

Filling a gap below heights recorded earlier is the one case where a new row reaches too far:
it would hold up to the next row above, over recorded heights that were written as "unchanged
since the row below the gap". So when the store holds blocks above the batch, every key the
batch changed gets its earlier state back at the height just above the batch (`restoring`), and
the heights above answer exactly what they answered before, after every committed batch (a
killed run leaves no wrong answers behind either). Inside a run, the next batch then writes the
node's state again where it differs at its first block; when the heights between are skipped
ones, the restoring rows stay there, read by no answer (a skipped height has no block).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from nearrpc.ingest import jsonio, row_changes
from nearrpc.store import ChainReader

KeyList = tuple[tuple[str, dict[str, Any]], ...]  # (canonical public key, AccessKeyView)


@dataclass(frozen=True, slots=True)
class KeyRow:
    """One `put_access_key` call."""

    account_id: str
    public_key: str  # canonical spelling
    height: int
    view: dict[str, Any] | None  # None: deleted at `height`

    def view_json(self) -> bytes | None:
        return None if self.view is None else jsonio.compact(self.view)


def _stored(reader: ChainReader, account_id: str, height: int) -> dict[str, dict[str, Any]]:
    return {key: orjson.loads(view) for key, view in reader.access_keys_json(account_id, height)}


def changed_rows(reader: ChainReader, account_id: str, listings: Iterable[tuple[int, KeyList]]) -> list[KeyRow]:
    """The rows that make the store answer each listing at its height; `listings` ascend by height."""
    return row_changes.changed_rows(
        lambda height: _stored(reader, account_id, height),
        ((height, dict(listing)) for height, listing in listings),
        lambda key, height, view: KeyRow(account_id, key, height, view),
    )


def restoring(reader: ChainReader, rows: list[KeyRow], above: int) -> list[KeyRow]:
    """Rows at `above` giving each key the batch changed the state the store gave it there
    before the batch, where the batch's last row for the key says otherwise."""

    def before(account_id: str, key: str) -> dict[str, Any] | None:
        stored = reader.access_key_json(account_id, key, above)
        return None if stored is None else orjson.loads(stored)

    return row_changes.restoring(
        ((row.account_id, row.public_key, row.view) for row in rows),
        before,
        lambda account_id, key, view: KeyRow(account_id, key, above, view),
    )
