"""What `query` and the EXPERIMENTAL views answer, from the stored views, as nearcore shapes it.

nearcore runs every one of them as the same view-client query (chain/client view_client_actor.rs
`handle_query`): the block by reference, then the state viewer (runtime/runtime state_viewer):
- view_account: the account, or UNKNOWN_ACCOUNT;
- view_code: the account (UNKNOWN_ACCOUNT), then its code (NO_CONTRACT_CODE for none);
- view_access_key: the key, or UNKNOWN_ACCESS_KEY, without looking at the account;
- view_access_key_list: the keys under the account, `{"keys": []}` for an unknown account.
The result is the view with `block_height` and `block_hash` appended (RpcQueryResponse flattens
the view first). `query` turns UNKNOWN_ACCESS_KEY into a result carrying an `error` text
(chain/jsonrpc lib.rs `process_query_response`); the EXPERIMENTAL views answer it as an error.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Final

import orjson

from nearrpc.nearcore.views import account_view_at

# What an account without a contract has as its code hash (CryptoHash::default()).
NO_CODE_HASH: Final = "11111111111111111111111111111111"


def with_block(view_json: bytes, height: int, block_hash: str) -> bytes:
    """A stored view with the block it is answered for appended, as nearcore ends it."""
    return account_view_at(view_json, height, block_hash)


def contract_code_hash(account_view_json: bytes) -> str | None:
    """The hash of the account's own contract; None without one. state_viewer's
    view_contract_code reads the code deployed on the account itself, so an account that uses
    a global contract has none (its code_hash is the default hash)."""
    return code_hash_of(orjson.loads(account_view_json))


def code_hash_of(account: Mapping[str, Any]) -> str | None:
    """contract_code_hash of an account view already parsed."""
    code_hash = str(account["code_hash"])
    return None if code_hash == NO_CODE_HASH else code_hash


def code_view(code: bytes, code_hash: str) -> bytes:
    """ContractCodeView: the code in base64 and its hash."""
    return orjson.dumps({"code_base64": base64.b64encode(code).decode("ascii"), "hash": code_hash})


def access_key_list(keys: list[tuple[str, bytes]]) -> bytes:
    """AccessKeyList: each key with its stored view, in the order given."""
    items = b",".join(b'{"public_key":"%s","access_key":%s}' % (key.encode(), view) for key, view in keys)
    return b'{"keys":[' + items + b"]}"


def unknown_access_key_result(public_key: str, height: int, block_hash: str) -> bytes:
    """query's answer for a key that does not exist: a result, not an error."""
    return orjson.dumps({
        "error": f"access key {public_key} does not exist while viewing",
        "logs": [],
        "block_height": height,
        "block_hash": block_hash,
    })  # fmt: skip


def contract_execution_result(vm_error_debug: str, height: int, block_hash: str) -> bytes:
    """query's answer for a call that failed: a result whose `error` is the state viewer's
    message (runtime state_viewer call_function: "wasm execution failed with error: " and the
    VM's FunctionCallError in Rust Debug form), its logs never carried (lib.rs
    process_query_response)."""
    return orjson.dumps({
        "error": f"wasm execution failed with error: {vm_error_debug}",
        "logs": [],
        "block_height": height,
        "block_hash": block_hash,
    })  # fmt: skip


def code_does_not_exist(account_id: str) -> tuple[object, str]:
    """The VM's error for a call on an account without code, as JSON (RpcFunctionCallError)
    and in Rust Debug form (near-vm-runner CompilationError::CodeDoesNotExist; AccountId's
    Debug wraps the id)."""
    return (
        {"CompilationError": {"CodeDoesNotExist": {"account_id": account_id}}},
        f"CompilationError(CodeDoesNotExist {{ account_id: AccountId({orjson.dumps(account_id).decode()}) }})",
    )
