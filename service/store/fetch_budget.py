"""How many requests to another node one view call may cause (a fork's upstream fetches).

A reader that reads through (a fork) asks its upstream for each storage key a view call reads
and the store lacks; a contract reading distinct keys in a loop would make one request per key,
bound only by its gas (about 16,000 per call). The view call sets a `FetchBudget` for what it
runs (a context variable, which the reads it hands to the event loop carry along), and the
reader spends one per upstream request it starts; past the budget, `FetchCapReached`, a
StoreError, answered INTERNAL_ERROR as any store that cannot answer (spec/DEVIATIONS.md).
"""

from __future__ import annotations

import contextvars
import threading
from typing import Final

from nearrpc.store.base import StoreError

FETCHES_PER_CALL: Final = 200  # the default (`serve --fork-fetches-per-call`)


class FetchCapReached(StoreError):
    """A view call needed more upstream requests than it may cause."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the view call needs more than {limit} requests to the upstream for the contract's storage, the most "
            "one call may make (serve --fork-fetches-per-call)"
        )
        self.limit = limit


class FetchBudget:
    """One call's upstream requests, at most `limit`; thread-safe (its runs may move threads)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.spent = 0
        self._lock = threading.Lock()

    def spend(self) -> None:
        """Count one more request, or raise FetchCapReached."""
        with self._lock:
            if self.spent >= self.limit:
                raise FetchCapReached(self.limit)
            self.spent += 1


CURRENT_FETCH_BUDGET: contextvars.ContextVar[FetchBudget | None] = contextvars.ContextVar(
    "nearrpc_fetch_budget", default=None
)


def spend_fetch() -> None:
    """Count an upstream request against the running call's budget (none: not a view call's)."""
    budget = CURRENT_FETCH_BUDGET.get()
    if budget is not None:
        budget.spend()
