"""The rows a recording writes for a keyed state kept as "the latest row at or below a height"
(access keys per public key, contract data per storage key): only where an entry changes.

`changed_rows` compares each recorded state with the one before it (the store's answer at the
first height, then the previous recorded state); `restoring` gives every entry a batch changed
its earlier value back just above the batch, when the batch fills a gap below recorded heights.
`recorded_keys` and `recorded_state` say why, for their kind of entry.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)  # an entry's key within one account
V = TypeVar("V")  # an entry's value
R = TypeVar("R")  # a row to write


def changed_rows(
    stored: Callable[[int], dict[K, V]],
    states: Iterable[tuple[int, dict[K, V] | None]],
    row: Callable[[K, int, V | None], R],
) -> list[R]:
    """The rows (`row(key, height, value or None for a removal)`) that make the store answer
    each state at its height; `states` ascend by height, `stored(height)` is the store's state
    there before the batch. A state of None (not held at that height) writes nothing."""
    rows: list[R] = []
    known: dict[K, V] | None = None  # the store's answer at the previous height
    for height, state in states:
        if known is None:
            known = stored(height)
        if state is None:
            continue
        rows.extend(row(key, height, value) for key, value in state.items() if known.get(key) != value)
        rows.extend(row(key, height, None) for key in known if key not in state)
        known = state
    return rows


def restoring(
    rows: Iterable[tuple[str, K, V | None]],
    before: Callable[[str, K], V | None],
    row: Callable[[str, K, V | None], R],
) -> list[R]:
    """The rows (`row(account, key, value)`) at the height above a batch giving each entry the
    batch changed (`rows`: account, key, value in ascending height per account) the value the
    store gave it there before the batch (`before(account, key)`), where the batch's last row for
    the entry says otherwise."""
    last: dict[tuple[str, K], V | None] = {}
    for account_id, key, value in rows:
        last[(account_id, key)] = value
    restored: list[R] = []
    for (account_id, key), value in last.items():
        earlier = before(account_id, key)
        if earlier != value:
            restored.append(row(account_id, key, earlier))
    return restored
