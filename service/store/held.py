"""What a store holds of the chain's accounts, and the genesis hash a store without the genesis
block keeps (both written by `nearrpc import rpc`).

A store from a genesis file or the sample holds every account: a lookup that finds no state
means the account did not exist. A recording of chosen accounts holds only those: for any
other account "no state" means "not recorded", which the server must not answer as "no such
account". Such a store carries the mark `ACCOUNTS_CHOSEN` and one `held_account` mark per
recorded account, in the optional `fetched` table (`WriteBatch.put_fetched`), so stores made
before these marks, and every reader that never asks, serve as before; `store copy` copies them
with the fork's marks. Account ids never contain "/", so the names collide with no other mark.

A held account's contract state is recorded at every stored block where it has code, except
where the node would not give it (`view_state` refused as too large, or a node that does not
track the shard): there the recording writes no rows and the mark `contract_state_not_held`,
so a reader does not take the rows below that height for the state there.

A fork's store (`serve --upstream`) is a store of chosen accounts too: it holds what requests
asked for, each at exactly the height asked (`seen_account` and the marks beside it, which the
fork writes with each answer it keeps), and carries `ACCOUNTS_CHOSEN` from its first batch. Served
plain (or with `--record-mode none`), an account it has no `held_account` mark for is held at a
height only where the mark of that kind says it was seen there; anywhere else "no state" means
"not recorded". The names are the fork's own (`fork/marks.py` uses these), so stores forked
before `ACCOUNTS_CHOSEN` was written answer so too once a fork has run over them again.
"""

from __future__ import annotations

import hashlib
from typing import Final

ACCOUNTS_CHOSEN: Final = "accounts/chosen"


def held_account(account_id: str) -> str:
    """The mark of an account whose state a store of chosen accounts holds at every stored block."""
    return f"accounts/held/{account_id}"


def contract_state_not_held(account_id: str, height: int) -> str:
    """The mark of a held account whose contract state at `height` the recording could not get."""
    return f"contract-state/not-held/{account_id}/{height}"


def prefix_digest(*parts: bytes) -> str:
    """One SHA-256 over `parts`, each prefixed by its length (so no two lists of parts meet): how
    a mark names storage keys, prefixes and call arguments, which may be megabytes long."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


def seen_account(account_id: str, height: int) -> str:
    """The mark of an account's state (or its absence) seen at exactly `height` (a fork's)."""
    return f"account/{account_id}/{height}"


def seen_access_key(account_id: str, public_key: str, height: int) -> str:
    """The mark of one access key's state (or its absence) seen at exactly `height`."""
    return f"access-key/{account_id}/{public_key}/{height}"


def seen_access_key_list(account_id: str, height: int) -> str:
    """The mark of an account's whole key list seen at exactly `height`."""
    return f"access-keys/{account_id}/{height}"


def seen_contract_state(account_id: str, prefix: bytes, height: int) -> str:
    """The mark of a contract's whole state under `prefix` seen at exactly `height`."""
    return f"contract-state/{account_id}/{height}/{prefix_digest(prefix)}"


def kept_receipt(receipt_id: str) -> str:
    """The kept answer (`WriteBatch.put_kept_answer`) of a receipt a fork fetched by id: its
    upstream's EXPERIMENTAL_receipt answer, which does not say in which block the receipt ran, so
    it cannot be a receipt row. Every reader serves it, a plain `serve` of a fork's store too."""
    return f"receipt/{receipt_id}"


def recorded_changes(height: int) -> str:
    """The kept answer (`WriteBatch.put_kept_answer`) in which a sandbox records the state
    changes of the block it made at `height`, each with its cause, as its runtime committed them
    (rows keep a block's last value only). It names the block's hash: a record of a block
    reverted and made again is never read for the new one."""
    return f"state-changes/{height}"


def chosen_epoch_start(epoch_id: str) -> str:
    """The kept answer in which a sandbox keeps the start height it chose for an epoch whose first
    block the store does not hold (a fork's store begins inside it): a restart chooses the same,
    so the same sends make the same chain."""
    return f"sandbox-epoch-start/{epoch_id}"
