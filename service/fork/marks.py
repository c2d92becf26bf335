"""The names a fork marks as fetched (`WriteBatch.put_fetched`), where the store's rows alone
cannot tell "fetched, and this is the answer" from "never asked":

- a height the upstream has no block at, below its final head: a skipped height, for good;
- a block hash a fork pinned at a height does not serve (unknown, or above the pinned head);
- an account's state, an access key, an account's key list at exactly one height: a store
  answers the latest state at or below a height, which for a fork may be an older one;
- a contract's storage key, or its state under a prefix, at exactly one height (the same rule);
  a contract whose state the upstream refuses as too large at a height (no rows: its view calls
  are the upstream's);
- a view call the upstream answered, kept verbatim (`WriteBatch.put_kept_answer`) under the
  same name; so are a receipt asked for by id (the answer does not say where it was executed,
  which a receipt row holds) and a block's state changes (a fork does not hold every row they
  would be derived from);
- that the store holds chosen accounts only (`store.ACCOUNTS_CHOSEN`, with every batch): a plain
  server over it reads the account marks above (`store.held`) before it answers "no such account";
- an epoch's validators kept while it was the head's epoch, as of the head then: once the head
  has moved on (or into a later epoch) the record is asked again; a record without the mark (an
  ended epoch's, or one a recording or the sample wrote) holds for good.

Account ids and public keys never contain "/", so the names cannot collide. Storage keys,
prefixes and call arguments are bytes of up to megabytes: they are named by their SHA-256, so a
name stays short enough for any store's index.
"""

from __future__ import annotations

from nearrpc.store import (
    kept_receipt,
    prefix_digest,
    seen_access_key,
    seen_access_key_list,
    seen_account,
    seen_contract_state,
)

_digest = prefix_digest

# the kept answer (`WriteBatch.put_kept_answer`) of the height a sandboxed fork is pinned at: its
# blocks are above it, so every later start pins there too
SANDBOX_PIN = "sandbox-fork/pin"


def skipped_height(height: int) -> str:
    return f"skipped/{height}"


def unserved_hash(block_hash: str) -> str:
    return f"unserved/{block_hash}"


# the marks a plain server over the fork's store reads too (`store.held`): named there
account = seen_account
access_key = seen_access_key
access_key_list = seen_access_key_list
contract_state = seen_contract_state


def contract_value(account_id: str, key: bytes, height: int) -> str:
    return f"contract-value/{account_id}/{height}/{_digest(key)}"


def state_too_large(account_id: str, height: int) -> str:
    return f"contract-state-too-large/{account_id}/{height}"


def call(account_id: str, method_name: str, args: bytes, block_hash: str) -> str:
    return f"call/{account_id}/{block_hash}/{_digest(method_name.encode(), args)}"


def receipt(receipt_id: str) -> str:
    return kept_receipt(receipt_id)


def validators_current(epoch_id: str, height: int) -> str:
    return f"validators-current/{epoch_id}/{height}"


def changes(method: str, params: bytes, block_hash: str) -> str:
    """A changes method's answer at a block; `params`: the request without its block reference."""
    return f"changes/{block_hash}/{_digest(method.encode(), params)}"
