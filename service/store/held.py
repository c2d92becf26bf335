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
"""

from __future__ import annotations

from typing import Final

ACCOUNTS_CHOSEN: Final = "accounts/chosen"


def held_account(account_id: str) -> str:
    """The mark of an account whose state a store of chosen accounts holds at every stored block."""
    return f"accounts/held/{account_id}"


def contract_state_not_held(account_id: str, height: int) -> str:
    """The mark of a held account whose contract state at `height` the recording could not get."""
    return f"contract-state/not-held/{account_id}/{height}"


def kept_receipt(receipt_id: str) -> str:
    """The kept answer (`WriteBatch.put_kept_answer`) of a receipt a fork fetched by id: its
    upstream's EXPERIMENTAL_receipt answer, which does not say in which block the receipt ran, so
    it cannot be a receipt row. Every reader serves it, a plain `serve` of a fork's store too."""
    return f"receipt/{receipt_id}"
