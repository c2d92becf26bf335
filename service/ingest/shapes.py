"""What an input item is, told by its shape.

An item is a bare result, a JSON-RPC response (`{"jsonrpc", "result" | "error", "id"}`), or a
recorded exchange `{"request": <JSON-RPC request>, "response": <response>}`. A result alone
does not say which account a view belongs to, or at which block a protocol config was read;
that context comes from the exchange's request params, or from members set beside `result`
in a response (`account_id`, `block_hash`, `block_height`, `epoch_id`). An account view may
also carry `account_id` itself. An access key list (query view_access_key_list or
EXPERIMENTAL_view_access_key_list) names its account only through that context.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nearrpc.ingest.jsonio import json_kind
from nearrpc.nearcore.views import ACCOUNT_VIEW_BLOCK_MEMBERS

# Members a response (or a `{"result": ...}` wrapper) may carry besides the JSON-RPC ones.
CONTEXT_KEYS = ("account_id", "block_hash", "block_height", "epoch_id")
_RESPONSE_KEYS = ("jsonrpc", "id", "result", "error")


class ShapeError(ValueError):
    """The item is none of the things an import understands."""


@dataclass(frozen=True, slots=True)
class Context:
    account_id: str | None = None
    block_ref: int | str | None = None  # a height or a hash the value was read at
    epoch_id: str | None = None


@dataclass(frozen=True, slots=True)
class BlockItem:
    view: dict[str, Any]


@dataclass(frozen=True, slots=True)
class AccountItem:
    account_id: str
    height: int
    block_hash: str
    view: dict[str, Any] | None  # without block_height/block_hash; None: no such account then


@dataclass(frozen=True, slots=True)
class AccessKeysItem:
    """An account's whole key list (AccessKeyList) as read at a block."""

    account_id: str
    height: int
    block_hash: str
    keys: tuple[tuple[str, dict[str, Any]], ...]  # (public key, AccessKeyView)


@dataclass(frozen=True, slots=True)
class ContractCodeItem:
    """Contract code (ContractCodeView): the wasm, under its hash."""

    code_hash: str
    code_base64: str


@dataclass(frozen=True, slots=True)
class ProtocolConfigItem:
    config: dict[str, Any]
    context: Context


@dataclass(frozen=True, slots=True)
class GenesisConfigItem:
    config: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ClientConfigItem:
    config: dict[str, Any]


@dataclass(frozen=True, slots=True)
class IgnoredItem:
    reason: str  # e.g. "error response UNKNOWN_BLOCK"


Item = (
    BlockItem | AccountItem | AccessKeysItem | ContractCodeItem | ProtocolConfigItem | GenesisConfigItem
    | ClientConfigItem | IgnoredItem
)  # fmt: skip


def _merge(context: Context, source: dict[str, Any]) -> Context:
    account_id = source.get("account_id", context.account_id)
    block_ref = context.block_ref
    for key in ("block_id", "block_hash", "block_height"):
        if source.get(key) is not None:
            block_ref = source[key]
    epoch_id = source.get("epoch_id", context.epoch_id)
    if account_id is not None and not isinstance(account_id, str):
        raise ShapeError(f"account_id must be a string, got {account_id!r}")
    if block_ref is not None and (isinstance(block_ref, bool) or not isinstance(block_ref, int | str)):
        raise ShapeError(f"a block reference must be a height or a hash, got {block_ref!r}")
    if epoch_id is not None and not isinstance(epoch_id, str):
        raise ShapeError(f"epoch_id must be a string, got {epoch_id!r}")
    return Context(account_id, block_ref, epoch_id)


def _request_context(request: object) -> Context:
    if not isinstance(request, dict):
        raise ShapeError("an exchange's request must be a JSON-RPC request object")
    params = request.get("params")
    if isinstance(params, list) and len(params) == 1:  # legacy positional [block_id]
        params = {"block_id": params[0]}
    return _merge(Context(), params) if isinstance(params, dict) else Context()


def _keys(value: dict[str, Any]) -> str:
    names = list(value)
    return ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")


