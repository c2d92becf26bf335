"""The names a fork marks as fetched (`WriteBatch.put_fetched`), where the store's rows alone
cannot tell "fetched, and this is the answer" from "never asked":

- a height the upstream has no block at, below its final head: a skipped height, for good;
- a block hash a fork pinned at a height does not serve (unknown, or above the pinned head);
- an account's state, an access key, an account's key list at exactly one height: a store
  answers the latest state at or below a height, which for a fork may be an older one.

Account ids and public keys never contain "/", so the names cannot collide.
"""

from __future__ import annotations


def skipped_height(height: int) -> str:
    return f"skipped/{height}"


def unserved_hash(block_hash: str) -> str:
    return f"unserved/{block_hash}"


def account(account_id: str, height: int) -> str:
    return f"account/{account_id}/{height}"


def access_key(account_id: str, public_key: str, height: int) -> str:
    return f"access-key/{account_id}/{public_key}/{height}"


def access_key_list(account_id: str, height: int) -> str:
    return f"access-keys/{account_id}/{height}"
