"""Turn raw `params` into the generated, typed params models, with nearcore's parsing rules.

A block reference is `block_id` (height or base58 hash), `finality` or `sync_checkpoint`; the
first of them in the request wins, later ones and unknown members are ignored. `block` also takes
the positional `[block_id]`, `gas_price` only `[block_id or null]` (and the spec's object form),
`query` its legacy `[path, data]` (nearrpc.http.query_params). A height spelled as an integral
float (5.0) is that height, as JSON Schema reads it; nearcore refuses it. Errors read like
nearcore's ("Failed parsing args: ..."). The result is validated strictly into the generated
model, so handlers get typed input.
"""

from __future__ import annotations

from typing import Any, Final

import pydantic
from pydantic_core import ErrorDetails

from nearrpc.generated import models
from nearrpc.generated.methods import MethodSpec
from nearrpc.http.changes_params import changes_members
from nearrpc.http.params_branches import REFERENCE_MEMBERS, branch_of
from nearrpc.http.query_params import (
    REQUEST_TYPE_OF_METHOD,
    checked_public_key,
    is_legacy_form,
    legacy_query,
    query_members,
    request_members,
)
from nearrpc.methods.blocks import height_of
from nearrpc.methods.errors import RpcError, parse_error
from nearrpc.nearcore.account_id import account_id_refusal
from nearrpc.nearcore.base58 import HASH_CHARS, Base58Error, decode_onto
from nearrpc.nearcore.echo import shown

FINALITIES: Final = ("optimistic", "near-final", "final")
SYNC_CHECKPOINTS: Final = ("genesis", "earliest_available")


def _failed(detail: str) -> RpcError:
    return parse_error(f"Failed parsing args: {detail}")


def _json_kind(value: object) -> str:
    """How serde names an unexpected JSON value in its messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value}`"
    if isinstance(value, str):
        return f'string "{shown(value)}"'
    if isinstance(value, list):
        return "sequence"
    return "map"


def is_block_hash(text: str) -> bool:
    """A 32-byte base58 hash, decoded onto 32 bytes as nearcore does (so a long text costs
    no more than a short one); a text longer than a hash's 44 characters is refused unread."""
    if len(text) > HASH_CHARS:
        return False
    try:
        return len(decode_onto(text, 32)) == 32
    except Base58Error:
        return False


def checked_block_id(value: object) -> int | str:
    """A height (integral floats read as the integer they equal) or a 32-byte base58 hash."""
    height = height_of(value)
    if height is not None:
        return height
    if isinstance(value, str) and is_block_hash(value):
        return value
    raise _failed("data did not match any variant of untagged enum BlockId")


def _check_variant(value: object, allowed: tuple[str, ...]) -> None:
    if not isinstance(value, str):
        raise _failed(f"invalid type: {_json_kind(value)}, expected variant identifier")
    if value not in allowed:
        expected = ", ".join(f"`{v}`" for v in allowed)
        raise _failed(f"unknown variant `{shown(value)}`, expected one of {expected}")


def block_reference(params: dict[str, Any]) -> dict[str, Any]:
    """The winning reference member alone, e.g. {"finality": "final"}."""
    for key, value in params.items():
        if key == "block_id":
            value = checked_block_id(value)
        elif key == "finality":
            _check_variant(value, FINALITIES)
        elif key == "sync_checkpoint":
            _check_variant(value, SYNC_CHECKPOINTS)
        else:
            continue
        return {key: value}
    raise _failed("no variant of enum BlockReference found in flattened data")


def _expect_object(params: object, struct: str) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise _failed(f"invalid type: {_json_kind(params)}, expected struct {struct}")
    return params


def checked_account_id(value: object) -> str:
    """An AccountId as serde reads one, or its refusal."""
    if not isinstance(value, str):
        raise _failed(f"invalid type: {_json_kind(value)}, expected a string")
    refusal = account_id_refusal(value)
    if refusal is not None:
        raise _failed(refusal)
    return value


def _account_id(params: dict[str, Any]) -> str:
    if "account_id" not in params:
        raise _failed("missing field `account_id`")
    return checked_account_id(params["account_id"])


def _gas_price(params: object) -> tuple[object]:
    """gas_price's `[block_id]` (null: the head), as nearcore's `(MaybeBlockId,)` tuple takes it;
    also `{"block_id": ...}`, the object form the spec describes (spec/DEVIATIONS.md)."""
    if isinstance(params, dict):
        value = params.get("block_id")
        return (None if value is None else checked_block_id(value),)
    if not isinstance(params, list):
        raise _failed(f"invalid type: {_json_kind(params)}, expected a tuple of size 1")
    if len(params) != 1:
        raise _failed(f"invalid length {len(params)}, expected a tuple of size 1")
    return (None if params[0] is None else checked_block_id(params[0]),)


