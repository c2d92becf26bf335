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

from typing import Final

import orjson

from nearrpc.nearcore.views import account_view_at

# What an account without a contract has as its code hash (CryptoHash::default()).
NO_CODE_HASH: Final = "11111111111111111111111111111111"


def with_block(view_json: bytes, height: int, block_hash: str) -> bytes:
    """A stored view with the block it is answered for appended, as nearcore ends it."""
    return account_view_at(view_json, height, block_hash)


def code_hash_of(account_view_json: bytes) -> str:
    code_hash: str = orjson.loads(account_view_json)["code_hash"]
    return code_hash


def unknown_access_key_result(public_key: str, height: int, block_hash: str) -> bytes:
    """query's answer for a key that does not exist: a result, not an error."""
    return orjson.dumps({
        "error": f"access key {public_key} does not exist while viewing",
        "logs": [],
        "block_height": height,
        "block_hash": block_hash,
    })  # fmt: skip
