"""`ForkAccounts`: accounts, access keys, contract code and contract state through a fork.

Each is fetched from the upstream at the height asked for and kept as the store's rows at that
height, with a mark (`marks.py`) saying it was asked, so the store answers it after: an account
view, a key's state or the account's whole key list (rows at `height + 1` keep what the store
answered above it), a code by its hash (asked of an account seen with it), and a contract's
storage as anvil reads it: for a view call the account's whole state in one listing where it is
small (storage usage within nearcore's default view limit), else a key at a time; a prefix's
state whole for a listing (`contract_state.py` plans the rows); a state the upstream refuses as
too large is marked so.

A sandboxed fork (`serve --upstream URL --sandbox`) makes its own blocks above its pinned head:
at those heights each lookup is fetched at the pin (once, as any other) and then answered by the
store at the height asked, where the sandbox's writes stand over the pin's state; the upstream is
never asked at a height of the sandbox's. Rows kept at the pin restore nothing above it there:
the sandbox's blocks inherit the pin's state.
"""

from __future__ import annotations

import base64
import enum
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import orjson

from nearrpc.fork import marks
from nearrpc.fork.blocks import ForkBlocks
from nearrpc.fork.contract_state import ContractState, Row, state_of, state_rows, value_rows
from nearrpc.fork.misses import Bounded, says
from nearrpc.fork.upstream import UpstreamError
from nearrpc.fork.writer import AfterReading, Keep, Writes
from nearrpc.ingest import jsonio
from nearrpc.ingest.rpc_client import RpcReply
from nearrpc.nearcore.public_key import canonical_public_key
from nearrpc.nearcore.views import ACCOUNT_VIEW_BLOCK_MEMBERS
from nearrpc.store import ChainReader, ContractStateTooLarge, StoredBlock, WriteBatch
from nearrpc.store.base import access_key_order

log = logging.getLogger("nearrpc.fork")
T = TypeVar("T")

_NO_CODE: Final = "11111111111111111111111111111111"  # the hash of "no contract"
# limit_config's max_contract_size, the same at every protocol version (runtime_configs parameters.yaml)
MAX_CONTRACT_SIZE: Final = 4 * 1024 * 1024
# a contract state of at most this storage usage is fetched whole in one view_state, not key by
# key: nearcore's default `trie_viewer_state_size_limit` (nearcore/src/config.rs), under which
# any node lists it
WHOLE_STATE_BYTES: Final = 50_000


class _TooLarge(enum.Enum):
    """The upstream refuses an account's contract state as too large (kept as a mark)."""

    REFUSED = "refused"


def _put_rows(batch: WriteBatch, account_id: str, rows: list[Row], mark: str) -> None:
    for key, height, value in rows:
        batch.put_contract_data(account_id, key, height, value)
    batch.put_fetched(mark)


def _parsed_or_none(view: bytes | None) -> object:
    """A view compared by its JSON value (stored bytes and an upstream's may differ in spacing)."""
    return None if view is None else orjson.loads(view)


