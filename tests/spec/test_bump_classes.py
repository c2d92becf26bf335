"""Whom a change breaks (`tools.bump_report`): each rule of the docstring's table, in both
directions, on small flat views that need no upstream document."""

from __future__ import annotations

import pytest

from tools.bump_report import Breaks, counts, method_changes
from tools.spec_fields import FlatSpec

INTERFACE = {"version": "9.9.9", "objects": {}, "enums": {}}
CLIENTS, SERVERS, NOBODY = Breaks.CLIENTS, Breaks.SERVERS, Breaks.NOBODY


def _flat(
    side: str, field: set[str] | None, required: set[str] | None = None, enum: set[str] | None = None
) -> FlatSpec:
    """A method `m` whose `side` (request or response) object has one field `x` of kinds `field`."""
    flat = FlatSpec(kinds={f"m.{side}": {"object"}}, required={f"m.{side}": required or set()})
    if field is not None:
        flat.kinds[f"m.{side}.x"] = field
    if enum is not None:
        flat.enums[f"m.{side}.x"] = enum
    return flat


def _only_class(old: FlatSpec, new: FlatSpec) -> tuple[str, Breaks]:
    changes = method_changes("m", old, new, INTERFACE)
    assert len(changes) == 1, changes
    return changes[0].change, changes[0].breaks


# (what, old field kinds, new field kinds, class in a request, class in a response)
RETYPES = [
    ("a format added", {"string"}, {"string/near-crypto-hash"}, CLIENTS, SERVERS),
    ("a format dropped", {"string/near-crypto-hash"}, {"string"}, SERVERS, CLIENTS),
    ("an integer narrowed", {"integer/uint64"}, {"integer/uint32"}, CLIENTS, SERVERS),
    ("an integer widened", {"integer/uint32"}, {"integer/uint64"}, SERVERS, CLIENTS),
    ("any value allowed", {"string"}, {"any"}, SERVERS, CLIENTS),
    ("a kind added", {"object"}, {"array", "object"}, SERVERS, CLIENTS),
    ("null no longer allowed", {"null", "string"}, {"string"}, CLIENTS, SERVERS),
    ("another type", {"integer/uint64"}, {"string"}, CLIENTS, CLIENTS),
    ("the same width respelt", {"integer/uint"}, {"integer/uint64"}, NOBODY, NOBODY),
    ("integers named beside numbers", {"number"}, {"integer", "number"}, NOBODY, NOBODY),
]


@pytest.mark.parametrize(("what", "old", "new", "in_request", "in_response"), RETYPES, ids=[r[0] for r in RETYPES])
def test_a_retype_breaks_by_direction(
    what: str, old: set[str], new: set[str], in_request: Breaks, in_response: Breaks
) -> None:
    assert _only_class(_flat("request", old), _flat("request", new)) == ("retyped", in_request), what
    assert _only_class(_flat("response", old), _flat("response", new)) == ("retyped", in_response), what


@pytest.mark.parametrize("side", ["request", "response"])
def test_an_added_field_is_compatible_and_a_removed_one_breaks_clients(side: str) -> None:
    assert _only_class(_flat(side, None), _flat(side, {"string"})) == ("added", NOBODY)
    assert _only_class(_flat(side, {"string"}), _flat(side, None)) == ("removed", CLIENTS)


@pytest.mark.parametrize(
    ("side", "becomes_required", "dropped_from_required"),
    [("request", CLIENTS, SERVERS), ("response", SERVERS, CLIENTS)],
)
def test_a_required_change_breaks_by_direction(
    side: str, becomes_required: Breaks, dropped_from_required: Breaks
) -> None:
    optional, required = _flat(side, {"string"}), _flat(side, {"string"}, required={"x"})
    assert _only_class(optional, required) == ("required", becomes_required)
    assert _only_class(required, optional) == ("required", dropped_from_required)


def test_a_required_member_of_a_form_that_only_now_is_an_object_is_classed_by_the_retype() -> None:
    old = FlatSpec(kinds={"m.response": {"object"}, "m.response.x": {"string"}}, required={"m.response": set()})
    new = FlatSpec(
        kinds={"m.response": {"object"}, "m.response.x": {"object", "string"}, "m.response.x.y": {"string"}},
        required={"m.response": set(), "m.response.x": {"y"}},
    )
    classes = {change.change: change.breaks for change in method_changes("m", old, new, INTERFACE)}
    assert classes == {"added": NOBODY, "retyped": CLIENTS, "required": NOBODY}


# (what, old enum, new enum, class in a request, class in a response); None: no enum at all
ENUMS = [
    ("a value added", {"a"}, {"a", "b"}, SERVERS, CLIENTS),
    ("a value removed", {"a", "b"}, {"a"}, CLIENTS, SERVERS),
    ("one value for another", {"a"}, {"b"}, CLIENTS, CLIENTS),
    ("an enum where any string was", None, {"a"}, CLIENTS, SERVERS),
    ("any string where an enum was", {"a"}, None, SERVERS, CLIENTS),
]


@pytest.mark.parametrize(("what", "old", "new", "in_request", "in_response"), ENUMS, ids=[e[0] for e in ENUMS])
def test_an_enum_change_breaks_by_direction(
    what: str, old: set[str] | None, new: set[str] | None, in_request: Breaks, in_response: Breaks
) -> None:
    for side, expected in (("request", in_request), ("response", in_response)):
        changed = _only_class(_flat(side, {"string"}, enum=old), _flat(side, {"string"}, enum=new))
        assert changed == ("enum", expected), (what, side)


def test_every_line_of_the_text_report_carries_its_class() -> None:
    old = _flat("request", {"string"}, enum={"a"})
    new = _flat("request", {"integer"}, required={"x"}, enum={"a", "b"})
    lines = [change.line() for change in method_changes("m", old, new, INTERFACE)]
    assert lines == [
        "~ request.x: string -> integer [breaks clients]",
        "required request: + x [breaks clients]",
        "enum request.x: + b [breaks servers]",
    ]
    assert counts({"m": method_changes("m", old, new, INTERFACE)}) == {CLIENTS: 2, SERVERS: 1, NOBODY: 0}
