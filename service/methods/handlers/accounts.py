"""Accounts and keys: EXPERIMENTAL_view_account, EXPERIMENTAL_view_access_key,
EXPERIMENTAL_view_access_key_list (and the same reads for `query`). An account's answer is its
stored view with the block spliced in."""

from __future__ import annotations

from nearrpc.generated import models
from nearrpc.methods import errors
from nearrpc.methods.handlers.resolution import Resolution, store_failures_are_internal
from nearrpc.methods.queries import access_key_list, with_block
from nearrpc.nearcore.public_key import canonical_public_key
from nearrpc.store import StoredBlock, seen_access_key, seen_access_key_list


class AccountMethods(Resolution):
    def _init_accounts(self) -> None:
        self._holds_keys = False  # whether the store holds any access key (asked when it matters)

    def _forget(self, changed: frozenset[str]) -> None:
        super()._forget(changed)
        if "access_keys" in changed:
            self._holds_keys = False

    @store_failures_are_internal
    async def EXPERIMENTAL_view_account(self, params: models.RpcViewAccountRequest) -> bytes:
        account_id: str = params.root.account_id.root
        block = await self._view_block("EXPERIMENTAL_view_account", params)
        return await self._account(account_id, block, "EXPERIMENTAL_view_account")

    @store_failures_are_internal
    async def EXPERIMENTAL_view_access_key(self, params: models.RpcViewAccessKeyRequest) -> bytes:
        block = await self._view_block("EXPERIMENTAL_view_access_key", params)
        public_key: str = params.root.public_key.root
        view = await self._access_key(params.root.account_id.root, public_key, block, "EXPERIMENTAL_view_access_key")
        if view is None:
            raise errors.unknown_access_key(public_key, block.height, block.hash)
        return view

    @store_failures_are_internal
    async def EXPERIMENTAL_view_access_key_list(self, params: models.RpcViewAccessKeyListRequest) -> bytes:
        block = await self._view_block("EXPERIMENTAL_view_access_key_list", params)
        return await self._access_keys(params.root.account_id.root, block, "EXPERIMENTAL_view_access_key_list")

    async def _account(self, account_id: str, block: StoredBlock, method: str) -> bytes:
        return with_block(await self._account_view(account_id, block, method), block.height, block.hash)

    async def _access_key(self, account_id: str, public_key: str, block: StoredBlock, method: str) -> bytes | None:
        public_key = canonical_public_key(public_key)
        view = await self._reader.access_key_json(account_id, public_key, block.height)
        if view is None:
            await self._check_held(account_id, block, method, *self._key_seen(account_id, public_key, block))
            await self._holds_access_keys()
            return None
        return with_block(view, block.height, block.hash)

    @staticmethod
    def _key_seen(account_id: str, public_key: str, block: StoredBlock) -> tuple[str, str]:
        """The marks of a store that saw the key at `block`: the key itself, or the whole list."""
        height = block.height
        return seen_access_key(account_id, public_key, height), seen_access_key_list(account_id, height)

    async def _access_keys(self, account_id: str, block: StoredBlock, method: str) -> bytes:
        keys = await self._reader.access_keys_json(account_id, block.height)
        # a store that saw some of the account's keys (a fork asked one at a time) holds a list
        # only where it saw the list whole: checked whether or not rows were found
        if not keys or await self._chosen_only():
            await self._check_held(account_id, block, method, seen_access_key_list(account_id, block.height))
        if not keys:
            await self._holds_access_keys()
        return with_block(access_key_list(keys), block.height, block.hash)

    async def _holds_access_keys(self) -> None:
        """A store no access key was ever written to (saved answers without key lists, a
        recording of accounts that have no key) knows nothing of keys: "no key" from it would be
        made up, so it answers that it cannot tell."""
        if not self._holds_keys:  # counted once per write of keys: info() is several lookups
            self._holds_keys = (await self._reader.info()).access_key_count > 0
        if not self._holds_keys:
            raise errors.internal_error(
                "the store holds no access keys (import them from genesis records, saved key lists or a recording)"
            )
