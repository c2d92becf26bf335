"""The params of `query` and of the EXPERIMENTAL methods that each take one of its request
types (nearcore's chain/jsonrpc/src/api/query.rs and view_*.rs): accounts, access keys,
contract code, state and view calls.

`query` takes two forms. A two-element array of strings is the legacy path form `[path, data]`
(`parse_path_data`): `account/<id>`, `access_key/<id>`, `access_key/<id>/<public key>`,
`code/<id>`, `contract/<id>` (data: base58 key prefix), `call/<id>/<method>` (data: base58
arguments), always at the optimistic head; its refusals carry nearcore's bare texts. Anything
else is the object form: `request_type` with the members of that request type, then a block
reference (the first member wins); unknown members are ignored. Both come out as the object the
generated model takes. The EXPERIMENTAL methods take the object form without `request_type`.
"""

from __future__ import annotations

import base64
from typing import Any, Final, TypeGuard

from nearrpc.generated.methods import MethodSpec
from nearrpc.methods.errors import parse_error
from nearrpc.methods.params.readers import (
    Reader,
    block_reference,
    checked_public_key,
    expect_object,
    failed,
    required_account_id,
)
from nearrpc.nearcore.account_id import account_id_problem
from nearrpc.nearcore.base58 import Base58Error, BufferTooSmall, decode_capped
from nearrpc.nearcore.echo import shown
from nearrpc.nearcore.public_key import PublicKeyError, canonical_public_key

# QueryRequest's variants (request_type values) and the members each one reads besides
# `request_type`, in the spec's order; `public_key` members are parsed as keys.
REQUEST_MEMBERS: Final[dict[str, tuple[str, ...]]] = {
    "view_account": ("account_id",),
    "view_code": ("account_id",),
    "view_state": ("account_id", "prefix_base64", "include_proof", "after_key_base64", "limit"),
    "view_access_key": ("account_id", "public_key"),
    "view_access_key_list": ("account_id",),
    "view_gas_key_nonces": ("account_id", "public_key"),
    "call_function": ("account_id", "method_name", "args_base64"),
    "view_global_contract_code": ("code_hash",),
    "view_global_contract_code_by_account_id": ("account_id",),
}
_OPTIONAL: Final = frozenset({"include_proof", "after_key_base64", "limit"})
# nearcore's QUERY_DATA_MAX_SIZE (chain/jsonrpc/src/api/query.rs): the legacy path's base58 `data`
# (a state prefix, call arguments) decodes onto at most this many bytes less the path's length;
# decode_capped reads no more of it than could fit, so a long text costs what a fitting one does.
QUERY_DATA_MAX_SIZE: Final = 10 * 1024
# The EXPERIMENTAL methods that take one request type's members (besides the account's), with
# no `request_type`.
REQUEST_TYPE_OF_METHOD: Final[dict[str, str]] = {
    "EXPERIMENTAL_call_function": "call_function",
    "EXPERIMENTAL_view_state": "view_state",
}


def is_legacy_form(params: object) -> TypeGuard[list[str]]:
    """nearcore's `try_pair`: exactly two elements, both strings."""
    return isinstance(params, list) and len(params) == 2 and all(isinstance(p, str) for p in params)


def _legacy_account(text: str) -> str:
    problem = account_id_problem(text)
    if problem is not None:
        raise parse_error(problem)
    return text


def _legacy_data(path: str, data: str) -> str:
    """The base58 `data` of a contract/call path, as the base64 the object form carries
    (`parse_bs58_data`: a buffer of the smaller of the budget and the text's length)."""
    budget = max(0, QUERY_DATA_MAX_SIZE - len(path.encode("utf-8")))
    try:
        return base64.b64encode(decode_capped(data, min(budget, len(data)))).decode("ascii")
    except BufferTooSmall:
        raise parse_error("Query data size is too large") from None
    except Base58Error as problem:
        raise parse_error(str(problem)) from None


