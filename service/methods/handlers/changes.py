"""A block's state changes: EXPERIMENTAL_changes_in_block / block_effects (the kinds of change
per account), EXPERIMENTAL_changes / changes (the changes of one kind to the accounts asked
about). Derived from the rows at the block against its parent (methods.changes), or, where a
`ChangesUpstream` is given, its answer at the resolved block. The cause of a refusal is also
its legacy `data`."""

from __future__ import annotations

from typing import Any

from nearrpc.generated import models
from nearrpc.methods import errors
from nearrpc.methods.blocks import NoEarliestBlock, reference_of
from nearrpc.methods.changes import BlockRows, ChangesNotKnown, changes_result, kinds_result, read_block_rows
from nearrpc.methods.handlers.resolution import Resolution
from nearrpc.methods.view_calls import ChangesUpstream
from nearrpc.store import StoredBlock, StoreError


class ChangesMethods(Resolution):
    def _init_changes(self, changes_upstream: ChangesUpstream | None) -> None:
        """`changes_upstream`: who answers the changes methods instead of the store's rows."""
        self._changes_upstream = changes_upstream

    async def EXPERIMENTAL_changes_in_block(self, params: models.RpcStateChangesInBlockRequest) -> bytes:
        if self._changes_upstream is not None:
            return await self._upstream_changes("EXPERIMENTAL_changes_in_block", params, params.model_dump(mode="json"))
        return kinds_result(await self._block_rows("EXPERIMENTAL_changes_in_block", params, None))

    async def block_effects(self, params: models.RpcStateChangesInBlockRequest) -> bytes:
        if self._changes_upstream is not None:
            return await self._upstream_changes("block_effects", params, params.model_dump(mode="json"))
        return kinds_result(await self._block_rows("block_effects", params, None))

    async def EXPERIMENTAL_changes(self, params: models.RpcStateChangesInBlockByTypeRequest) -> bytes:
        request: dict[str, Any] = params.model_dump(mode="json")
        if self._changes_upstream is not None:
            return await self._upstream_changes("EXPERIMENTAL_changes", params, request)
        return changes_result(await self._block_rows("EXPERIMENTAL_changes", params, _asked_accounts(request)), request)

    async def changes(self, params: models.RpcStateChangesInBlockByTypeRequest) -> bytes:
        request: dict[str, Any] = params.model_dump(mode="json")
        if self._changes_upstream is not None:
            return await self._upstream_changes("changes", params, request)
        return changes_result(await self._block_rows("changes", params, _asked_accounts(request)), request)

    async def _upstream_changes(self, method: str, params: Any, request: dict[str, Any]) -> bytes:
        """The upstream's answer at the block `params` refers to, resolved here as for any
        method (nearcore's GetBlock errors, with the cause as `data`)."""
        assert self._changes_upstream is not None
        try:
            block = await self._changes_block(method, params)
        except errors.RpcError as refused:
            raise errors.cause_as_data(refused) from None
        return await self._changes_upstream.changes(method, request, block)

    async def _block_rows(self, method: str, params: Any, accounts: list[str] | None) -> BlockRows:
        """The rows of the block `params` refers to; `accounts`: the accounts asked about (None:
        every account). nearcore's GetBlock errors, with the cause as `data`."""
        try:
            block = await self._changes_block(method, params)
            await self._check_changes_held(method, block, accounts)
            return await read_block_rows(self._reader, block)
        except ChangesNotKnown as unknown:
            raise errors.cause_as_data(errors.internal_error(str(unknown))) from None
        except StoreError as failure:
            raise errors.cause_as_data(errors.internal_error(str(failure))) from None
        except errors.RpcError as refused:
            raise errors.cause_as_data(refused) from None

    async def _changes_block(self, method: str, params: Any) -> StoredBlock:
        try:
            return await self._resolve(method, reference_of(params))
        except NoEarliestBlock:
            raise errors.not_synced_yet() from None

    async def _check_changes_held(self, method: str, block: StoredBlock, accounts: list[str] | None) -> None:
        """A recording of chosen accounts knows the changes of those accounts only."""
        if not await self._chosen_only():
            return
        if accounts is None:
            raise errors.internal_error(
                "this store is a recording of chosen accounts: it does not hold every change of a block "
                "(ask EXPERIMENTAL_changes about the accounts it holds)"
            )
        for account_id in dict.fromkeys(accounts):
            await self._check_held(account_id, block, method)


def _asked_accounts(request: dict[str, Any]) -> list[str]:
    """The accounts a StateChangesRequestView asks about."""
    if "keys" in request:
        return [str(key["account_id"]) for key in request["keys"]]
    return [str(account_id) for account_id in request["account_ids"]]
