"""What a spec bump changes, field by field, for every method, and whom each change breaks.

Compares the flat views (`tools.spec_fields`) of an old and a new document:

    client_config
      + response.result.view_access_keys_limit: integer/uint64 (not in interface 1.2.14) [compatible]
      - response.result.state_sync_external_backoff: array (a field of interface 1.2.14) [breaks clients]
      ~ response.result.min_num_peers: integer/uint32 -> integer/uint64 [breaks clients]
      required response.result: + chain_id; - gc [breaks clients]
      enum response.error.cause.name: + TIMEOUT_ERROR [breaks clients]

An added or removed object is listed once, with the number of fields under it.

Every line gets one class, in the manner of oasdiff's breaking-change checks, decided by the
direction the data flows. A request is what clients send and the server reads: what the server
newly refuses breaks clients, what it newly has to accept breaks servers. A response is what the
server sends and clients read: what clients may newly receive breaks clients, what the server
may no longer send breaks servers. A change that only names what was already allowed (a new
optional member: JSON Schema objects admit unknown members) is compatible.

| line | request | response |
|---|---|---|
| `+` a field (optional; its being required is the parent's `required` line) | compatible | compatible |
| `-` a field | breaks clients (what they send is refused or ignored) | breaks clients (what they read is gone) |
| `~` kinds widened (a kind or format added, `string` -> `any`, a format dropped) | breaks servers | breaks clients |
| `~` kinds narrowed (a kind dropped, a format added, `uint64` -> `uint32`) | breaks clients | breaks servers |
| `~` kinds widened and narrowed (`integer` -> `string`) | breaks clients | breaks clients |
| `~` the same kinds spelt anew (`uint` -> `uint64`) | compatible | compatible |
| `required` + a member | breaks clients (who omit it) | breaks servers (who must send it) |
| `required` - a member | breaks servers (who must do without it) | breaks clients (who counted on it) |
| `required` where the field only now is, or no longer is, an object | compatible (its `~` line counts) | compatible |
| `enum` + a value, or a field that had an enum loses it | breaks servers | breaks clients |
| `enum` - a value, or a field gets an enum it did not have | breaks clients | breaks servers |

A line that both widens and narrows breaks clients in either direction: clients are the many,
the server the one this project controls, so their break is the one a report must not hide.
(Issue 20 listed "a new required request member" as breaking servers; by the rule above, the
server now refuses what clients sent without it, so it breaks clients, as oasdiff has it.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from tools.spec_fields import FlatSpec

Json = Any


class Breaks(StrEnum):
    CLIENTS = "breaks clients"
    SERVERS = "breaks servers"
    NOBODY = "compatible"


# what the text report prints before the path, per kind of change
SYMBOLS = {"added": "+", "removed": "-", "retyped": "~", "required": "required", "enum": "enum"}


@dataclass(frozen=True)
class Change:
    """One line of the report: `path` below the method, the kind of change, its class and text."""

    path: str
    change: str
    breaks: Breaks
    detail: str

    def line(self) -> str:
        return f"{SYMBOLS[self.change]} {self.path}: {self.detail} [{self.breaks}]"

    def as_json(self) -> dict[str, str]:
        return {"path": self.path, "change": self.change, "class": str(self.breaks), "detail": self.detail}


# ---------------------------------------------------------------- classes


def _by_direction(path: str, widened: bool, narrowed: bool) -> Breaks:
    """The class of a change that widens and/or narrows what `path` (request.… or response.…) admits."""
    if widened and narrowed:
        return Breaks.CLIENTS
    request = path.startswith("request")
    if widened:
        return Breaks.SERVERS if request else Breaks.CLIENTS
    if narrowed:
        return Breaks.CLIENTS if request else Breaks.SERVERS
    return Breaks.NOBODY


# integer formats, narrowest first within each family; `uint` is nearcore's usize (64 bits)
_WIDTHS = {"uint8": 8, "uint16": 16, "uint32": 32, "uint": 64, "uint64": 64, "int32": 32, "int64": 64}


def _covers(wide: str, narrow: str) -> bool:
    """Whether every value of kind `narrow` is a value of kind `wide`."""
    if wide in (narrow, "any"):
        return True
    base, _, fmt = narrow.partition("/")
    if wide == base or (wide == "number" and base == "integer"):
        return True  # a format only narrows its type; JSON Schema's integers are numbers
    wide_base, _, wide_fmt = wide.partition("/")
    if wide_base != base or wide_base != "integer" or fmt not in _WIDTHS or wide_fmt not in _WIDTHS:
        return False
    same_sign = fmt.startswith("u") == wide_fmt.startswith("u")
    return same_sign and _WIDTHS[fmt] <= _WIDTHS[wide_fmt]


def _beyond(kinds: set[str], others: set[str]) -> bool:
    """Whether `kinds` admits a value no kind of `others` does."""
    return any(not any(_covers(other, kind) for other in others) for kind in kinds)


def retype_class(path: str, old: set[str], new: set[str]) -> Breaks:
    return _by_direction(path, widened=_beyond(new, old), narrowed=_beyond(old, new))


def required_class(path: str, old_kinds: set[str], new_kinds: set[str], added: bool, dropped: bool) -> Breaks:
    if "object" not in old_kinds or "object" not in new_kinds:
        return Breaks.NOBODY
    # a newly required member narrows what is valid; one no longer required widens it
    return _by_direction(path, widened=dropped, narrowed=added)


def enum_class(path: str, old: set[str] | None, new: set[str] | None) -> Breaks:
    """`None`: the field has no enum, so any value of its kind is allowed."""
    widened = new is None or (old is not None and bool(new - old))
    narrowed = old is None or (new is not None and bool(old - new))
    return _by_direction(path, widened=widened, narrowed=narrowed)


# ---------------------------------------------------------------- paths


def _kinds(flat: FlatSpec, path: str) -> str:
    return " | ".join(sorted(flat.kinds[path]))


def _declared_fields(interface: dict[str, Json]) -> set[str]:
    return {f"{path}.{name}" for path, obj in interface["objects"].items() for name in obj["fields"]}


def _parent(path: str) -> str:
    """`a.b` for `a.b.c`, `a.b[]`, `a.b{}` and `a.b[0]`."""
    container = re.fullmatch(r"(.+)(\[\d*\]|\{\})", path)
    return container.group(1) if container else path.rpartition(".")[0]


def _outermost(paths: set[str]) -> list[str]:
    """The paths whose parent is not in the set."""
    return sorted(path for path in paths if _parent(path) not in paths)


def _fields_under(path: str, paths: set[str]) -> int:
    """How many named fields (not array items or map values) the set has below `path`."""
    below = (other for other in paths if other != path and other.startswith(path) and other[len(path)] in ".[{")
    return sum(1 for other in below if not other.endswith(("]", "}")))


def _changes(paths: Iterable[str], method: str) -> list[str]:
    return sorted(path for path in paths if path.split(".", 1)[0] == method)


def _set_change(old: set[str], new: set[str]) -> str:
    parts = []
    if new - old:
        parts.append("+ " + ", ".join(sorted(new - old)))
    if old - new:
        parts.append("- " + ", ".join(sorted(old - new)))
    return "; ".join(parts)


# ---------------------------------------------------------------- report


class _Comparison:
    """The changes of one method between two flat views."""

    def __init__(self, method: str, old: FlatSpec, new: FlatSpec, interface: dict[str, Json]) -> None:
        self.method, self.old, self.new = method, old, new
        self.declared = _declared_fields(interface)
        self.version = interface["version"]
        self.both = _changes(set(old.kinds) & set(new.kinds), method)

    def short(self, path: str) -> str:
        return path[len(self.method) + 1 :]

    def _nested(self, path: str, paths: set[str]) -> str:
        count = _fields_under(path, paths)
        return f", {count} field(s) under it" if count else ""

    def added(self) -> list[Change]:
        added = set(_changes(set(self.new.kinds) - set(self.old.kinds), self.method))
        out = []
        for path in _outermost(added):
            note = "" if path in self.declared else f" (not in interface {self.version})"
            detail = f"{_kinds(self.new, path)}{self._nested(path, added)}{note}"
            out.append(Change(self.short(path), "added", Breaks.NOBODY, detail))
        return out

    def removed(self) -> list[Change]:
        removed = set(_changes(set(self.old.kinds) - set(self.new.kinds), self.method))
        out = []
        for path in _outermost(removed):
            note = f" (a field of interface {self.version})" if path in self.declared else ""
            detail = f"{_kinds(self.old, path)}{self._nested(path, removed)}{note}"
            out.append(Change(self.short(path), "removed", Breaks.CLIENTS, detail))
        return out

    def retyped(self) -> list[Change]:
        out = []
        for path in self.both:
            old, new = self.old.kinds[path], self.new.kinds[path]
            if old != new:
                detail = f"{_kinds(self.old, path)} -> {_kinds(self.new, path)}"
                out.append(Change(self.short(path), "retyped", retype_class(self.short(path), old, new), detail))
        return out

    def required(self) -> list[Change]:
        out = []
        for path in self.both:
            old, new = self.old.required.get(path, set()), self.new.required.get(path, set())
            if old != new:
                kinds = (self.old.kinds[path], self.new.kinds[path])
                breaks = required_class(self.short(path), *kinds, added=bool(new - old), dropped=bool(old - new))
                out.append(Change(self.short(path), "required", breaks, _set_change(old, new)))
        return out

    def enums(self) -> list[Change]:
        out = []
        for path in self.both:
            old, new = self.old.enums.get(path), self.new.enums.get(path)
            if old != new:
                breaks = enum_class(self.short(path), old, new)
                out.append(Change(self.short(path), "enum", breaks, _set_change(old or set(), new or set())))
        return out


def method_changes(method: str, old: FlatSpec, new: FlatSpec, interface: dict[str, Json]) -> list[Change]:
    """The changes of one method, in report order (empty when nothing changed)."""
    compared = _Comparison(method, old, new, interface)
    return [*compared.added(), *compared.removed(), *compared.retyped(), *compared.required(), *compared.enums()]


def report(
    methods: Iterable[str], old: FlatSpec, new: FlatSpec, interface: dict[str, Json]
) -> dict[str, list[Change]]:
    """Every method's changes, in the methods' order."""
    return {method: method_changes(method, old, new, interface) for method in methods}


def changelog(changes: dict[str, list[Change]]) -> list[str]:
    """The text report: a heading line per method, then its changes indented."""
    lines = []
    for method, found in changes.items():
        lines.append(method if found else f"{method}: no change")
        lines.extend(f"  {change.line()}" for change in found)
    return lines


def as_json(changes: dict[str, list[Change]], old_version: str, new_version: str) -> dict[str, Json]:
    """The machine-readable report: the two versions and, per method, its changes."""
    methods = {method: [change.as_json() for change in found] for method, found in changes.items()}
    return {"from": old_version, "to": new_version, "methods": methods}


def from_json(record: dict[str, Json]) -> dict[str, list[Change]]:
    """The changes of a report written by `as_json` (a committed bump record)."""
    return {
        method: [Change(c["path"], c["change"], Breaks(c["class"]), c["detail"]) for c in found]
        for method, found in record["methods"].items()
    }


def counts(changes: dict[str, list[Change]]) -> dict[Breaks, int]:
    """How many changes of each class, every class named."""
    found = [change.breaks for per_method in changes.values() for change in per_method]
    return {breaks: found.count(breaks) for breaks in Breaks}
