"""What is wrong with an answer, one violation per faulty field, with the field's path.

Schema violations come from the spec's component schemas (nearrpc.spec). jsonschema reports a
failed `oneOf`/`anyOf` as one error at the combinator; here the branch the value was meant to
match is picked (the one whose type and discriminating `enum` fit) and its own failures are
reported instead, so a broken field inside a nullable object or a tagged union is named by
its own path rather than by its container's.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from jsonschema.exceptions import ValidationError

from nearrpc.conform.spec_map import component_validator

_MESSAGE_LIMIT = 200
_NOTE_LIMIT = 4096


class Kind(enum.StrEnum):
    MISSING = "missing required"
    TYPE = "wrong type"
    RANGE = "out of range"
    BAD_VALUE = "bad value"  # not in an enum, not matching a pattern
    EXTRA = "extra member"  # where the spec sets additionalProperties: false
    SHAPE = "no matching shape"  # none of a oneOf/anyOf's shapes, and no clear favourite
    MISMATCH = "contradicts the request"  # e.g. a block of another height than asked for
    RULE = "breaks nearcore's rule"  # error names, codes and HTTP statuses
    NOT_JSON_RPC = "not JSON-RPC"
    NO_ANSWER = "no answer"


@dataclass(frozen=True, slots=True)
class Violation:
    path: str  # `result.header.hash`, `error.cause.name`, `HTTP status`, `body`
    kind: Kind
    message: str

    def as_json(self) -> dict[str, str]:
        return {"path": self.path, "kind": str(self.kind), "message": self.message}


_KINDS = {
    "type": Kind.TYPE,
    "additionalProperties": Kind.EXTRA,
    "unevaluatedProperties": Kind.EXTRA,
    "enum": Kind.BAD_VALUE,
    "const": Kind.BAD_VALUE,
    "pattern": Kind.BAD_VALUE,
    "format": Kind.BAD_VALUE,
    **dict.fromkeys(
        ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
         "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties"),
        Kind.RANGE,
    ),
}


def field_path(prefix: str, parts: Iterable[str | int]) -> str:
    """`result` + (`chunks`, 0, `gas_used`) -> `result.chunks[0].gas_used`."""
    text = prefix
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def shorten(text: str, limit: int = _MESSAGE_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def note_text(text: str) -> str:
    """A note in full (the table wraps it): a node's error texts are far shorter than the bound,
    which only keeps what a hostile endpoint sends from filling the report."""
    return shorten(text, _NOTE_LIMIT)


def schema_violations(component: str, instance: object, prefix: str) -> list[Violation]:
    """Every way `instance` fails `#/components/schemas/<component>`, paths under `prefix`."""
    found: list[Violation] = []
    for error in component_validator(component).iter_errors(instance):
        found.extend(_leaves(error, prefix))
    return unique_paths(found)


def unique_paths(violations: Iterable[Violation]) -> list[Violation]:
    """The first violation of each path: one finding per field."""
    seen: dict[str, Violation] = {}
    for violation in violations:
        seen.setdefault(violation.path, violation)
    return list(seen.values())


def _leaves(error: ValidationError, prefix: str) -> Iterator[Violation]:
    where = list(error.absolute_path)
    if error.validator in ("oneOf", "anyOf") and error.context:
        branch = _intended_branch(error)
        if branch is not None:
            for inner in branch:
                yield from _leaves(inner, prefix)
            return
        common = _common_discriminator(error)
        if common is not None:
            yield _tag_violation(prefix, common)
            return
        shapes = len(error.validator_value) if isinstance(error.validator_value, list) else 0
        yield Violation(field_path(prefix, where), Kind.SHAPE, f"matches none of the {shapes} shapes the spec allows")
        return
    if error.validator == "required" and isinstance(error.instance, dict):
        for name in _listed(error.validator_value):
            if name not in error.instance:
                yield Violation(field_path(prefix, [*where, str(name)]), Kind.MISSING, f"{name!r} is required")
        return
    if error.validator in ("additionalProperties", "unevaluatedProperties") and isinstance(error.instance, dict):
        for name in _extra_members(error.instance, error.schema):
            yield Violation(field_path(prefix, [*where, name]), Kind.EXTRA, f"{name!r} is not allowed here")
        return
    kind = _KINDS.get(str(error.validator), Kind.SHAPE)
    yield Violation(field_path(prefix, where), kind, shorten(error.message))


def _listed(value: object) -> list[object]:
    """A keyword's value that is a list (`required`, `enum`), as a list."""
    return list(value) if isinstance(value, list) else []


def _extra_members(instance: dict[str, object], schema: object) -> list[str]:
    if not isinstance(schema, dict):
        return list(instance)
    known = schema.get("properties", {})
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    return [name for name in instance if name not in known and not any(p.search(name) for p in patterns)]


def _by_branch(error: ValidationError) -> dict[int, list[ValidationError]]:
    branches: dict[int, list[ValidationError]] = {}
    for inner in error.context or ():
        index = inner.relative_schema_path[0]
        if isinstance(index, int):
            branches.setdefault(index, []).append(inner)
    return branches


def _misfit(errors: Sequence[ValidationError], depth: int) -> tuple[int, int, int, int]:
    """How plainly a branch is the wrong shape: a type or tag mismatch of the value itself,
    then a discriminating member (`name`, a union's tag) with another value, then missing
    members, then the number of failures."""
    own = [e for e in errors if len(e.absolute_path) == depth]
    child = [e for e in errors if len(e.absolute_path) == depth + 1]
    return (
        sum(e.validator in ("type", "enum", "const") for e in own),
        sum(e.validator in ("enum", "const") for e in child),
        sum(e.validator == "required" for e in own),
        len(errors),
    )


def _intended_branch(error: ValidationError) -> list[ValidationError] | None:
    """The failures of the one branch that fits best, None when no branch stands out."""
    depth = len(error.absolute_path)
    branches = _by_branch(error)
    if not branches:
        return None
    scored = sorted((_misfit(errors, depth), index) for index, errors in branches.items())
    if len(scored) > 1 and scored[0][0] == scored[1][0]:
        return None
    return branches[scored[0][1]]


@dataclass(frozen=True, slots=True)
class _Discriminator:
    where: list[str | int]
    value: object
    allowed: list[object]


def _common_discriminator(error: ValidationError) -> _Discriminator | None:
    """A member every branch tags with its own `enum` (e.g. `cause.name`) and the value fits
    none of them: reported as that member's bad value, with every allowed value."""
    depth = len(error.absolute_path)
    per_branch = [
        {tuple(e.absolute_path): e for e in errors if len(e.absolute_path) == depth + 1 and e.validator == "enum"}
        for errors in _by_branch(error).values()
    ]
    if not per_branch:
        return None
    common = set.intersection(*(set(tags) for tags in per_branch))
    if len(common) != 1:
        return None
    (where,) = common
    allowed: list[object] = []
    for tags in per_branch:
        allowed.extend(v for v in _listed(tags[where].validator_value) if v not in allowed)
    return _Discriminator(list(where), per_branch[0][where].instance, allowed)


def _tag_violation(prefix: str, tag: _Discriminator) -> Violation:
    allowed = ", ".join(str(v) for v in tag.allowed)
    return Violation(field_path(prefix, tag.where), Kind.BAD_VALUE, shorten(f"{tag.value!r} is not one of {allowed}"))
