"""A sandboxed fork's state below the sandbox's chain (`sandbox.chain.state.PinnedState`, met by
shape: fork/ imports nothing of the sandbox).

The sandbox's runtime reads state on the chain writer's thread; the fork's lookups run on the
server's event loop (single flight, deadlines, the fork's writer). Each read is handed to the loop
and waited for: it returns once the store holds the item at the pinned height (fetched from the
upstream once and kept, as a view call's reads are: `accounts.py`), so the chain's own reader
then reads it. Bounds, so a fetch never holds the chain writer:
- a budget of upstream requests per state view (a block's transactions and receipts, or one
  transaction checked at `send_tx`), `serve --fork-fetches-per-call`: past it FetchCapReached;
- a deadline per read (`timeout`), besides each miss's own (`--miss-timeout`);
- an item whose fetch failed fails again at once for `_FAILED_SECONDS` (the chain writer applies
  a failing block again, one transaction at a time, to find the one that fails: it waits once).
Every failure is a StoreError: the block is made without the transaction (or the receipts) whose
execution needed it, a send that needed it answers INTERNAL_ERROR; nothing waits on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import time
from collections.abc import Awaitable, Callable
from typing import Final

from nearrpc.fork.reader import ForkReader
from nearrpc.fork.upstream import UpstreamUnreachable
from nearrpc.store import CURRENT_FETCH_BUDGET, FetchBudget, FetchCapReached, StoreError

# How long an item whose fetch failed fails again at once, and how many such items are kept.
_FAILED_SECONDS: Final = 5.0
_FAILED_ITEMS: Final = 10_000


class ForkPinnedState:
    def __init__(self, fork: ForkReader, *, fetches_per_view: int, timeout: float) -> None:
        if fork.fork_height is None or not fork.sandboxed:
            raise ValueError("the state below a sandbox is a sandboxed fork's, pinned")
        self._fork = fork
        self._pin = fork.fork_height
        self._fetches_per_view = fetches_per_view
        self._timeout = timeout
        self._loop: asyncio.AbstractEventLoop | None = None
        self._failed: dict[str, tuple[float, StoreError]] = {}  # item -> (until when, why); the chain's thread only

    @property
    def pin(self) -> int:
        return self._pin

    @property
    def fork(self) -> ForkReader:
        return self._fork

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def fetches(self) -> PinnedFetches:
        return PinnedFetches(self, FetchBudget(self._fetches_per_view))

    def run(self, budget: FetchBudget, what: str, lookup: Callable[[], Awaitable[object]]) -> None:
        """`lookup` of the item `what` on the loop, its upstream requests spent from `budget`;
        back on this thread once it is done. A StoreError when it fails or takes longer than the
        deadline (or failed moments ago)."""
        failed = self._failed.get(what)
        if failed is not None and failed[0] > time.monotonic():
            raise failed[1]
        try:
            self._run(budget, what, lookup)
        except FetchCapReached:
            raise  # the view's budget, not the item: another view may fetch it
        except StoreError as failure:
            if len(self._failed) >= _FAILED_ITEMS:
                self._failed.clear()
            self._failed[what] = (time.monotonic() + _FAILED_SECONDS, failure)
            raise

    def _run(self, budget: FetchBudget, what: str, lookup: Callable[[], Awaitable[object]]) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            raise StoreError(f"the sandboxed fork cannot fetch {what}: the server's event loop is not running")

        async def spend_from_budget() -> None:
            token = CURRENT_FETCH_BUDGET.set(budget)  # the view call's cap, as a view call sets it
            try:
                await lookup()
            finally:
                CURRENT_FETCH_BUDGET.reset(token)

        future = asyncio.run_coroutine_threadsafe(spend_from_budget(), loop)
        try:
            future.result(self._timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise UpstreamUnreachable(
                f"the sandboxed fork fetched no {what} from {self._fork.upstream.address} within {self._timeout:g} s"
            ) from None
        except concurrent.futures.CancelledError:  # the server is stopping
            raise StoreError(f"the sandboxed fork's fetch of {what} was cancelled") from None


class PinnedFetches:
    """One state view's fetches, all at the pin (`sandbox.chain.state.PinnedFetches`)."""

    def __init__(self, state: ForkPinnedState, budget: FetchBudget) -> None:
        self._state = state
        self._budget = budget
        self._fork = state.fork
        self._pin = state.pin

    def account(self, account_id: str) -> None:
        self._state.run(self._budget, f"account {account_id}", lambda: self._fork.account_json(account_id, self._pin))

    def access_key(self, account_id: str, public_key: str) -> None:
        self._state.run(self._budget, f"access key {public_key} of {account_id}",
                        lambda: self._fork.access_key_json(account_id, public_key, self._pin))  # fmt: skip

    def access_keys(self, account_id: str) -> None:
        self._state.run(self._budget, f"access keys of {account_id}",
                        lambda: self._fork.access_keys_json(account_id, self._pin))  # fmt: skip

    def code(self, code_hash: str, account_id: str | None) -> None:
        self._state.run(self._budget, f"code {code_hash}", lambda: self._fork.pinned_code(code_hash, account_id))

    def storage(self, account_id: str, key: bytes) -> None:
        digest = hashlib.sha256(key).hexdigest()[:16]  # a key may be kilobytes long
        self._state.run(self._budget, f"storage key (of {len(key)} bytes, SHA-256 {digest}…) of {account_id}",
                        lambda: self._fork.contract_value(account_id, key, self._pin))  # fmt: skip

    def storage_keys(self, account_id: str) -> None:
        # the whole listing at the pin, kept as rows: the store then lists it at any height above
        self._state.run(self._budget, f"the contract state of {account_id}",
                        lambda: self._fork.contract_state(account_id, b"", self._pin, 1))  # fmt: skip
