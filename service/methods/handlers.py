"""The methods, answered from a store: implements generated.handlers.RpcHandlers.

Handlers know nothing of HTTP: they take typed params and return the serialized `result`, or
raise RpcError. Blocks and account states are stored as the bytes they are served as; the
protocol config of an epoch is composed once and kept, and finality and checkpoint references
are resolved once, until `refresh()` sees a write that changes what they were made from.
"""

from __future__ import annotations

import base64
import functools
import logging
from collections.abc import Callable, Coroutine
from typing import Any, Final, ParamSpec, TypeVar

import orjson

from nearrpc.contracts import HostFunctionUnavailable, ViewCallError
from nearrpc.contracts.errors import VM_ERROR_PREFIX
from nearrpc.contracts.errors import unavailable as vm_unavailable
from nearrpc.contracts.gas import GasCosts
from nearrpc.generated import models
from nearrpc.methods import errors
from nearrpc.methods.blocks import BlockReference, NoEarliestBlock, UnknownBlock, reference_of, resolve
from nearrpc.methods.changes import BlockRows, ChangesNotKnown, changes_result, kinds_result, read_block_rows
from nearrpc.methods.chunks import chunk_answer, chunk_reference
from nearrpc.methods.protocol_config import compose_protocol_config
from nearrpc.methods.queries import (
    access_key_list,
    code_does_not_exist,
    code_hash_of,
    code_view,
    contract_code_hash,
    contract_execution_result,
    unknown_access_key_result,
    with_block,
)
from nearrpc.methods.receipts import receipt_answer
from nearrpc.methods.status import StatusReport, missing_members
from nearrpc.methods.transactions import transaction_answer, transaction_request
from nearrpc.methods.validators import (
    epoch_reference,
    ordered_block_id,
    validators_answer,
    validators_ordered_answer,
)
from nearrpc.methods.view_calls import (
    BlockFacts,
    CallUpstream,
    ChangesUpstream,
    ViewCallMetrics,
    ViewRunner,
    block_facts,
    call_result,
    state_page,
    state_result,
    view_context,
)
from nearrpc.methods.vm_errors import rpc_function_call_error
from nearrpc.nearcore.public_key import canonical_public_key
from nearrpc.nearcore.shard_layout import account_shard_id, first_shard_id
from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.spec import openrpc_compact
from nearrpc.store import (
    ACCOUNTS_CHOSEN,
    STORE_KINDS,
    ContractStateTooLarge,
    ServingReader,
    StoredBlock,
    StoreError,
    StoreVersion,
    contract_state_not_held,
    held_account,
)

_LOG = logging.getLogger("nearrpc.view_calls")
# a listing without pagination reads every row under the prefix (the size limit bounds it)
_ALL_ROWS = 2**31 - 1
_KEPT_BLOCK_FACTS = 64  # blocks whose timestamp and chunks a view call has parsed
_KEPT_CODES = 16  # contract codes by hash (the one a hot contract's calls all read)
_KEPT_LAYOUTS = 64  # shard layouts by epoch (a fork sees ever more epochs)
_P = ParamSpec("_P")
_R = TypeVar("_R")
_K = TypeVar("_K")
_V = TypeVar("_V")


def _keep(kept: dict[_K, _V], key: _K, value: _V, limit: int) -> _V:
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


