"""Parameter tables and the per-version diff rules.

A *table* maps flat parameter names (nearcore's names, e.g. `wasm_regular_op_cost`) to values.
The base table is the config of protocol version 0. Each diff is tied to a protocol version V;
diffs are applied cumulatively in ascending V and the resulting table is stored under V.

Diff rules, per parameter:

* `{new: b}`          adds the parameter; it must be absent before.
* `{old: a, new: b}`  changes it; the current value must equal `a` (strictly: types count).
* `{old: a}`          removes it; the current value must equal `a`. The view field then takes
                      its code default (see `layout`), or the view cannot be built.

Lookup for a requested protocol version P picks the stored table with the largest V <= P.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .errors import DataFormatError, DiffMismatchError, InvalidProtocolVersionError
from .values import ParamValue, Table, canonical_text, is_int, same_value

ABSENT_TEXT = "absent"


@dataclass(frozen=True)
class Change:
    """One parameter's change in a diff; `None` means the side is not given."""

    old: ParamValue | None = None
    new: ParamValue | None = None

    def __post_init__(self) -> None:
        if self.old is None and self.new is None:
            raise DataFormatError("a diff entry needs `old`, `new`, or both")


@dataclass(frozen=True)
class Diff:
    version: int
    changes: Mapping[str, Change] = field(default_factory=dict)


def _text(value: ParamValue | None) -> str:
    return ABSENT_TEXT if value is None else canonical_text(value)


def apply_diff(table: Mapping[str, ParamValue], diff: Diff) -> Table:
    """Return a new table: `table` with `diff` applied. `table` is not modified."""
    result: Table = dict(table)
    for name in sorted(diff.changes):
        change = diff.changes[name]
        current = table.get(name)
        if change.old is None:
            if current is not None:
                raise DiffMismatchError(name, diff.version, ABSENT_TEXT, _text(current))
        elif current is None or not same_value(current, change.old):
            raise DiffMismatchError(name, diff.version, _text(change.old), _text(current))
        if change.new is None:
            del result[name]
        else:
            result[name] = change.new
    return result


def build_chain(base: Mapping[str, ParamValue], diffs: Sequence[Diff]) -> dict[int, Table]:
    """Stored tables by version: 0 -> base, then one entry per diff, in ascending order."""
    chain: dict[int, Table] = {0: dict(base)}
    previous = 0
    current: Table = dict(base)
    for diff in diffs:
        if not is_int(diff.version) or diff.version <= previous:
            raise DataFormatError(
                f"diff versions must be integers > 0 in strictly ascending order; got {diff.version!r} after {previous}"
            )
        current = apply_diff(current, diff)
        chain[diff.version] = current
        previous = diff.version
    return chain


def check_protocol_version(protocol_version: object) -> int:
    if not is_int(protocol_version):
        raise InvalidProtocolVersionError(
            f"protocol version must be an integer, got {protocol_version!r} ({type(protocol_version).__name__})"
        )
    assert isinstance(protocol_version, int)
    if protocol_version < 0:
        raise InvalidProtocolVersionError(f"protocol version must be >= 0, got {protocol_version}")
    return protocol_version


def resolve_version(stored_versions: Sequence[int], protocol_version: object) -> int:
    """The largest stored version <= `protocol_version` (`stored_versions` sorted ascending)."""
    requested = check_protocol_version(protocol_version)
    index = bisect.bisect_right(stored_versions, requested)
    if index == 0:
        raise InvalidProtocolVersionError(
            f"no runtime config is stored for protocol version {requested} or below "
            f"(lowest stored version: {stored_versions[0] if stored_versions else 'none'})"
        )
    return stored_versions[index - 1]