class ForkAccounts(ForkBlocks):
    """The account and state lookups of `ForkReader`, which sets the attributes declared here."""

    _code_owners: Bounded[tuple[str, int]]
    _paged_states: Bounded[bool]  # states the upstream answered one page of: read key by key
    sandboxed: bool  # a sandbox makes the blocks above the pinned head (module docstring)

    def _sandbox_height(self, height: int) -> bool:
        """A height of the sandbox's own blocks: read at the pin, then the store's there."""
        return self.sandboxed and self.fork_height is not None and height > self.fork_height

    async def _through_the_pin(
        self, height: int, read: Callable[[int], Awaitable[T]], fetch: Callable[[int], Awaitable[object]]
    ) -> T:
        """A lookup at a height of the sandbox's: the store's answer there, once the item is held
        at the pin (`fetch`: the lookup at the pin), unless the sandbox wrote it (the store answers
        otherwise there than at the pin: a row of the sandbox's between), which is never fetched."""
        assert self.fork_height is not None
        found = await read(height)
        if found != await read(self.fork_height):
            return found
        await fetch(self.fork_height)
        return await read(height)

    def _restores_above(self, height: int) -> bool:
        """Whether rows kept at `height` keep the store's answers above it as they were (not at a
        sandboxed fork's pin, whose blocks above inherit its state)."""
        return not (self.sandboxed and height == self.fork_height)

    # -- accounts, access keys, code

    def _without_block(self, view: dict[str, Any], height: int, what: str) -> bytes:
        if view.get("block_height") != height:
            raise UpstreamError(f"{self.upstream.address}: {what}: the view is of height {view.get('block_height')}")
        return jsonio.compact({k: v for k, v in view.items() if k not in ACCOUNT_VIEW_BLOCK_MEMBERS})

    def _note_code(self, account_id: str, height: int, view: bytes | None) -> bytes | None:
        if view is not None:
            code_hash = orjson.loads(view).get("code_hash")
            if isinstance(code_hash, str) and code_hash != _NO_CODE and code_hash not in self._code_owners:
                self._code_owners.remember(code_hash, (account_id, height))
        return view

    async def _fetch_account(self, account_id: str, height: int) -> tuple[bytes | None, Writes]:
        what = f"EXPERIMENTAL_view_account {account_id} at {height}"
        reply = await self._call("EXPERIMENTAL_view_account", {"block_id": height, "account_id": account_id})
        view = None
        if not says(reply, "UNKNOWN_ACCOUNT"):
            view = self._parsed(lambda: self._without_block(self._answer(reply, what), height, what), what)

        def writes(batch: WriteBatch) -> None:
            batch.put_account_state(account_id, height, view)
            batch.put_fetched(marks.account(account_id, height))

        return view, writes

    async def account_json(self, account_id: str, height: int) -> bytes | None:
        if self._sandbox_height(height):
            assert self.fork_height is not None
            view = await self._through_the_pin(
                height, lambda at: self.local.account_json(account_id, at), lambda at: self.account_json(account_id, at)
            )
            # a code the sandbox did not deploy is the upstream's, asked at the pin
            return self._note_code(account_id, self.fork_height, view)
        if await self.local.fetched(marks.account(account_id, height)):
            self._count("hit")
            view = await self.local.account_json(account_id, height)
        else:
            key = marks.account(account_id, height)
            view = await self._miss(key, lambda: self._fetch_account(account_id, height))
        return self._note_code(account_id, height, view)

    async def _fetch_access_key(self, account_id: str, public_key: str, height: int) -> tuple[bytes | None, Writes]:
        what = f"EXPERIMENTAL_view_access_key {account_id} {public_key} at {height}"
        params = {"block_id": height, "account_id": account_id, "public_key": public_key}
        reply = await self._call("EXPERIMENTAL_view_access_key", params)
        view = None
        if not says(reply, "UNKNOWN_ACCESS_KEY", "UNKNOWN_ACCOUNT"):
            view = self._parsed(lambda: self._without_block(self._answer(reply, what), height, what), what)
        restored = await self._restoring(account_id, height, {public_key: view})

        def writes(batch: WriteBatch) -> None:
            batch.put_access_key(account_id, public_key, height, view)
            for key, state in restored:
                batch.put_access_key(account_id, key, height + 1, state)
            batch.put_fetched(marks.access_key(account_id, public_key, height))

        return view, writes

    async def _restoring(
        self, account_id: str, height: int, kept: dict[str, bytes | None]
    ) -> list[tuple[str, bytes | None]]:
        """The rows at `height + 1` that keep what the store answers above `height` as it was
        when `kept` (key -> state, None: none) is written at `height`.

        A key state answers for every height up to the key's next row, so a state kept at 50
        would show through at 95, where an exact list was kept earlier without that key. The
        state each key had at `height + 1` goes back there (the same value again where a row
        is there already), so a write changes the answers at its own height only."""
        if height + 1 >= 1 << 63 or not self._restores_above(height):
            return []
        above = dict(await self.local.access_keys_json(account_id, height + 1))
        return [
            (key, above.get(key))
            for key, state in kept.items()
            if _parsed_or_none(above.get(key)) != _parsed_or_none(state)
        ]

    async def access_key_json(self, account_id: str, public_key: str, height: int) -> bytes | None:
        if self._sandbox_height(height):
            return await self._through_the_pin(
                height,
                lambda at: self.local.access_key_json(account_id, public_key, at),
                lambda at: self.access_key_json(account_id, public_key, at),
            )
        key = marks.access_key(account_id, public_key, height)
        if await self.local.fetched(key):
            self._count("hit")
            return await self.local.access_key_json(account_id, public_key, height)
        return await self._miss(key, lambda: self._fetch_access_key(account_id, public_key, height))

    def _key_list(self, answer: dict[str, Any], height: int, what: str) -> list[tuple[str, bytes]]:
        if answer.get("block_height") != height:
            raise UpstreamError(f"{self.upstream.address}: {what}: the list is of height {answer.get('block_height')}")
        if answer.get("last_key") is not None:  # one page of a newer node's paged list: not every key
            raise UpstreamError(f"{self.upstream.address}: {what}: the node answered one page of the keys (last_key)")
        keys = [
            (canonical_public_key(item["public_key"]), jsonio.compact(item["access_key"])) for item in answer["keys"]
        ]
        return sorted(keys, key=lambda pair: access_key_order(pair[0]))

    async def _fetch_access_keys(self, account_id: str, height: int) -> tuple[list[tuple[str, bytes]], Writes]:
        what = f"EXPERIMENTAL_view_access_key_list {account_id} at {height}"
        reply = await self._call("EXPERIMENTAL_view_access_key_list", {"block_id": height, "account_id": account_id})
        keys = self._parsed(lambda: self._key_list(self._answer(reply, what), height, what), what)
        listed = {key for key, _ in keys}
        # keys the store lists there that the node does not: gone by this height
        gone = [key for key, _ in await self.local.access_keys_json(account_id, height) if key not in listed]
        kept: dict[str, bytes | None] = {**dict(keys), **dict.fromkeys(gone)}
        restored = await self._restoring(account_id, height, kept)

        def writes(batch: WriteBatch) -> None:
            for key, view in kept.items():
                batch.put_access_key(account_id, key, height, view)
            for key, state in restored:
                batch.put_access_key(account_id, key, height + 1, state)
            batch.put_fetched(marks.access_key_list(account_id, height))

        return keys, writes

    async def access_keys_json(self, account_id: str, height: int) -> list[tuple[str, bytes]]:
        if self._sandbox_height(height):
            assert self.fork_height is not None
            await self.access_keys_json(account_id, self.fork_height)
            return await self.local.access_keys_json(account_id, height)
        key = marks.access_key_list(account_id, height)
        if await self.local.fetched(key):
            self._count("hit")
            return await self.local.access_keys_json(account_id, height)
        return await self._miss(key, lambda: self._fetch_access_keys(account_id, height))

    async def _fetch_code(self, code_hash: str, account_id: str, height: int) -> tuple[bytes, Writes]:
        what = f"EXPERIMENTAL_view_code {account_id} at {height}"
        reply = await self._call("EXPERIMENTAL_view_code", {"block_id": height, "account_id": account_id})
        answer = self._answer(reply, what)
        if answer.get("hash") != code_hash:
            raise UpstreamError(f"{self.upstream.address}: {what}: the code's hash is {answer.get('hash')}")
        code = self._parsed(lambda: base64.b64decode(answer["code_base64"], validate=True), what)
        if len(code) > MAX_CONTRACT_SIZE:
            # no protocol lets such code be deployed: it is not kept (the executor refuses it unread)
            return code, lambda batch: None
        return code, lambda batch: batch.put_contract_code(code_hash, code)

    async def pinned_code(self, code_hash: str, account_id: str | None) -> bytes | None:
        """A sandboxed fork's code by its hash, asked at the pin of `account_id` (seen with it
        there or in a block of the sandbox's; None: an account the fork saw with it)."""
        if account_id is not None and code_hash not in self._code_owners and self.fork_height is not None:
            self._code_owners.remember(code_hash, (account_id, self.fork_height))
        return await self.contract_code(code_hash)

    async def contract_code(self, code_hash: str) -> bytes | None:
        code = await self.local.contract_code(code_hash)
        owner = self._code_owners.get(code_hash)
        if code is not None or owner is None:  # no account with it seen: nothing to ask for
            return code
        return await self._miss(f"code/{code_hash}", lambda: self._fetch_code(code_hash, *owner))

    # -- contract state, as anvil reads storage: each key a view call reads, fetched once

    async def _ask_view_state(self, account_id: str, prefix: bytes, block: StoredBlock) -> RpcReply:
        """The upstream's view_state under `prefix` at the block's hash, through `query` as the
        recorder asks (every node has it; nearcore's EXPERIMENTAL_view_state folds a shard it does
        not track into an HTTP 500, retried as an overloaded node's; `query` answers UNAVAILABLE_SHARD)."""
        prefix_base64 = base64.b64encode(prefix).decode()
        params = {"request_type": "view_state", "block_id": block.hash, "account_id": account_id,
                  "prefix_base64": prefix_base64}  # fmt: skip
        return await self._call("query", params)

    async def _block_at(self, height: int, what: str) -> StoredBlock:
        block = await self.block_by_height(height)
        if block is None:
            raise UpstreamError(f"{self.upstream.address}: {what}: no block at height {height} to ask at")
        return block

    async def _fetch_state(
        self, account_id: str, prefix: bytes, height: int, *, whole: bool, what: str
    ) -> ContractState | _TooLarge:
        """The account's state under `prefix` at `height` as the upstream gives it (an unknown
        account has none), or that the upstream refuses it as too large."""
        block = await self._block_at(height, what)
        reply = await self._ask_view_state(account_id, prefix, block)
        if says(reply, "TOO_LARGE_CONTRACT_STATE"):
            return _TooLarge.REFUSED
        if says(reply, "UNKNOWN_ACCOUNT"):
            return {}
        answer = self._answer(reply, what)
        return self._parsed(lambda: state_of(answer, block, prefix, whole=whole), what)

    def _too_large(self, account_id: str, height: int) -> Keep:
        log.info("%s refuses the contract state of %s at height %s as too large: its view calls there are the "
                 "upstream's", self.upstream.address, account_id, height)  # fmt: skip
        return lambda batch: batch.put_fetched(marks.state_too_large(account_id, height))

    async def _fetch_value(self, account_id: str, key: bytes, height: int) -> tuple[bytes | _TooLarge | None, Keep]:
        what = f"view_state {account_id} (one storage key) at {height}"
        mark = marks.contract_value(account_id, key, height)
        state = await self._fetch_state(account_id, key, height, whole=False, what=what)
        if isinstance(state, _TooLarge):
            return state, self._too_large(account_id, height)
        value = state.get(key)

        def plan(store: ChainReader) -> Writes:
            rows = value_rows(store, account_id, key, height, value, restore_above=self._restores_above(height))
            return lambda batch: _put_rows(batch, account_id, rows, mark)

        return value, AfterReading(plan)

    async def _state_unavailable(self, account_id: str, height: int) -> bool:
        return await self.local.fetched(marks.state_too_large(account_id, height))

    async def _fetch_whole(self, account_id: str, height: int) -> tuple[ContractState | _TooLarge | None, Keep | None]:
        """The account's whole state at `height` in one listing, or None when the upstream lists
        one page of it (a node that pages its answers): nothing kept, read key by key instead."""
        what = f"view_state {account_id} at {height}"
        block = await self._block_at(height, what)
        reply = await self._ask_view_state(account_id, b"", block)
        if says(reply, "TOO_LARGE_CONTRACT_STATE"):
            return _TooLarge.REFUSED, self._too_large(account_id, height)
        state: ContractState = {}
        if not says(reply, "UNKNOWN_ACCOUNT"):
            answer = self._answer(reply, what)
            if answer.get("last_key") is not None:
                self._paged_states.remember(f"{account_id}/{height}", True)
                return None, None
            state = self._parsed(lambda: state_of(answer, block, b"", whole=True), what)
        mark = marks.contract_state(account_id, b"", height)

        def plan(store: ChainReader) -> Writes:
            rows = state_rows(store, account_id, b"", height, state, restore_above=self._restores_above(height))
            return lambda batch: _put_rows(batch, account_id, rows, mark)

        return state, AfterReading(plan)

    async def _small_state(self, account_id: str, height: int) -> bool:
        """Whether the account's storage usage at `height` is within what a node lists whole in
        one view_state: nearcore's default `trie_viewer_state_size_limit` (nearcore config.rs),
        which state_viewer `view_state` holds the account's storage usage to."""
        view = await self.account_json(account_id, height)
        if view is None:
            return False
        usage = orjson.loads(view).get("storage_usage")
        return isinstance(usage, int) and usage <= WHOLE_STATE_BYTES

    async def contract_value(self, account_id: str, key: bytes, height: int) -> bytes | None:
        if self._sandbox_height(height):
            return await self._through_the_pin(
                height,
                lambda at: self.local.contract_value(account_id, key, at),
                lambda at: self.contract_value(account_id, key, at),
            )
        mark = marks.contract_value(account_id, key, height)
        whole = marks.contract_state(account_id, b"", height)
        if await self.local.fetched(mark) or await self.local.fetched(whole):
            self._count("hit")
            return await self.local.contract_value(account_id, key, height)
        if await self._state_unavailable(account_id, height):
            raise ContractStateTooLarge(account_id, height)
        if f"{account_id}/{height}" not in self._paged_states and await self._small_state(account_id, height):
            # a small state is one request, whatever keys the call reads (not settled in memory:
            # the store answers the next reads)
            flight = f"whole {whole}"  # apart from a listing's flight under the same mark (another value)
            state = await self._miss(flight, lambda: self._fetch_whole(account_id, height), keep=False)
            if isinstance(state, _TooLarge):
                raise ContractStateTooLarge(account_id, height)
            if state is not None:
                return state.get(key)
        value = await self._miss(mark, lambda: self._fetch_value(account_id, key, height))
        if isinstance(value, _TooLarge):
            raise ContractStateTooLarge(account_id, height)
        return value

    def inline_contract_values(self) -> None:
        return None  # a key not asked yet waits on the upstream

    async def _fetch_listing(self, account_id: str, prefix: bytes, height: int) -> tuple[bool, Keep]:
        what = f"view_state {account_id} at {height}"
        mark = marks.contract_state(account_id, prefix, height)
        state = await self._fetch_state(account_id, prefix, height, whole=True, what=what)
        if isinstance(state, _TooLarge):
            return False, self._too_large(account_id, height)

        def plan(store: ChainReader) -> Writes:
            rows = state_rows(store, account_id, prefix, height, state, restore_above=self._restores_above(height))
            return lambda batch: _put_rows(batch, account_id, rows, mark)

        return True, AfterReading(plan)

    async def contract_state(
        self, account_id: str, prefix: bytes, height: int, limit: int
    ) -> list[tuple[bytes, bytes]]:
        """The state under `prefix`, fetched whole once at that height and kept as rows (then
        listed by the store as any store lists it, so a replay answers the same bytes)."""
        if self._sandbox_height(height):
            assert self.fork_height is not None
            await self.contract_state(account_id, prefix, self.fork_height, 1)
            return await self.local.contract_state(account_id, prefix, height, limit)
        mark = marks.contract_state(account_id, prefix, height)
        if await self.local.fetched(mark):
            self._count("hit")
        elif await self._state_unavailable(account_id, height) or not await self._miss(
            mark, lambda: self._fetch_listing(account_id, prefix, height)
        ):
            raise ContractStateTooLarge(account_id, height)
        return await self.local.contract_state(account_id, prefix, height, limit)
