"""`query`: one method over the account, key and contract reads, by its `request_type`; each
branch answers as its EXPERIMENTAL_ method does, except where nearcore's query answers in its
legacy forms (an unknown access key, a failed call: a result with an `error` text)."""

from __future__ import annotations

import base64
from typing import Any

from nearrpc.generated import models
from nearrpc.methods import errors
from nearrpc.methods.blocks import NoEarliestBlock, reference_of
from nearrpc.methods.handlers.accounts import AccountMethods
from nearrpc.methods.handlers.contracts import ContractMethods, after_key, check_view_state_pages
from nearrpc.methods.handlers.resolution import store_failures_are_internal
from nearrpc.methods.queries import unknown_access_key_result


class QueryMethods(AccountMethods, ContractMethods):
    @store_failures_are_internal
    async def query(self, params: models.RpcQueryRequest) -> bytes:
        request: Any = params.root  # one of the request types' models
        if request.request_type == "view_state":
            check_view_state_pages(request)
        try:
            block = await self._resolve("query", reference_of(params))
        except NoEarliestBlock:
            raise errors.no_synced_blocks() from None
        request_type: str = request.request_type
        account = getattr(request, "account_id", None)
        account_id: str | None = None if account is None else account.root
        if request_type == "view_account" and account_id is not None:
            return await self._account(account_id, block, "query")
        if request_type == "view_code" and account_id is not None:
            return await self._code(account_id, block, "query")
        if request_type == "view_access_key" and account_id is not None:
            public_key: str = request.public_key.root
            view = await self._access_key(account_id, public_key, block, "query")
            return unknown_access_key_result(public_key, block.height, block.hash) if view is None else view
        if request_type == "view_access_key_list" and account_id is not None:
            return await self._access_keys(account_id, block, "query")
        if request_type == "call_function" and account_id is not None:
            args = base64.b64decode(request.args_base64.root)
            return await self._call_function(account_id, request.method_name, args, block, "query")
        if request_type == "view_state" and account_id is not None:
            return await self._view_state(
                account_id,
                base64.b64decode(request.prefix_base64.root),
                bool(request.include_proof),
                block,
                "query",
                after_key(request),
                request.limit,
            )
        # global contracts and gas keys: state no store holds
        raise errors.unavailable_shard(await self._shard_id(account_id, block))
