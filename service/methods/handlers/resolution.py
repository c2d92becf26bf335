"""What every family of handlers shares: the reader, block references resolved (and kept once
per head), the held/not-held checks of a recording of chosen accounts, the node's client
limits, the protocol config and gas costs per epoch, shard layouts, and `refresh()`, which drops
what was derived from data the store has since written.

The families (the modules beside this one) are mixins over `Resolution`: one instance, one
set of attributes, so a handler reaches the reader and the caches as directly as before the
split. A family that keeps data of its own drops it in `_forget`, calling `super()._forget`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

import orjson

from nearrpc.contracts.gas import GasCosts
from nearrpc.methods import errors
from nearrpc.methods.blocks import BlockReference, NoEarliestBlock, UnknownBlock, reference_of, resolve
from nearrpc.methods.protocol_config import compose_protocol_config
from nearrpc.nearcore.shard_layout import account_shard_id, first_shard_id
from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.store import (
    ACCOUNTS_CHOSEN,
    STORE_KINDS,
    ServingReader,
    StoredBlock,
    StoreError,
    StoreVersion,
    contract_state_not_held,
    held_account,
    seen_account,
)

_KEPT_LAYOUTS = 64  # shard layouts by epoch (a fork sees ever more epochs)
_P = ParamSpec("_P")
_R = TypeVar("_R")
_K = TypeVar("_K")
_V = TypeVar("_V")


def keep(kept: dict[_K, _V], key: _K, value: _V, limit: int) -> _V:
    """`value` kept under `key`, the oldest entries dropped past `limit`; returns `value`."""
    kept[key] = value
    while len(kept) > limit:
        del kept[next(iter(kept))]
    return value


def store_failures_are_internal(
    method: Callable[_P, Coroutine[Any, Any, _R]],
) -> Callable[_P, Coroutine[Any, Any, _R]]:
    """A store that cannot answer is nearcore's INTERNAL_ERROR (HTTP 500), with the reason."""

    @functools.wraps(method)
    async def guarded(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return await method(*args, **kwargs)
        except StoreError as failure:
            raise errors.internal_error(str(failure)) from None

    return guarded


class Resolution:
    def __init__(
        self, reader: ServingReader, runtime_params: RuntimeParamStore, *, heads_move: bool, reads_through: bool
    ) -> None:
        """`heads_move`: the reader's head is another node's, which moves between requests with
        no write here: finality references are resolved anew each time instead of once per
        stored head. `reads_through`: the reader asks elsewhere for what the store lacks, so its
        "no state" is that source's word, never "not recorded"."""
        self._reader = reader
        self._runtime_params = runtime_params
        self._heads_move = heads_move
        self._reads_through = reads_through
        self._version: StoreVersion | None = None
        # finality and checkpoint references (a handful of keys), resolved once per head
        self._resolved: dict[BlockReference, StoredBlock] = {}
        self._protocol_config_by_epoch: dict[str, bytes] = {}
        self._gas_by_epoch: dict[str, GasCosts] = {}
        self._limits: tuple[int | None, int | None] | None = None  # the client config's view limits
        self._layouts: dict[str, dict[str, Any]] = {}
        # whether the store holds chosen accounts only (`store.held`); asked when it matters
        self._accounts_chosen: bool | None = None

    def refresh(self) -> frozenset[str]:
        """The kinds of data written since the last call (all of them at the first); what was
        derived from them is dropped. Call it before answering each request."""
        try:
            version = self._reader.version()
        except StoreError:
            return frozenset(STORE_KINDS)  # the handler will answer INTERNAL_ERROR itself
        if version == self._version:
            return frozenset()
        changed = frozenset(STORE_KINDS) if self._version is None else version.changed_since(self._version)
        self._version = version
        self._forget(changed)
        return changed

    def _forget(self, changed: frozenset[str]) -> None:
        """Drop what was derived from the `changed` kinds of data (families extend this)."""
        if changed & {"epochs", "configs"}:
            self._protocol_config_by_epoch.clear()
            self._gas_by_epoch.clear()
            self._limits = None
            self._layouts.clear()
        if "blocks" in changed:
            self._resolved.clear()
        if "accounts" in changed:
            self._accounts_chosen = None

    def close(self) -> None:
        """Release what the handlers hold beyond the reader (families extend this)."""

    # -- blocks

    async def _genesis_bytes(self) -> bytes:
        genesis = await self._reader.genesis_config_json()
        if genesis is None:
            raise errors.internal_error("the store holds no genesis_config")
        return genesis

    async def _resolve(self, method: str, reference: BlockReference) -> StoredBlock:
        """The block of `reference`, or UNKNOWN_BLOCK as `method` reports it."""
        if reference.kind != "block_id" and not self._heads_move:
            known = self._resolved.get(reference)
            if known is not None:
                return known
        try:
            block = await resolve(self._reader, reference)
        except UnknownBlock as missing:
            head = await self._reader.head()
            raise errors.unknown_block(method, reference, missing.db_message, head.height if head else None) from None
        if reference.kind != "block_id" and not self._heads_move:
            self._resolved[reference] = block
        return block

    async def _view_block(self, method: str, params: Any) -> StoredBlock:
        try:
            return await self._resolve(method, reference_of(params))
        except NoEarliestBlock:
            # jsonrpc-primitives view_*.rs: NO_SYNCED_BLOCKS is an internal error for the views
            raise errors.internal_error("There are no fully synchronized blocks on the node yet") from None

    # -- what the store holds

    async def _account_view(self, account_id: str, block: StoredBlock, method: str) -> bytes:
        """The account's stored view at `block`, or UNKNOWN_ACCOUNT (or that it is not held)."""
        view = await self._reader.account_json(account_id, block.height)
        if view is None:
            await self._check_held(account_id, block, method, seen_account(account_id, block.height))
            raise errors.unknown_account(account_id, block.height, block.hash)
        return view

    async def _chosen_only(self) -> bool:
        """Whether the store is a recording of chosen accounts, whose "no state" means "not
        recorded" (never so for a reader that reads through)."""
        if self._reads_through:
            return False
        if self._accounts_chosen is None:
            self._accounts_chosen = await self._reader.fetched(ACCOUNTS_CHOSEN)
        return self._accounts_chosen

    def _holds_every_account(self) -> bool:
        """Whether the store is known not to be a recording of chosen accounts (`_chosen_only`
        has answered so): its held checks have nothing to say, and need not be awaited."""
        return self._reads_through or self._accounts_chosen is False

    async def _check_held(self, account_id: str, block: StoredBlock, method: str, *seen: str) -> None:
        """Raise that the store does not hold `account_id` at `block` when it is a store of
        chosen accounts that neither holds it at every block (a recording's `held_account`) nor
        saw what is asked there (`seen`: the marks, any of which says so; a fork's store):
        "no state" there means "not recorded", not "no such account"."""
        if await self._chosen_only() and not await self._seen(account_id, seen):
            raise errors.account_not_held(method, account_id, await self._shard_id(account_id, block))

    async def _seen(self, account_id: str, seen: tuple[str, ...]) -> bool:
        """Whether a store of chosen accounts holds `account_id` at every block, or one of the
        `seen` marks."""
        if await self._reader.fetched(held_account(account_id)):
            return True
        for mark in seen:
            if await self._reader.fetched(mark):
                return True
        return False

    async def _check_state_held(self, account_id: str, block: StoredBlock, method: str, *seen: str) -> None:
        """A recording that could not get the account's contract state at this block (too
        large, or a shard the node did not track) says so with a mark; a store that holds the
        account only where it was seen (a fork's) holds its state only where `seen` marks say
        it got that state whole (no `seen`: the state is read key by key, as a view call reads
        it, where the account's own mark stands for it). Either is answered as state the store
        does not hold, not as an empty state."""
        if not await self._chosen_only():
            return
        if await self._reader.fetched(contract_state_not_held(account_id, block.height)):
            raise errors.contract_state_not_held(method, account_id, await self._shard_id(account_id, block))
        if not await self._seen(account_id, seen or (seen_account(account_id, block.height),)):
            raise errors.contract_state_not_held(method, account_id, await self._shard_id(account_id, block))

    async def _shard_id(self, account_id: str | None, block: StoredBlock) -> int:
        """The shard holding `account_id` (None: the first) in `block`'s epoch."""
        layout = self._layouts.get(block.epoch_id)
        if layout is None:
            epoch = await self._reader.epoch(block.epoch_id)
            found = None if epoch is None else orjson.loads(epoch.config_json).get("shard_layout")
            if found is None:
                found = orjson.loads(await self._genesis_bytes()).get("shard_layout")
            if not isinstance(found, dict):
                where = f"for epoch {block.epoch_id} or in genesis"
                raise errors.internal_error(f"the store holds no shard layout, {where}")
            # a fork holds an epoch once asked, so only a layout found in the epoch's config is kept
            if epoch is not None:
                keep(self._layouts, block.epoch_id, found, _KEPT_LAYOUTS)
            layout = found
        return first_shard_id(layout) if account_id is None else account_shard_id(layout, account_id)

    # -- the node's limits and the protocol of an epoch

    async def _client_limits(self) -> tuple[int | None, int | None]:
        """The node's `trie_viewer_state_size_limit` and `max_gas_burnt_view` (client_config;
        None: no limit / the protocol's max_gas_burnt)."""
        if self._limits is None:
            client = await self._reader.client_config_json()
            config: dict[str, Any] = {} if client is None else orjson.loads(client)
            size, gas = config.get("trie_viewer_state_size_limit"), config.get("max_gas_burnt_view")
            self._limits = (None if size is None else int(size), None if gas is None else int(gas))
        return self._limits

    async def _protocol_config(self, block: StoredBlock) -> bytes:
        """The protocol config of the block's epoch, composed (or read) once per epoch."""
        config = self._protocol_config_by_epoch.get(block.epoch_id)
        if config is None:
            config = self._protocol_config_by_epoch[block.epoch_id] = await self._protocol_config_json(block)
        return config

    async def _gas_costs(self, block: StoredBlock) -> GasCosts:
        """The costs of the block's protocol (its epoch's protocol config), kept per epoch."""
        costs = self._gas_by_epoch.get(block.epoch_id)
        if costs is None:
            config = await self._protocol_config(block)
            max_gas_burnt_view = (await self._client_limits())[1]
            costs = GasCosts.from_protocol_config(orjson.loads(config), max_gas_burnt_view)
            self._gas_by_epoch[block.epoch_id] = costs
        return costs

    async def _protocol_config_json(self, block: StoredBlock) -> bytes:
        epoch = await self._reader.epoch(block.epoch_id)
        if epoch is None:
            # a store may hold a block without its epoch (a fork's cassette keeps an epoch only
            # where a request needed it): nearcore's answer for epoch data it lacks, not a failure
            where = f"EPOCH {block.epoch_id} of block {block.hash}, which this store does not hold"
            reference = BlockReference("block_id", block.hash)
            raise errors.unknown_block("EXPERIMENTAL_protocol_config", reference, where, None)
        if epoch.protocol_config_json is not None:  # recorded from a node: served as it answered
            return epoch.protocol_config_json
        config = compose_protocol_config(
            orjson.loads(await self._genesis_bytes()),
            epoch.protocol_version,
            orjson.loads(epoch.config_json),
            self._runtime_params,
        )
        return orjson.dumps(config)
