"""Hold a spec to the declared interface (spec/interface.json), except where DEVIATIONS.md says.

The declared interface is interface 1.2.14 as the brief states it: each object's fields, the
fields it marks required or optional, and the enum values it names, by the paths of
`tools.spec_fields`. A spec departs from it where it lacks a declared field or enum value, does
not require a field the brief requires, or requires one the brief calls optional. A departure
is allowed only when its path is declared in the table under `DECLARED_HEADING` in
spec/DEVIATIONS.md (the path in backticks in the row's first cell).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tools.spec_fields import FlatSpec

Json = Any
DECLARED_HEADING = "## Interface fields the spec departs from"
_FIRST_CELL_PATH = re.compile(r"^\|\s*`([^`]+)`")


@dataclass(frozen=True, order=True)
class Departure:
    path: str
    problem: str

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


def departures(flat: FlatSpec, interface: dict[str, Json]) -> list[Departure]:
    """Every way the flattened spec departs from the declared interface, sorted."""
    version = interface["version"]
    found: list[Departure] = []
    for path, declared in interface["objects"].items():
        if path not in flat.kinds:
            found.append(Departure(path, f"missing (an object of interface {version})"))
            continue
        required = flat.required.get(path, set())
        for name in declared["fields"]:
            if f"{path}.{name}" not in flat.kinds:
                found.append(Departure(f"{path}.{name}", f"missing (a field of interface {version})"))
        for name in declared.get("required", []):
            if f"{path}.{name}" in flat.kinds and name not in required:
                found.append(Departure(f"{path}.{name}", f"optional (interface {version} requires it)"))
        for name in declared.get("optional", []):
            if name in required:
                found.append(Departure(f"{path}.{name}", f"required (optional in interface {version})"))
    for path, values in interface["enums"].items():
        missing = sorted(set(values) - flat.enums.get(path, set()))
        if path in flat.kinds and missing:
            found.append(Departure(path, f"lacks the value(s) {', '.join(missing)} of interface {version}"))
    return sorted(found)


def declared_paths(deviations_markdown: str) -> set[str]:
    """The paths listed in the first column of the DEVIATIONS.md table of interface departures."""
    section = deviations_markdown.partition(DECLARED_HEADING)[2].split("\n## ", 1)[0]
    return {match.group(1) for line in section.splitlines() if (match := _FIRST_CELL_PATH.match(line))}


def undeclared(found: list[Departure], declared: set[str]) -> list[Departure]:
    return [departure for departure in found if departure.path not in declared]
