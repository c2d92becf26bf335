"""What a store holds of the chain's accounts, and the genesis hash a store without the genesis
block keeps (both written by `nearrpc import rpc`).

A store from a genesis file or the sample holds every account: a lookup that finds no state
means the account did not exist. A recording of chosen accounts holds only those: for any
other account "no state" means "not recorded", which the server must not answer as "no such
account". Such a store carries the mark `ACCOUNTS_CHOSEN` and one `held_account` mark per
recorded account, in the optional `fetched` table (`WriteBatch.put_fetched`), so stores made
before these marks, and every reader that never asks, serve as before; `store copy` copies them
with the fork's marks. Account ids never contain "/", so the names collide with no other mark.
"""

from __future__ import annotations

from typing import Final

ACCOUNTS_CHOSEN: Final = "accounts/chosen"


def held_account(account_id: str) -> str:
    """The mark of an account whose state a store of chosen accounts holds at every stored block."""
    return f"accounts/held/{account_id}"
