"""What a spec bump changes, field by field, for the five methods.

Compares the flat views (`tools.spec_fields`) of the current spec and the rebuilt one:

    client_config
      + response.result.view_access_keys_limit: integer/uint64 (not in interface 1.2.14)
      - response.result.state_sync_external_backoff: array (a field of interface 1.2.14)
      ~ response.result.min_num_peers: integer/uint -> integer/uint64
      required response.result: + chain_id; - gc
      enum response.error.cause.name: + TIMEOUT_ERROR

An added or removed object is listed once, with the number of fields under it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from tools.spec_fields import FlatSpec

Json = Any


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


def method_changes(method: str, old: FlatSpec, new: FlatSpec, interface: dict[str, Json]) -> list[str]:
    """The report lines of one method (empty when nothing changed)."""
    declared = _declared_fields(interface)
    version = interface["version"]
    added = set(_changes(set(new.kinds) - set(old.kinds), method))
    removed = set(_changes(set(old.kinds) - set(new.kinds), method))
    lines: list[str] = []

    def short(path: str) -> str:
        return path[len(method) + 1 :]

    def nested(path: str, paths: set[str]) -> str:
        count = _fields_under(path, paths)
        return f", {count} field(s) under it" if count else ""

    for path in _outermost(added):
        note = "" if path in declared else f" (not in interface {version})"
        lines.append(f"  + {short(path)}: {_kinds(new, path)}{nested(path, added)}{note}")
    for path in _outermost(removed):
        note = f" (a field of interface {version})" if path in declared else ""
        lines.append(f"  - {short(path)}: {_kinds(old, path)}{nested(path, removed)}{note}")
    for path in _changes(set(old.kinds) & set(new.kinds), method):
        if old.kinds[path] != new.kinds[path]:
            lines.append(f"  ~ {short(path)}: {_kinds(old, path)} -> {_kinds(new, path)}")
    for path in _changes(set(old.required) | set(new.required), method):
        if path in old.kinds and path in new.kinds:
            change = _set_change(old.required.get(path, set()), new.required.get(path, set()))
            if change:
                lines.append(f"  required {short(path)}: {change}")
    for path in _changes(set(old.enums) | set(new.enums), method):
        if path in old.kinds and path in new.kinds:
            change = _set_change(old.enums.get(path, set()), new.enums.get(path, set()))
            if change:
                lines.append(f"  enum {short(path)}: {change}")
    return lines


def changelog(methods: Iterable[str], old: FlatSpec, new: FlatSpec, interface: dict[str, Json]) -> list[str]:
    lines = []
    for method in methods:
        changes = method_changes(method, old, new, interface)
        lines.append(method if changes else f"{method}: no change")
        lines.extend(changes)
    return lines