# Issue 30's reads, whose forms nearrpc.http.read_params parses (it builds on this module's
# helpers, so it is imported where it is used)
_READ_METHODS: Final = frozenset({
    "chunk", "tx", "EXPERIMENTAL_tx_status", "EXPERIMENTAL_receipt", "validators", "EXPERIMENTAL_validators_ordered",
})  # fmt: skip


def normalise(method: MethodSpec, params: object) -> Any:
    """The params as the typed model expects them, or None for methods that ignore params."""
    if method.name in _READ_METHODS:
        from nearrpc.http.read_params import READ_PARAMS

        return READ_PARAMS[method.name](params)
    if not method.takes_block_reference:
        return None
    if method.name == "gas_price":
        return _gas_price(params)
    if method.name == "query" and is_legacy_form(params):
        return legacy_query(str(params[0]), str(params[1]))  # type: ignore[index]  # two strings
    if method.accepts_positional and method.name != "query" and isinstance(params, list):
        if len(params) != 1:
            raise _failed(f"invalid length {len(params)}, expected a tuple of size 1")
        return (checked_block_id(params[0]),)
    fields = _expect_object(params, method.params_schema)
    if method.params_members == REFERENCE_MEMBERS:  # `block`, protocol_config: a reference alone
        return block_reference(fields)
    normalised: dict[str, Any] = {}
    if "changes_type" in method.params_members:  # the reference is read first, then the request
        normalised.update(block_reference(fields))
        normalised.update(changes_members(fields, _failed, _json_kind))
        return normalised
    if method.name == "query":
        normalised.update(query_members(fields, _failed))
    elif method.name in REQUEST_TYPE_OF_METHOD:
        normalised.update(request_members(REQUEST_TYPE_OF_METHOD[method.name], fields, _failed))
    if "account_id" in normalised or ("account_id" in method.params_members and method.name != "query"):
        normalised["account_id"] = _account_id(fields)
    if "public_key" in normalised or ("public_key" in method.params_members and method.name != "query"):
        if "public_key" not in fields:
            raise _failed("missing field `public_key`")
        normalised["public_key"] = checked_public_key(fields["public_key"], _failed)
    normalised.update(block_reference(fields))  # the request's own members are checked first
    return normalised


def typed_params(method: MethodSpec, params: object) -> Any:
    """Validate `params` into the generated model of `method` (strictly: no coercion)."""
    model = getattr(models, method.params_schema)
    normalised = normalise(method, params)
    branch = branch_of(model, normalised)
    if branch is not None:  # the one branch the request can fit (params_branches): validated alone
        try:
            fitted = branch.__pydantic_validator__.validate_python(normalised, strict=True)
        except pydantic.ValidationError:
            pass  # refused: worded from the whole union's errors, as before
        else:
            # wrapped by the union's own validator, which keeps a branch's instance as it is: a
            # few C calls, where model_construct's Python costs microseconds a request
            return model.__pydantic_validator__.validate_python(fitted, strict=True)
    try:
        return model.model_validate(normalised, strict=True)
    except pydantic.ValidationError as exc:
        raise _failed(_refusal(exc.errors())) from None


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


def _of_another_branch(error: ErrorDetails) -> bool:
    """An error that only says the request is another branch of the union: another shape,
    reference member or `request_type` (normalise has already picked them)."""
    kind, where = error["type"], error["loc"]
    return (
        kind == "literal_error"
        or (kind == "missing" and where[-1] in REFERENCE_MEMBERS)
        or (len(where) == 1 and kind in _EXPECTED)  # the branch's own shape: a map, a tuple
    )


def _refusal(errors: list[ErrorDetails]) -> str:
    """The first error of the branch the request means, in serde's words.

    A params model is a union with a branch per reference member (and per `request_type` for
    query); pydantic lists every branch's errors, first those of branches the request never
    meant (RpcQueryRequest1 misses the `block_id` a request with a finality has no reason to
    send). The meant branch is one without such errors; its first error names the member at
    fault.
    """
    branches: dict[object, list[ErrorDetails]] = {}
    for error in errors:
        branches.setdefault(error["loc"][:1], []).append(error)
    meant = next((found for found in branches.values() if not any(map(_of_another_branch, found))), errors)
    error = meant[0]
    member = ".".join(str(part) for part in error["loc"][1:]) or str(error["loc"][0])
    given = _json_kind(error["input"])
    context = error.get("ctx") or {}
    if error["type"] == "missing":
        return f"missing field `{member}`"
    if error["type"] in _EXPECTED:
        return f"invalid type: {given}, expected {_EXPECTED[error['type']]} for `{member}`"
    if error["type"] == "greater_than_equal":
        return f"invalid value: {given}, expected at least {context['ge']} for `{member}`"
    if error["type"] == "less_than_equal":
        return f"invalid value: {given}, expected at most {context['le']} for `{member}`"
    if error["type"] == "string_pattern_mismatch":
        return f"invalid value: {given}, expected a string matching {context['pattern']} for `{member}`"
    return f"invalid value: {given} for `{member}`"