def legacy_query(path: str, data: str) -> dict[str, Any]:
    """The object form of `[path, data]`, at the optimistic head (`BlockReference::latest()`)."""
    parts = path.split("/", 2)
    if len(parts) < 2:
        raise parse_error("Not enough query parameters provided")
    command, account_id, extra = parts[0], _legacy_account(parts[1]), parts[2] if len(parts) > 2 else None
    request: dict[str, Any] = {"finality": "optimistic", "account_id": account_id}
    if command == "account":
        request["request_type"] = "view_account"
    elif command == "access_key" and extra is None:
        request["request_type"] = "view_access_key_list"
    elif command == "access_key":
        try:
            request.update(request_type="view_access_key", public_key=canonical_public_key(extra or ""))
        except PublicKeyError:
            raise parse_error("Invalid public key") from None
    elif command == "code":
        request["request_type"] = "view_code"
    elif command == "contract":
        request.update(request_type="view_state", prefix_base64=_legacy_data(path, data), include_proof=False)
    elif command == "call":
        if extra is None:
            raise parse_error("Method name is missing")
        request.update(request_type="call_function", method_name=extra, args_base64=_legacy_data(path, data))
    else:
        raise parse_error(f"Unknown path {shown(command)}")
    return request


def query_members(fields: dict[str, Any]) -> dict[str, Any]:
    """`request_type` and its members from the object form."""
    if "request_type" not in fields:
        raise failed("missing field `request_type`")
    request_type = fields["request_type"]
    if not isinstance(request_type, str) or request_type not in REQUEST_MEMBERS:
        if not isinstance(request_type, str):
            raise failed("invalid type: expected a string for `request_type`")
        expected = ", ".join(f"`{name}`" for name in REQUEST_MEMBERS)
        raise failed(f"unknown variant `{shown(request_type)}`, expected one of {expected}")
    return {"request_type": request_type, **request_members(request_type, fields)}


def request_members(request_type: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The members `request_type` reads from an object form (query's, or its EXPERIMENTAL method's)."""
    members: dict[str, Any] = {}
    for name in REQUEST_MEMBERS[request_type]:
        if name in fields:
            members[name] = fields[name]
            if name == "limit" and isinstance(fields[name], float) and fields[name].is_integer():
                members[name] = int(fields[name])  # an integral float is that integer, as JSON Schema reads it
        elif name not in _OPTIONAL:
            raise failed(f"missing field `{name}`")
    # serde's default fills an absent include_proof; a null one is no boolean (the generated
    # model would take it as absent)
    if "include_proof" in members and not isinstance(members["include_proof"], bool):
        raise failed("invalid type: expected a boolean for `include_proof`")
    return members


def query_params(method: MethodSpec, params: object) -> object:
    if is_legacy_form(params):
        return legacy_query(params[0], params[1])
    fields = expect_object(params, method.params_schema)
    normalised = query_members(fields)
    if "account_id" in normalised:
        normalised["account_id"] = required_account_id(fields)
    if "public_key" in normalised:
        normalised["public_key"] = checked_public_key(fields["public_key"])
    normalised.update(block_reference(fields))  # the request's own members are checked first
    return normalised


def account_params(method: MethodSpec, params: object) -> object:
    """`{account_id, <block reference>}`: an account, its access key list, its code."""
    fields = expect_object(params, method.params_schema)
    normalised = {"account_id": required_account_id(fields)}
    normalised.update(block_reference(fields))
    return normalised


def access_key_params(method: MethodSpec, params: object) -> object:
    fields = expect_object(params, method.params_schema)
    normalised = {"account_id": required_account_id(fields)}
    if "public_key" not in fields:
        raise failed("missing field `public_key`")
    normalised["public_key"] = checked_public_key(fields["public_key"])
    normalised.update(block_reference(fields))
    return normalised


def request_type_params(method: MethodSpec, params: object) -> object:
    """A view call's or a state's members (REQUEST_TYPE_OF_METHOD), without `request_type`."""
    fields = expect_object(params, method.params_schema)
    normalised = request_members(REQUEST_TYPE_OF_METHOD[method.name], fields)
    normalised["account_id"] = required_account_id(fields)
    normalised.update(block_reference(fields))
    return normalised


READERS: Final[dict[str, Reader]] = {
    "query": query_params,
    "EXPERIMENTAL_view_account": account_params,
    "EXPERIMENTAL_view_access_key_list": account_params,
    "EXPERIMENTAL_view_code": account_params,
    "EXPERIMENTAL_view_access_key": access_key_params,
    "EXPERIMENTAL_call_function": request_type_params,
    "EXPERIMENTAL_view_state": request_type_params,
}