def _account(result: dict[str, Any], context: Context) -> AccountItem:
    dropped = (*ACCOUNT_VIEW_BLOCK_MEMBERS, "account_id")
    view = {key: value for key, value in result.items() if key not in dropped}
    account_id = result.get("account_id", context.account_id)
    if not isinstance(account_id, str):
        raise ShapeError(
            "an account view does not name its account: add \"account_id\" beside \"result\" (or save "
            "the request with it as {\"request\": ..., \"response\": ...})"
        )
    height, block_hash = result.get("block_height"), result.get("block_hash")
    if isinstance(height, bool) or not isinstance(height, int) or not isinstance(block_hash, str):
        raise ShapeError("an account view needs the block_height and block_hash it was read at")
    return AccountItem(account_id, height, block_hash, view)


def _access_keys(result: dict[str, Any], context: Context) -> AccessKeysItem:
    account_id = context.account_id
    height, block_hash = result.get("block_height"), result.get("block_hash")
    if not isinstance(account_id, str):
        raise ShapeError("an access key list does not name its account: save the request with it")
    if isinstance(height, bool) or not isinstance(height, int) or not isinstance(block_hash, str):
        raise ShapeError("an access key list needs the block_height and block_hash it was read at")
    keys: list[tuple[str, dict[str, Any]]] = []
    for entry in result["keys"]:
        key, view = (entry.get("public_key"), entry.get("access_key")) if isinstance(entry, dict) else (None, None)
        if not isinstance(key, str) or not isinstance(view, dict):
            raise ShapeError("an access key list entry needs public_key and access_key")
        keys.append((key, view))
    return AccessKeysItem(account_id, height, block_hash, tuple(keys))


def _result(result: object, context: Context) -> Item:
    if not isinstance(result, dict):
        raise ShapeError(f"a result must be a JSON object, got {json_kind(result)}")
    if "header" in result and "chunks" in result:
        return BlockItem(result)
    if "runtime_config" in result:
        return ProtocolConfigItem(result, context)
    if "validators" in result and "total_supply" in result:
        return GenesisConfigItem(result)
    if {"amount", "locked", "code_hash"} <= result.keys():
        return _account(result, context)
    if "rpc_addr" in result or "tracked_shards_config" in result:
        return ClientConfigItem(result)
    if isinstance(result.get("keys"), list):
        return _access_keys(result, context)
    if isinstance(result.get("code_base64"), str) and isinstance(result.get("hash"), str):
        return ContractCodeItem(result["hash"], result["code_base64"])
    raise ShapeError(
        "not a block, account view, access key list, contract code, protocol config, genesis config or "
        "client config "
        f"(members: {_keys(result)})"
    )


def _error(error: object) -> Item:
    cause = error.get("cause") if isinstance(error, dict) else None
    name = cause.get("name") if isinstance(cause, dict) else None
    info = cause.get("info") if isinstance(cause, dict) else None
    if name == "UNKNOWN_ACCOUNT" and isinstance(info, dict):
        account_id = info.get("requested_account_id")
        height, block_hash = info.get("block_height"), info.get("block_hash")
        if isinstance(account_id, str) and isinstance(height, int) and isinstance(block_hash, str):
            return AccountItem(account_id, height, block_hash, None)
        raise ShapeError("an UNKNOWN_ACCOUNT error needs requested_account_id, block_height and block_hash")
    return IgnoredItem(f"error response {name or '(no cause)'}")


def classify(value: object) -> Item:
    """What `value` holds, with its context."""
    if not isinstance(value, dict):
        raise ShapeError(f"expected a JSON object, got {json_kind(value)}")
    context = Context()
    if "request" in value and "response" in value:
        context = _request_context(value["request"])
        value = value["response"]
        if not isinstance(value, dict):
            raise ShapeError("an exchange's response must be a JSON-RPC response object")
    if "result" in value or "error" in value:
        unknown = [key for key in value if key not in _RESPONSE_KEYS and key not in CONTEXT_KEYS]
        if unknown:
            raise ShapeError(f"a response has unexpected members {unknown}")
        context = _merge(context, value)
        if "error" in value and value.get("error") is not None:
            return _error(value["error"])
        return _result(value["result"], context)
    return _result(value, context)
