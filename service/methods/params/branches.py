"""Which branch of a params union a request means, found before validating, and the words of a
refusal the generated model gives: the model's side of every family.

A params model (`RpcQueryRequest`, `RpcBlockRequest`, ...) is a union: one branch per request type
and block reference member (`query` has 27 object branches, and its legacy tuple forms). Pydantic
validates a request against every branch to find the one that fits, ~25 us for `query`, and
every member of every branch: a changes request's `account_ids` were checked 15 times over. The
branch is already named by the request's tag (`request_type` or `changes_type`, where the union
has one) and its one block reference member, and no other branch can fit: each requires its own
reference member and its own tag literal. So a request with exactly one reference member is validated
against that branch alone, and wrapped in the union's model as pydantic would have. A request
that fails there, or names no single branch, is validated against the whole union as before, so
every refusal is worded from the same errors (`refusal`).
"""

from __future__ import annotations

import typing
from functools import cache
from typing import Any, Final

import pydantic
from pydantic_core import ErrorDetails

from nearrpc.methods.params.readers import json_kind

# a block reference's members, in the spec's order
REFERENCE_MEMBERS: Final = ("block_id", "finality", "sync_checkpoint")
_TAGS: Final = ("request_type", "changes_type")  # the members whose literal names a branch
BranchKey = tuple[str | None, str]  # (the tag's value or None, the reference member)
_UNION_TYPE: Final = type(int | str)  # how `A | B` annotations are typed (typing.Union's other spelling)


def _members(model: type[pydantic.BaseModel]) -> tuple[Any, ...]:
    """The union's members of a RootModel over a union (nothing for any other model)."""
    field = model.model_fields.get("root")
    if field is None:
        return ()
    annotation = field.annotation
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, _UNION_TYPE) else ()


def _key(branch: type[pydantic.BaseModel]) -> BranchKey | None:
    """A branch's key: its tag's single literal (if any) and its one required reference
    member; None for a branch that is no plain object model with exactly one."""
    if "root" in branch.model_fields:  # a tuple form or a nested union: never picked here
        return None
    fields = branch.model_fields
    required = [name for name in REFERENCE_MEMBERS if name in fields and fields[name].is_required()]
    if len(required) != 1:
        return None
    tag = next((fields[name] for name in _TAGS if name in fields), None)
    if tag is None:
        return (None, required[0])
    values = typing.get_args(tag.annotation)
    if typing.get_origin(tag.annotation) is not typing.Literal or len(values) != 1:
        return None
    return (str(values[0]), required[0])


@cache
def branches(model: type[pydantic.BaseModel]) -> dict[BranchKey, type[pydantic.BaseModel]]:
    """The union's object branches by key; a key two branches share names neither."""
    found: dict[BranchKey, type[pydantic.BaseModel]] = {}
    shared: set[BranchKey] = set()
    for member in _members(model):
        if not (isinstance(member, type) and issubclass(member, pydantic.BaseModel)):
            continue
        key = _key(member)
        if key is None:
            continue
        if key in found:
            shared.add(key)
        found[key] = member
    return {key: branch for key, branch in found.items() if key not in shared}


def branch_of(model: type[pydantic.BaseModel], params: object) -> type[pydantic.BaseModel] | None:
    """The one branch of `model`'s union that `params` (normalised) can fit, or None."""
    if not isinstance(params, dict):
        return None
    present = None
    for name in REFERENCE_MEMBERS:  # written out: every request runs this
        if name in params:
            if present is not None:
                return None
            present = name
    if present is None:
        return None
    tag = params["request_type"] if "request_type" in params else params.get("changes_type")  # _TAGS, in order
    table = branches(model)
    if not table:
        return None
    return table.get((tag if isinstance(tag, str) else None, present))


# What a member of the wrong JSON type was expected to be, by pydantic's error type.
_EXPECTED: Final = {
    "int_type": "an integer",
    "int_from_float": "an integer",
    "bool_type": "a boolean",
    "string_type": "a string",
    "dict_type": "a map",
    "model_type": "a map",
    "list_type": "a sequence",
    "tuple_type": "a sequence",
}


# A pattern longer than this is left out of a refusal: the spec's public key pattern, which bounds
# the base58 value, is 60,000 characters that say nothing to the client.
_PATTERN_SHOWN: Final = 200


def _of_another_branch(error: ErrorDetails) -> bool:
    """An error that only says the request is another branch of the union: another shape,
    reference member or `request_type` (the family's reader has already picked them)."""
    kind, where = error["type"], error["loc"]
    return (
        kind == "literal_error"
        or (kind == "missing" and where[-1] in REFERENCE_MEMBERS)
        or (len(where) == 1 and kind in _EXPECTED)  # the branch's own shape: a map, a tuple
    )


def _of_the_variant_sent(errors: list[ErrorDetails]) -> list[ErrorDetails]:
    """The errors left once those of an externally tagged enum's other variants are set aside: a
    variant that misses its own key where the request sent another ({"Data": ...} read as
    StateRecord's Account variant: `Account` missing, `Data` not allowed) is not the one meant."""
    missing = {error["loc"][:-1] for error in errors if error["type"] == "missing"}
    other = missing & {error["loc"][:-1] for error in errors if error["type"] == "extra_forbidden"}
    return [error for error in errors if not any(error["loc"][: len(where)] == where for where in other)]


def refusal(errors: list[ErrorDetails]) -> str:
    """The first error of the branch the request means, in serde's words.

    A params model is a union with a branch per reference member (and per `request_type` for
    query); pydantic lists every branch's errors, first those of branches the request never
    meant (RpcQueryRequest1 misses the `block_id` a request with a finality has no reason to
    send). The meant branch is one without such errors; its first error names the member at
    fault.
    """
    by_branch: dict[object, list[ErrorDetails]] = {}
    for error in errors:
        by_branch.setdefault(error["loc"][:1], []).append(error)
    meant = next((found for found in by_branch.values() if not any(map(_of_another_branch, found))), errors)
    error = (_of_the_variant_sent(meant) or meant)[0]
    member = ".".join(str(part) for part in error["loc"][1:]) or str(error["loc"][0])
    given = json_kind(error["input"])
    context = error.get("ctx") or {}
    if error["type"] == "missing":
        return f"missing field `{member}`"
    if error["type"] in _EXPECTED:
        return f"invalid type: {given}, expected {_EXPECTED[error['type']]} for `{member}`"
    if error["type"] == "greater_than_equal":
        return f"invalid value: {given}, expected at least {context['ge']} for `{member}`"
    if error["type"] == "less_than_equal":
        return f"invalid value: {given}, expected at most {context['le']} for `{member}`"
    if error["type"] == "string_pattern_mismatch" and len(context["pattern"]) <= _PATTERN_SHOWN:
        return f"invalid value: {given}, expected a string matching {context['pattern']} for `{member}`"
    return f"invalid value: {given} for `{member}`"
