"""The store's JSON of accounts and access keys read into the runtime's model and written back.

The store keeps an account as its AccountView without block_height/block_hash, and an access key
as its AccessKeyView (nonce, permission), in nearcore's member order (core/primitives/src/views.rs
`AccountView`, `AccessKeyView`, `AccessKeyPermissionView`), as the sample writes them."""

from __future__ import annotations

from typing import Any

import orjson

from nearrpc.sandbox.runtime.model import AccessKey, Account, FunctionCallPermission


def account_from_json(data: bytes) -> Account:
    view = orjson.loads(data)
    return Account(int(view["amount"]), int(view["locked"]), str(view["code_hash"]), int(view["storage_usage"]))


def account_json(account: Account, earlier: bytes | None = None) -> bytes:
    """The account's view; members the model does not carry (a global contract's) are kept from
    its `earlier` view."""
    view: dict[str, Any] = {
        "amount": str(account.amount),
        "locked": str(account.locked),
        "code_hash": account.code_hash,
        "storage_usage": account.storage_usage,
        "storage_paid_at": 0,
    }
    if earlier is not None:
        previous = orjson.loads(earlier)
        view.update((key, value) for key, value in previous.items() if key.startswith("global_contract_"))
    return orjson.dumps(view)


def access_key_from_json(data: bytes) -> AccessKey:
    view = orjson.loads(data)
    return AccessKey(int(view["nonce"]), permission_from_view(view["permission"]))


def permission_from_view(permission: Any) -> FunctionCallPermission | None:
    if permission == "FullAccess":
        return None
    call = permission["FunctionCall"]
    allowance = call.get("allowance")
    return FunctionCallPermission(
        None if allowance is None else int(allowance), str(call["receiver_id"]), tuple(call["method_names"])
    )


def access_key_json(key: AccessKey) -> bytes:
    permission: Any = "FullAccess"
    if key.permission is not None:
        allowance = key.permission.allowance
        permission = {
            "FunctionCall": {
                "allowance": None if allowance is None else str(allowance),
                "receiver_id": key.permission.receiver_id,
                "method_names": list(key.permission.method_names),
            }
        }
    return orjson.dumps({"nonce": key.nonce, "permission": permission})
