"""`ForkReader`: the store's serving reader, with the upstream behind every lookup it cannot answer.

A lookup the store answers is a hit. One it cannot is a miss: the upstream is asked, its answer
is kept in one batch (validated against the spec on the way in, with a mark where the rows alone
would not show it: `marks.py`), and the lookup answers what was kept. So a fork's answer and the
store's answer after it are the same bytes, made by the same handlers from the same rows.

`ForkReader` composes the lookups, one module per concern, and holds their state:
- `misses.py`: single flight per missing key, a deadline per miss, the chain check;
- `blocks.py`: blocks, the heads (pinned or the upstream's), epochs;
- `accounts.py`: accounts, access keys, contract code and contract state;
- `records.py`: chunks, transactions, receipts, validators;
- here: view calls and the changes methods, the upstream's answers kept verbatim per block (a
  fork holds only the rows it was asked for), and what is the store's alone.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
from typing import Any, Final

import orjson

from nearrpc.fork import marks
from nearrpc.fork.accounts import ForkAccounts
from nearrpc.fork.calls import KEPT_CAUSES, CallAnswer, checked_error, checked_result
from nearrpc.fork.changes import changes_kind, checked_changes, checked_changes_error
from nearrpc.fork.misses import Bounded, LookupObserver
from nearrpc.fork.records import ForkRecords
from nearrpc.fork.upstream import Upstream
from nearrpc.fork.writer import ForkWriter, Keep
from nearrpc.store import (
    ServingReader,
    StoredBlock,
    StoredReceipt,
    StoredTransaction,
    StoreInfo,
    StoreVersion,
)

_REMEMBERED: Final = 100_000  # epoch -> a block of it, code hash -> an account with it


class ForkReader(ForkAccounts, ForkRecords):
    """A `ServingReader` that reads through to an upstream node (module docstring)."""

    def __init__(
        self,
        local: ServingReader,
        upstream: Upstream,
        writer: ForkWriter,
        *,
        fork_height: int | None,
        miss_timeout: float,
        observe: LookupObserver | None = None,
        sandboxed: bool = False,
    ) -> None:
        """`sandboxed`: a sandbox makes blocks above the pinned head `fork_height` (accounts.py)."""
        if sandboxed and fork_height is None:
            raise ValueError("a sandboxed fork is pinned: it needs fork_height")
        self.local = local
        self.upstream = upstream
        self.fork_height = fork_height
        self.sandboxed = sandboxed
        self._writer = writer
        self._miss_timeout = miss_timeout
        self._observe = observe
        self._entered = False
        self._running: dict[str, asyncio.Task[Any]] = {}
        self._waiters: dict[str, int] = {}  # per running fetch, the requests awaiting it
        self._writing: set[str] = set()  # fetches whose answer is being written (never cancelled)
        self._settled: dict[str, tuple[float, Any]] = {}
        self._final_height = -1  # the highest final height the upstream has shown
        self._chain_checked_until = 0.0  # time.monotonic() until which the chain check holds
        self._repairs = 0  # stored blocks dropped as contradicted: what answers were kept from is gone
        self._epoch_blocks = Bounded[str](_REMEMBERED)  # epoch id -> hash of a block in it
        self._code_owners = Bounded[tuple[str, int]](_REMEMBERED)  # code hash -> (account, height)
        self._paged_states = Bounded[bool](_REMEMBERED)  # "account/height" the upstream lists a page of
        self._head_ancestors = Bounded[bool](_REMEMBERED)  # hashes of heads' final and near-final blocks
        self._genesis_height: int | None = None
        self._earliest: StoredBlock | None = None  # pinned forks: asked once
        self._heads_down_until = 0.0  # until then, heads are the store's (the upstream failed)
        self._heads_from_store = False

    @property
    def heads_move(self) -> bool:
        """Whether `final` and `optimistic` name other blocks from one request to the next."""
        return self.fork_height is None

    # -- view calls the upstream answers (where they cannot run here, or to verify them)

    async def _fetch_call(
        self, account_id: str, method_name: str, args: bytes, block: StoredBlock
    ) -> tuple[CallAnswer, Keep | None]:
        what = f"call_function {account_id} {method_name} at {block.hash}"
        params = {"request_type": "call_function", "block_id": block.hash, "account_id": account_id,
                  "method_name": method_name, "args_base64": base64.b64encode(args).decode()}  # fmt: skip
        reply = await self._call("query", params)
        error = reply.error
        if error is not None:
            answer = CallAnswer(None, self._parsed(lambda: checked_error(error), what))
            if reply.cause not in KEPT_CAUSES:
                return answer, None  # answered, and not kept: the node may answer otherwise later
        else:
            answer = CallAnswer(self._parsed(lambda: checked_result(reply.result, block), what), None)
        mark = marks.call(account_id, method_name, args, block.hash)
        return answer, lambda batch: batch.put_kept_answer(mark, answer.kept())

    async def call_function(self, account_id: str, method_name: str, args: bytes, block: StoredBlock) -> CallAnswer:
        """The upstream's answer to a view call at `block`: kept verbatim the first time, then
        answered from the store (with the upstream stopped too)."""
        mark = marks.call(account_id, method_name, args, block.hash)
        kept = await self.local.kept_answer(mark)
        if kept is not None:
            self._count("hit")
            return CallAnswer.from_kept(kept)
        return await self._miss(mark, lambda: self._fetch_call(account_id, method_name, args, block))

    # -- state changes: the upstream's answer per block, kept verbatim (a fork holds only the rows
    # it was asked for, so changes derived from them would leave out the rest)

    async def _fetch_changes(self, method: str, params: dict[str, Any], block: StoredBlock,
                             mark: str) -> tuple[CallAnswer, Keep | None]:  # fmt: skip
        what = f"{method} at {block.hash}"
        reply = await self._call(method, {**params, "block_id": block.hash})
        if reply.error is not None:  # e.g. a block it has not processed yet: answered, not kept
            error = reply.error
            return CallAnswer(None, self._parsed(lambda: checked_changes_error(method, error), what)), None
        result = self._parsed(lambda: checked_changes(method, reply.result, block), what)
        answer = CallAnswer(result, None)
        return answer, lambda batch: batch.put_kept_answer(mark, answer.kept())

    async def changes(self, method: str, params: dict[str, Any], block: StoredBlock) -> CallAnswer:
        """The upstream's answer to a changes method at `block` (`params` without the block
        reference): kept verbatim the first time, then answered from the store."""
        mark = marks.changes(changes_kind(method), orjson.dumps(params, option=orjson.OPT_SORT_KEYS), block.hash)
        kept = await self.local.kept_answer(mark)
        if kept is not None:
            self._count("hit")
            return CallAnswer.from_kept(kept)
        return await self._miss(mark, lambda: self._fetch_changes(method, params, block, mark))

    async def fork_status(self) -> dict[str, object]:
        """What /status says of the fork: the upstream's address (never a credential), whether it
        answers now (asked at most every few seconds, never for longer than 2 s) and the head."""
        return {
            "upstream": self.upstream.address,
            "upstream_answers": await (await self._upstream()).answers(timeout=2.0),
            "record_mode": "new",
            "fork_height": self.fork_height,
            "head": (
                "the sandbox's, above the pinned height"
                if self.sandboxed
                else "pinned"
                if self.fork_height is not None
                else "the upstream's, asked at each request"
            ),
            "sandboxed": self.sandboxed,
        }

    # -- the rest is the store's

    async def genesis_config_json(self) -> bytes | None:
        return await self.local.genesis_config_json()

    async def client_config_json(self) -> bytes | None:
        return await self.local.client_config_json()

    async def receipts_executed_at(self, height: int) -> list[StoredReceipt]:
        return await self.local.receipts_executed_at(height)

    async def transactions_at(self, height: int) -> list[StoredTransaction]:
        return await self.local.transactions_at(height)

    async def account_changes(self, height: int) -> list[tuple[str, bytes | None]]:
        return await self.local.account_changes(height)

    async def access_key_changes(self, height: int) -> list[tuple[str, str, bytes | None]]:
        return await self.local.access_key_changes(height)

    async def contract_data_changes(self, height: int) -> list[tuple[str, bytes, bytes | None]]:
        return await self.local.contract_data_changes(height)

    async def fetched(self, key: str) -> bool:
        return await self.local.fetched(key)

    async def kept_answer(self, key: str) -> bytes | None:
        return await self.local.kept_answer(key)

    async def genesis_hash(self) -> str | None:
        return await self.local.genesis_hash()

    async def info(self) -> StoreInfo:
        info = await self.local.info()
        # the methods refuse to say "no such key" from a store that holds no keys at all; a fork
        # asks its upstream, which knows
        return dataclasses.replace(info, access_key_count=max(info.access_key_count, 1))

    async def account_count(self) -> int:
        return await self.local.account_count()

    async def epoch_start_height(self, block: StoredBlock) -> int | None:
        return await self.local.epoch_start_height(block)

    def version(self) -> StoreVersion:
        version = self.local.version()
        # a dropped block: answers kept from it (a block found by hash is otherwise the same
        # forever) must go, as when another store is served
        if not self._repairs:
            return version
        return dataclasses.replace(version, generation=version.generation + self._repairs)

    async def close(self) -> None:
        for task in list(self._running.values()):
            task.cancel()
        try:
            if self._entered:
                await self.upstream.__aexit__(None, None, None)
        finally:
            try:
                await self.local.close()
            finally:
                self._writer.close()  # last: with no reader left open, SQLite folds its WAL back