class ChainHandlers:
    def __init__(
        self,
        reader: ServingReader,
        runtime_params: RuntimeParamStore,
        rpc_addr: str | None = None,
        *,
        heads_move: bool = False,
        reads_through: bool = False,
        call_upstream: CallUpstream | None = None,
        verify_calls: bool = False,
        view_call_metrics: ViewCallMetrics | None = None,
        changes_upstream: ChangesUpstream | None = None,
    ) -> None:
        """`heads_move`: the reader's head is another node's, which moves between requests with
        no write here (a fork that follows its upstream): finality references are resolved anew
        each time instead of once per stored head. `reads_through`: the reader asks an upstream
        for what the store lacks (a fork), so its "no state" is the upstream's word.
        `call_upstream`: where a view call cannot run here, its answer (a fork's upstream);
        `verify_calls`: ask it for every local call answer too and count the differences;
        `view_call_metrics`: where view calls are counted by path and verify differences;
        `changes_upstream`: who answers the changes methods instead of the store's rows (a fork's
        upstream)."""
        self._reader = reader
        self._heads_move = heads_move
        self._reads_through = reads_through
        self._call_upstream = call_upstream
        self._changes_upstream = changes_upstream
        self._verify_calls = verify_calls
        self._metrics = view_call_metrics
        self._views = ViewRunner()
        self._gas_by_epoch: dict[str, GasCosts] = {}
        # what view calls read of immutable things, parsed once: a block's timestamp and
        # chunks (by hash), a code (by hash), an epoch's shard layout, genesis's epoch length
        self._block_facts: dict[str, BlockFacts] = {}
        self._codes: dict[str, bytes] = {}
        self._layouts: dict[str, dict[str, Any]] = {}
        self._epoch_length: tuple[int, int] | None = None
        self._limits: tuple[int | None, int | None] | None = None  # the client config's view limits
        # whether the store holds chosen accounts only (`store.held`); asked when it matters
        self._accounts_chosen: bool | None = None
        self._status = StatusReport(reader, rpc_addr)
        self._runtime_params = runtime_params
        self._version: StoreVersion | None = None
        self._protocol_config_by_epoch: dict[str, bytes] = {}
        # finality and checkpoint references (a handful of keys), resolved once per head
        self._resolved: dict[BlockReference, StoredBlock] = {}
        self._holds_keys = False  # whether the store holds any access key (asked when it matters)

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
        if changed & {"epochs", "configs"}:
            self._protocol_config_by_epoch.clear()
            self._gas_by_epoch.clear()
            self._limits = None
            self._layouts.clear()
            self._epoch_length = None
        if "blocks" in changed:
            self._resolved.clear()
            self._block_facts.clear()
        if "codes" in changed:
            self._codes.clear()
        if "access_keys" in changed:
            self._holds_keys = False
        if "accounts" in changed:
            self._accounts_chosen = None
        return changed

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

    # -- parameterless methods: params are ignored, as nearcore ignores them

    @store_failures_are_internal
    async def genesis_config(self, params: models.GenesisConfigRequest) -> bytes:
        return await self._genesis_bytes()

    @store_failures_are_internal
    async def client_config(self, params: models.RpcClientConfigRequest) -> bytes:
        client = await self._reader.client_config_json()
        if client is None:
            raise errors.internal_error("the store holds no client_config")
        return client

    # -- methods that read at a block

    @store_failures_are_internal
    async def block(self, params: models.RpcBlockRequest) -> bytes:
        reference = reference_of(params)
        if reference.kind == "block_id":  # most requests: the stored result alone, read at once
            height_or_hash = reference.value
            found = await (self._reader.block_json_by_height(height_or_hash) if isinstance(height_or_hash, int)
                           else self._reader.block_json_by_hash(height_or_hash))  # fmt: skip
            if found is not None:
                return found
        try:  # the other references, and an unknown block's error
            return (await self._resolve("block", reference)).view_json
        except NoEarliestBlock:
            raise errors.not_synced_yet() from None

    @store_failures_are_internal
    async def EXPERIMENTAL_protocol_config(self, params: models.RpcProtocolConfigRequest) -> bytes:
        reference = reference_of(params)
        try:
            block = await self._resolve("EXPERIMENTAL_protocol_config", reference)
        except NoEarliestBlock:
            raise errors.unknown_block("EXPERIMENTAL_protocol_config", reference, "EarliestAvailable", None) from None
        cached = self._protocol_config_by_epoch.get(block.epoch_id)
        if cached is None:
            cached = await self._protocol_config_json(block)
            self._protocol_config_by_epoch[block.epoch_id] = cached
        return cached

    @store_failures_are_internal
    async def EXPERIMENTAL_view_account(self, params: models.RpcViewAccountRequest) -> bytes:
        account_id: str = params.root.account_id.root
        block = await self._view_block("EXPERIMENTAL_view_account", params)
        return await self._account(account_id, block, "EXPERIMENTAL_view_account")

    # -- beyond interface 1.2.14

    @store_failures_are_internal
    async def status(self, params: models.RpcStatusRequest) -> bytes:
        document = await self._status.document()
        missing = missing_members(document)
        if missing:
            raise errors.internal_error(f"the store cannot fill the status members {', '.join(missing)}")
        return orjson.dumps(document)

    # -- a client's other reads (issue 30); the changes methods come with their own branch

    @store_failures_are_internal
    async def chunk(self, params: models.RpcChunkRequest) -> bytes:
        return await chunk_answer(self._reader, chunk_reference(params), functools.partial(self._resolve, "chunk"))

    @store_failures_are_internal
    async def tx(self, params: models.RpcTransactionStatusRequest) -> bytes:
        return await transaction_answer(
            self._reader, transaction_request(params), await self._final_block(), with_receipts=False
        )

    @store_failures_are_internal
    async def EXPERIMENTAL_tx_status(self, params: models.RpcTransactionStatusRequest) -> bytes:
        return await transaction_answer(
            self._reader, transaction_request(params), await self._final_block(), with_receipts=True
        )

    @store_failures_are_internal
    async def EXPERIMENTAL_receipt(self, params: models.RpcReceiptRequest) -> bytes:
        return await receipt_answer(self._reader, params.receipt_id.root)

    @store_failures_are_internal
    async def validators(self, params: models.RpcValidatorRequest) -> bytes:
        return await validators_answer(self._reader, epoch_reference(params))

    @store_failures_are_internal
    async def EXPERIMENTAL_validators_ordered(self, params: models.RpcValidatorsOrderedRequest) -> bytes:
        return await validators_ordered_answer(self._reader, ordered_block_id(params))

    @store_failures_are_internal
    async def health(self, params: models.RpcHealthRequest) -> bytes:
        # what GET /health checks: a replaced file noticed, the store readable
        self._reader.version()
        await self._reader.info()
        return b"null"

    async def _final_block(self) -> StoredBlock | None:
        """The chain's final block (None: no blocks), which a transaction's status is measured by."""
        try:
            return await self._resolve("tx", BlockReference("finality", "final"))
        except errors.RpcError:
            return None

    async def rpc_discover(self, params: models.RpcDiscoverRequest) -> bytes:
        # OpenRPC's service discovery: the packaged document, whatever the store holds
        return openrpc_compact()

    @store_failures_are_internal
    async def gas_price(self, params: models.RpcGasPriceRequest) -> bytes:
        # view_client_actor.rs GetGasPrice: the header's next gas price, which its view shows
        block = await self._resolve("gas_price", reference_of(params))
        gas_price: str = orjson.loads(block.view_json)["header"]["gas_price"]
        return orjson.dumps({"gas_price": gas_price})

    @store_failures_are_internal
    async def query(self, params: models.RpcQueryRequest) -> bytes:
        request: Any = params.root  # one of the request types' models
        if request.request_type == "view_state":
            _check_view_state_pages(request)
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
                _after_key(request),
                request.limit,
            )
        # global contracts and gas keys: state no store holds
        raise errors.unavailable_shard(await self._shard_id(account_id, block))

    @store_failures_are_internal
    async def EXPERIMENTAL_view_code(self, params: models.RpcViewCodeRequest) -> bytes:
        block = await self._view_block("EXPERIMENTAL_view_code", params)
        return await self._code(params.root.account_id.root, block, "EXPERIMENTAL_view_code")

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

    @store_failures_are_internal
    async def EXPERIMENTAL_call_function(self, params: models.RpcCallFunctionRequest) -> bytes:
        block = await self._view_block("EXPERIMENTAL_call_function", params)
        request = params.root
        args = base64.b64decode(request.args_base64.root)
        return await self._call_function(
            request.account_id.root, request.method_name, args, block, "EXPERIMENTAL_call_function"
        )

    @store_failures_are_internal
    async def EXPERIMENTAL_view_state(self, params: models.RpcViewStateRequest) -> bytes:
        request = params.root
        _check_view_state_pages(request)
        block = await self._view_block("EXPERIMENTAL_view_state", params)
        prefix = base64.b64decode(request.prefix_base64.root)
        return await self._view_state(
            request.account_id.root,
            prefix,
            request.include_proof,
            block,
            "EXPERIMENTAL_view_state",
            _after_key(request),
            request.limit,
        )

    # -- contract calls and state (runtime state_viewer call_function / view_state)

    async def _call_function(
        self, account_id: str, method_name: str, args: bytes, block: StoredBlock, method: str
    ) -> bytes:
        """A view call at `block` (runtime state_viewer `call_function`): the account first
        (UNKNOWN_ACCOUNT), then its code (none: the VM's CodeDoesNotExist), then the code run on
        the state as of the block. A failed run is a result with an `error` text for query, and
        CONTRACT_EXECUTION_ERROR for EXPERIMENTAL_call_function."""
        account: dict[str, Any] = orjson.loads(await self._account_view(account_id, block, method))
        code_hash = code_hash_of(account)
        if code_hash is None:
            vm_error, vm_error_debug = code_does_not_exist(account_id)
            if method == "query":
                return contract_execution_result(vm_error_debug, block.height, block.hash)
            raise errors.contract_execution_error(vm_error, vm_error_debug, block.height, block.hash)
        await self._check_state_held(account_id, block, method)
        code = await self._contract_code(code_hash)
        if code is None:
            raise errors.internal_error(f"the store holds no contract code with hash {code_hash} (of {account_id})")
        shard_id = await self._shard_id(account_id, block)
        facts = self._block_facts.get(block.hash)
        if facts is None:
            facts = _keep(self._block_facts, block.hash, block_facts(block), _KEPT_BLOCK_FACTS)
        context = view_context(account_id, account, block, facts, shard_id, await self._epoch_height(block))
        costs = await self._gas_costs(block)
        try:
            try:
                outcome = await self._views.run(self._reader, code, code_hash, method_name, args, context, costs)
            except HostFunctionUnavailable as missing:
                if self._call_upstream is not None:
                    raise
                # no upstream to ask: the VM's unknown error, a failed call rather than a 500
                raise ViewCallError(vm_unavailable(missing.name)) from None
        except ViewCallError as failed:
            answer = contract_execution_result(failed.debug, block.height, block.hash)
            await self._verify(account_id, method_name, args, block, answer)
            self._count("local", "failed")
            if method == "query":
                return answer
            vm_error, vm_error_debug = rpc_function_call_error(failed.debug)
            raise errors.contract_execution_error(vm_error, vm_error_debug, block.height, block.hash) from None
        except HostFunctionUnavailable as missing:
            why = (
                f"the contract of {account_id} imports the host function {missing.name}, which nearrpc's "
                "executor does not implement"
            )
            return await self._upstream_call(account_id, method_name, args, block, method, "host_function", why)
        except ContractStateTooLarge as too_large:
            # a fork whose upstream will not list this contract's storage: the upstream runs it
            if self._call_upstream is None:
                raise
            return await self._upstream_call(
                account_id, method_name, args, block, method, "state_too_large", str(too_large)
            )
        answer = call_result(outcome, block.height, block.hash)
        await self._verify(account_id, method_name, args, block, answer)
        self._count("local", "executed")
        return answer

    # -- a block's state changes (methods.changes): the cause is also the legacy `data`

    async def EXPERIMENTAL_changes_in_block(self, params: models.RpcStateChangesInBlockRequest) -> bytes:
        if self._changes_upstream is not None:
            return await self._upstream_changes("EXPERIMENTAL_changes_in_block", params, {})
        return kinds_result(await self._block_rows("EXPERIMENTAL_changes_in_block", params, None))

    async def block_effects(self, params: models.RpcStateChangesInBlockRequest) -> bytes:
        if self._changes_upstream is not None:
            return await self._upstream_changes("block_effects", params, {})
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
        """A fork's answer: the upstream's at the block `params` refers to (a fork holds only the
        rows it was asked for, so changes derived from them would leave the rest out)."""
        assert self._changes_upstream is not None
        try:
            try:
                block = await self._resolve(method, reference_of(params))
            except NoEarliestBlock:
                raise errors.not_synced_yet() from None
        except errors.RpcError as refused:
            raise errors.cause_as_data(refused) from None
        asked = {key: value for key, value in request.items() if key not in _BLOCK_REFERENCES and value is not None}
        return await self._changes_upstream.changes(method, asked, block)

    async def _block_rows(self, method: str, params: Any, accounts: list[str] | None) -> BlockRows:
        """The rows of the block `params` refers to; `accounts`: the accounts asked about (None:
        every account). nearcore's GetBlock errors, with the cause as `data`."""
        try:
            try:
                block = await self._resolve(method, reference_of(params))
            except NoEarliestBlock:
                raise errors.not_synced_yet() from None
            await self._check_changes_held(method, block, accounts)
            return await read_block_rows(self._reader, block)
        except ChangesNotKnown as unknown:
            raise errors.cause_as_data(errors.internal_error(str(unknown))) from None
        except StoreError as failure:
            raise errors.cause_as_data(errors.internal_error(str(failure))) from None
        except errors.RpcError as refused:
            raise errors.cause_as_data(refused) from None

    async def _check_changes_held(self, method: str, block: StoredBlock, accounts: list[str] | None) -> None:
        """A recording of chosen accounts knows the changes of those accounts only."""
        if self._reads_through:
            return
        if self._accounts_chosen is None:
            self._accounts_chosen = await self._reader.fetched(ACCOUNTS_CHOSEN)
        if not self._accounts_chosen:
            return
        if accounts is None:
            raise errors.internal_error(
                "this store is a recording of chosen accounts: it does not hold every change of a block "
                "(ask EXPERIMENTAL_changes about the accounts it holds)"
            )
        for account_id in dict.fromkeys(accounts):
            await self._check_held(account_id, block, method)

    async def _upstream_call(
        self,
        account_id: str,
        method_name: str,
        args: bytes,
        block: StoredBlock,
        method: str,
        reason: str,
        why: str,
    ) -> bytes:
        """A call the executor cannot run (`why`; counted by `reason`): the upstream's answer
        verbatim (a fork; a failed call, query's legacy error result, becomes
        EXPERIMENTAL_call_function's error), else nearcore's answer for a call its runtime could
        not complete (CallFunctionError's InternalError), saying why."""
        if self._call_upstream is None:
            raise errors.internal_error(f"{why} (a fork asks its upstream for such calls)")
        answer = await self._call_upstream.call_function(account_id, method_name, args, block)
        self._count("upstream", reason)
        failed = orjson.loads(answer).get("error") if method != "query" else None
        if isinstance(failed, str) and failed.startswith(VM_ERROR_PREFIX):
            vm_error, vm_error_debug = rpc_function_call_error(failed.removeprefix(VM_ERROR_PREFIX))
            raise errors.contract_execution_error(vm_error, vm_error_debug, block.height, block.hash)
        return answer

    async def _verify(self, account_id: str, method_name: str, args: bytes, block: StoredBlock, local: bytes) -> None:
        """With `verify_calls`: the upstream's answer to the same call, compared with the local
        one (query's form); a difference is counted and logged, the local answer stands."""
        if not self._verify_calls or self._call_upstream is None:
            return
        try:
            answer = await self._call_upstream.call_function(account_id, method_name, args, block)
            upstream: object = orjson.loads(answer)
        except errors.RpcError as refused:
            upstream = {"error cause": refused.kind.cause.value, "data": refused.data}
        except Exception as failure:  # an upstream that cannot answer is no verdict on the executor
            _LOG.warning(
                "verify-calls: no upstream answer for %s.%s at %s: %s", account_id, method_name, block.hash, failure
            )
            return
        if upstream != orjson.loads(local):
            if self._metrics is not None:
                self._metrics.difference()
            _LOG.warning(
                "verify-calls: %s.%s at block %s (%d) differs: local %s, upstream %s",
                account_id,
                method_name,
                block.hash,
                block.height,
                local.decode(errors="replace"),
                orjson.dumps(upstream).decode(),
            )

    def _count(self, path: str, reason: str) -> None:
        if self._metrics is not None:
            self._metrics.call(path, reason)

    async def _view_state(
        self,
        account_id: str,
        prefix: bytes,
        include_proof: bool,
        block: StoredBlock,
        method: str,
        after_key: bytes | None = None,
        limit: int | None = None,
    ) -> bytes:
        """An account's contract storage under `prefix` at `block` (runtime state_viewer
        `view_state`): the account (UNKNOWN_ACCOUNT); without `limit` and `after_key`, its whole
        listing, refused (TOO_LARGE_CONTRACT_STATE) when its storage less its code exceeds the
        node's `trie_viewer_state_size_limit`; with them, one page and the `last_key` to resume
        after. No `proof` (DEVIATIONS: the store holds no trie)."""
        paginated = limit is not None or after_key is not None
        account_view = await self._account_view(account_id, block, method)
        await self._check_state_held(account_id, block, method)
        if not paginated:
            size_limit = (await self._client_limits())[0]
            state_size = self._state_size(account_view) - await self._code_len(account_view)
            if size_limit is not None and state_size > size_limit:
                raise errors.too_large_contract_state(account_id, block.height, block.hash)
            rows = await self._reader.contract_state(account_id, prefix, block.height, _ALL_ROWS)
            return state_result(rows, None, block.height, block.hash)
        # resuming runs to the account's last key (nearcore's seek is bounded by the account only)
        scan_prefix = prefix if after_key is None else b""
        rows = await self._reader.contract_state(account_id, scan_prefix, block.height, _ALL_ROWS)
        items, last_key = state_page(account_id, rows, after_key, limit)
        return state_result(items, last_key, block.height, block.hash)

    @staticmethod
    def _state_size(account_view: bytes) -> int:
        return int(orjson.loads(account_view)["storage_usage"])

    async def _code_len(self, account_view: bytes) -> int:
        code_hash = contract_code_hash(account_view)
        code = None if code_hash is None else await self._reader.contract_code(code_hash)
        return 0 if code is None else len(code)

    async def _check_state_held(self, account_id: str, block: StoredBlock, method: str) -> None:
        """A recording that could not get the account's contract state at this block (too
        large, or a shard the node did not track) says so with a mark: answered as state the
        store does not hold, not as an empty state."""
        if self._reads_through:
            return
        if self._accounts_chosen is None:
            self._accounts_chosen = await self._reader.fetched(ACCOUNTS_CHOSEN)
        if self._accounts_chosen and await self._reader.fetched(contract_state_not_held(account_id, block.height)):
            raise errors.contract_state_not_held(method, account_id, await self._shard_id(account_id, block))

    async def _client_limits(self) -> tuple[int | None, int | None]:
        """The node's `trie_viewer_state_size_limit` and `max_gas_burnt_view` (client_config;
        None: no limit / the protocol's max_gas_burnt)."""
        if self._limits is None:
            client = await self._reader.client_config_json()
            config: dict[str, Any] = {} if client is None else orjson.loads(client)
            size, gas = config.get("trie_viewer_state_size_limit"), config.get("max_gas_burnt_view")
            self._limits = (None if size is None else int(size), None if gas is None else int(gas))
        return self._limits

    async def _gas_costs(self, block: StoredBlock) -> GasCosts:
        """The costs of the block's protocol (its epoch's protocol config), kept per epoch."""
        costs = self._gas_by_epoch.get(block.epoch_id)
        if costs is None:
            config = self._protocol_config_by_epoch.get(block.epoch_id)
            if config is None:
                config = self._protocol_config_by_epoch[block.epoch_id] = await self._protocol_config_json(block)
            max_gas_burnt_view = (await self._client_limits())[1]
            costs = GasCosts.from_protocol_config(orjson.loads(config), max_gas_burnt_view)
            self._gas_by_epoch[block.epoch_id] = costs
        return costs

    async def _epoch_height(self, block: StoredBlock) -> int:
        """The block's epoch's height, counted from the genesis config's epoch length (the store
        keeps no epoch heights; DEVIATIONS)."""
        if self._epoch_length is None:
            genesis = orjson.loads(await self._genesis_bytes())
            length = max(int(genesis.get("epoch_length") or 1), 1)
            self._epoch_length = (length, int(genesis.get("genesis_height") or 0))
        length, genesis_height = self._epoch_length
        return 1 + max(block.height - genesis_height, 0) // length

    async def _contract_code(self, code_hash: str) -> bytes | None:
        """The code with `code_hash`, kept for the next calls (a hash names one code forever)."""
        code = self._codes.get(code_hash)
        if code is None:
            code = await self._reader.contract_code(code_hash)
            if code is not None:
                _keep(self._codes, code_hash, code, _KEPT_CODES)
        return code

    def close(self) -> None:
        """Release what the handlers hold beyond the reader (the view calls' worker threads)."""
        self._views.close()

    # -- what the views read

    async def _view_block(self, method: str, params: Any) -> StoredBlock:
        try:
            return await self._resolve(method, reference_of(params))
        except NoEarliestBlock:
            # jsonrpc-primitives view_*.rs: NO_SYNCED_BLOCKS is an internal error for the views
            raise errors.internal_error("There are no fully synchronized blocks on the node yet") from None

    async def _account_view(self, account_id: str, block: StoredBlock, method: str) -> bytes:
        """The account's stored view at `block`, or UNKNOWN_ACCOUNT (or that it is not held)."""
        view = await self._reader.account_json(account_id, block.height)
        if view is None:
            await self._check_held(account_id, block, method)
            raise errors.unknown_account(account_id, block.height, block.hash)
        return view

    async def _check_held(self, account_id: str, block: StoredBlock, method: str) -> None:
        """Raise that the store does not hold `account_id` when it is a recording of chosen
        accounts without it: "no state" there means "not recorded", not "no such account"."""
        if self._reads_through:
            return
        if self._accounts_chosen is None:
            self._accounts_chosen = await self._reader.fetched(ACCOUNTS_CHOSEN)
        if self._accounts_chosen and not await self._reader.fetched(held_account(account_id)):
            raise errors.account_not_held(method, account_id, await self._shard_id(account_id, block))

    async def _account(self, account_id: str, block: StoredBlock, method: str) -> bytes:
        return with_block(await self._account_view(account_id, block, method), block.height, block.hash)

    async def _code(self, account_id: str, block: StoredBlock, method: str) -> bytes:
        code_hash = contract_code_hash(await self._account_view(account_id, block, method))
        if code_hash is None:
            raise errors.no_contract_code(account_id, block.height, block.hash)
        code = await self._reader.contract_code(code_hash)
        if code is None:
            raise errors.internal_error(f"the store holds no contract code with hash {code_hash} (of {account_id})")
        return with_block(code_view(code, code_hash), block.height, block.hash)

    async def _access_key(self, account_id: str, public_key: str, block: StoredBlock, method: str) -> bytes | None:
        view = await self._reader.access_key_json(account_id, canonical_public_key(public_key), block.height)
        if view is None:
            await self._check_held(account_id, block, method)
            await self._holds_access_keys()
            return None
        return with_block(view, block.height, block.hash)

    async def _access_keys(self, account_id: str, block: StoredBlock, method: str) -> bytes:
        keys = await self._reader.access_keys_json(account_id, block.height)
        if not keys:
            await self._check_held(account_id, block, method)
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
                _keep(self._layouts, block.epoch_id, found, _KEPT_LAYOUTS)
            layout = found
        return first_shard_id(layout) if account_id is None else account_shard_id(layout, account_id)

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


def _check_view_state_pages(request: Any) -> None:
    """The page arguments nearcore refuses while parsing a view_state request (jsonrpc
    `validate_view_state_pagination`), before any block is read: PARSE_ERROR."""
    after_key = _after_key(request)
    if request.include_proof and (after_key is not None or request.limit is not None):
        raise errors.parse_error("include_proof is not supported with paginated view_state (after_key_base64 / limit)")
    if after_key is not None and not after_key.startswith(base64.b64decode(request.prefix_base64.root)):
        raise errors.parse_error("after_key_base64 must start with prefix_base64")


_BLOCK_REFERENCES: Final = ("block_id", "finality", "sync_checkpoint")


def _asked_accounts(request: dict[str, Any]) -> list[str]:
    """The accounts a StateChangesRequestView asks about."""
    if "keys" in request:
        return [str(key["account_id"]) for key in request["keys"]]
    return [str(account_id) for account_id in request["account_ids"]]


def _after_key(request: Any) -> bytes | None:
    after = getattr(request, "after_key_base64", None)
    return None if after is None else base64.b64decode(after.root)
