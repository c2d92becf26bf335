"""Contracts: EXPERIMENTAL_view_code, EXPERIMENTAL_call_function, EXPERIMENTAL_view_state (and
the same reads for `query`). A view call runs here (methods.view_calls.ViewRunner); where it
cannot, a `CallUpstream` answers it, and a `CallVerifier` may compare every local answer; the
handlers know neither as a fork's."""

from __future__ import annotations

import base64
from typing import Any

import orjson

from nearrpc.contracts import ExecutionInterrupted, GasCosts, HostFunctionUnavailable, ViewCallError, ViewContext
from nearrpc.contracts.errors import VM_ERROR_PREFIX
from nearrpc.contracts.errors import unavailable as vm_unavailable
from nearrpc.generated import models
from nearrpc.methods import errors
from nearrpc.methods.handlers.resolution import Resolution, keep, store_failures_are_internal
from nearrpc.methods.queries import (
    code_does_not_exist,
    code_hash_of,
    code_view,
    contract_code_hash,
    contract_execution_result,
    with_block,
)
from nearrpc.methods.view_calls import (
    BlockFacts,
    CallUpstream,
    CallVerifier,
    ViewCallMetrics,
    ViewRunner,
    block_facts,
    call_result,
    interrupted_error,
    state_page,
    state_result,
    view_context,
)
from nearrpc.methods.vm_errors import rpc_function_call_error
from nearrpc.store import ContractStateTooLarge, StoredBlock, seen_contract_state

# a listing without pagination reads every row under the prefix (the size limit bounds it)
_ALL_ROWS = 2**31 - 1
_KEPT_BLOCK_FACTS = 64  # blocks whose timestamp and chunks a view call has parsed
_KEPT_CODES = 16  # contract codes by hash (the one a hot contract's calls all read)
_KEPT_ACCOUNTS = 64  # called accounts' views by height (a hot contract's calls at the head read one)
_KEPT_TARGETS = 64  # what calls on an account at a block run with (a hot contract's calls at the head: one)
# what a call's code hash, context and costs are read from (the account, the block, its epoch's
# protocol, shard layout and height)
_TARGET_KINDS = frozenset({"accounts", "codes", "blocks", "epochs", "configs"})
# a call's code hash, its VMContext and its block's gas costs
_Target = tuple[str, ViewContext, GasCosts]


class ContractMethods(Resolution):
    def _init_contracts(
        self, call_upstream: CallUpstream | None, call_verifier: CallVerifier | None, metrics: ViewCallMetrics | None
    ) -> None:
        """`call_upstream`: who answers a view call that cannot run here; `call_verifier`: who
        compares every local answer; `metrics`: where calls and differences are counted."""
        self._call_upstream = call_upstream
        self._call_verifier = call_verifier
        self._metrics = metrics
        self._views = ViewRunner()
        # what view calls read of immutable things, parsed once: a block's timestamp and
        # chunks (by hash), a code (by hash), genesis's epoch length
        self._block_facts: dict[str, BlockFacts] = {}
        self._codes: dict[str, bytes] = {}
        self._called: dict[tuple[str, int], dict[str, Any]] = {}  # account views by (id, height)
        self._targets: dict[tuple[str, str], _Target] = {}  # what calls run with, by (account id, block hash)
        self._epoch_length: tuple[int, int] | None = None

    def _forget(self, changed: frozenset[str]) -> None:
        super()._forget(changed)
        if changed & {"epochs", "configs"}:
            self._epoch_length = None
        if "blocks" in changed:
            self._block_facts.clear()
        if "codes" in changed:
            self._codes.clear()
        if "accounts" in changed:
            self._called.clear()
        if changed & _TARGET_KINDS:
            self._targets.clear()

    def close(self) -> None:
        super().close()
        self._views.close()  # the view calls' worker threads

    @store_failures_are_internal
    async def EXPERIMENTAL_view_code(self, params: models.RpcViewCodeRequest) -> bytes:
        block = await self._view_block("EXPERIMENTAL_view_code", params)
        return await self._code(params.root.account_id.root, block, "EXPERIMENTAL_view_code")

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
        check_view_state_pages(request)
        block = await self._view_block("EXPERIMENTAL_view_state", params)
        prefix = base64.b64decode(request.prefix_base64.root)
        return await self._view_state(
            request.account_id.root,
            prefix,
            request.include_proof,
            block,
            "EXPERIMENTAL_view_state",
            after_key(request),
            request.limit,
        )

    async def _code(self, account_id: str, block: StoredBlock, method: str) -> bytes:
        code_hash = contract_code_hash(await self._account_view(account_id, block, method))
        if code_hash is None:
            raise errors.no_contract_code(account_id, block.height, block.hash)
        code = await self._reader.contract_code(code_hash)
        if code is None:
            if await self._chosen_only():  # a store of the accounts asked for (a fork's) never got it
                raise errors.account_not_held(method, account_id, await self._shard_id(account_id, block))
            # an account whose code hash names code the trie lacks (a patch's Account record before
            # its Contract record): nearcore's NoContractCode (runtime state_viewer
            # `view_account_contract_code`)
            raise errors.no_contract_code(account_id, block.height, block.hash)
        return with_block(code_view(code, code_hash), block.height, block.hash)

    # -- contract calls and state (runtime state_viewer call_function / view_state)

    async def _call_function(
        self, account_id: str, method_name: str, args: bytes, block: StoredBlock, method: str
    ) -> bytes:
        """A view call at `block` (runtime state_viewer `call_function`): the account first
        (UNKNOWN_ACCOUNT), then its code (none: the VM's CodeDoesNotExist), then the code run on
        the state as of the block. A failed run is a result with an `error` text for query, and
        CONTRACT_EXECUTION_ERROR for EXPERIMENTAL_call_function."""
        target = self._targets.get((account_id, block.hash))
        code = None if target is None else self._codes.get(target[0])
        if target is not None and code is not None:
            if not self._holds_every_account():  # a recording's marks may say otherwise at each request
                await self._check_state_held(account_id, block, method)
            code_hash, context, costs = target
        else:
            found = await self._call_target(account_id, block, method)
            if isinstance(found, bytes):
                return found
            code, (code_hash, context, costs) = found
        try:
            try:
                outcome = await self._views.run(self._reader, code, code_hash, method_name, args, context, costs)
            except HostFunctionUnavailable as missing:
                if self._call_upstream is not None:
                    raise
                # no upstream to ask: the VM's unknown error, a failed call rather than a 500
                raise ViewCallError(vm_unavailable(missing.name)) from None
        except ExecutionInterrupted as stopped:
            self._count("local", stopped.reason)
            raise interrupted_error(stopped.reason) from None
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
            # a state the reader will not list (a fork's upstream refused it): the upstream runs it
            if self._call_upstream is None:
                raise
            return await self._upstream_call(
                account_id, method_name, args, block, method, "state_too_large", str(too_large)
            )
        answer = call_result(outcome, block.height, block.hash)
        if self._call_verifier is not None:
            await self._verify(account_id, method_name, args, block, answer)
        self._count("local", "executed")
        return answer

    async def _call_target(self, account_id: str, block: StoredBlock, method: str) -> tuple[bytes, _Target] | bytes:
        """The code a call on `account_id` at `block` runs and what it runs with (the code's
        hash, the VMContext, the block's gas costs), kept for the next calls there (the code
        itself as the codes are); or the answer for an account with no code to run. The account
        first (UNKNOWN_ACCOUNT), then its code hash, the state held, its code."""
        # an account's view at a height changes only with a write of accounts (refresh drops it)
        account = self._called.get((account_id, block.height))
        if account is None:
            account = orjson.loads(await self._account_view(account_id, block, method))
            keep(self._called, (account_id, block.height), account, _KEPT_ACCOUNTS)
        code_hash = code_hash_of(account)
        if code_hash is None:
            return _no_code_to_call(account_id, block, method)
        await self._check_state_held(account_id, block, method)
        code = await self._contract_code(code_hash)
        if code is None and await self._chosen_only():  # as `_code`: a fork's store never got it
            raise errors.account_not_held(method, account_id, await self._shard_id(account_id, block))
        if code is None:
            # a code hash whose code the trie lacks (a patch's Account record before its Contract
            # record): the VM's CodeDoesNotExist, as for no code (runtime state_viewer
            # `call_function`: the pipeline gets no contract)
            return _no_code_to_call(account_id, block, method)
        shard_id = await self._shard_id(account_id, block)
        facts = self._block_facts.get(block.hash)
        if facts is None:
            facts = keep(self._block_facts, block.hash, block_facts(block), _KEPT_BLOCK_FACTS)
        validators = self._views.validators(self._reader, block.epoch_id)
        context = view_context(account_id, account, block, facts, shard_id, await self._epoch_height(block), validators)
        target = (code_hash, context, await self._gas_costs(block))
        return code, keep(self._targets, (account_id, block.hash), target, _KEPT_TARGETS)

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
        verbatim (a failed call, query's legacy error result, becomes EXPERIMENTAL_call_function's
        error), else nearcore's answer for a call its runtime could not complete
        (CallFunctionError's InternalError), saying why."""
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
        """With a verifier: the local answer (query's form) compared, a difference counted."""
        if self._call_verifier is not None and await self._call_verifier.differs(
            account_id, method_name, args, block, local
        ):
            if self._metrics is not None:
                self._metrics.difference()

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
        # seen whole under the prefix scanned, or under every prefix (a fork's marks)
        scanned = prefix if after_key is None else b""
        await self._check_state_held(
            account_id,
            block,
            method,
            seen_contract_state(account_id, scanned, block.height),
            seen_contract_state(account_id, b"", block.height),
        )
        if not paginated:
            size_limit = (await self._client_limits())[0]
            state_size = int(orjson.loads(account_view)["storage_usage"]) - await self._code_len(account_view)
            if size_limit is not None and state_size > size_limit:
                raise errors.too_large_contract_state(account_id, block.height, block.hash)
            rows = await self._reader.contract_state(account_id, prefix, block.height, _ALL_ROWS)
            return state_result(rows, None, block.height, block.hash)
        # resuming runs to the account's last key (nearcore's seek is bounded by the account only)
        scan_prefix = prefix if after_key is None else b""
        rows = await self._reader.contract_state(account_id, scan_prefix, block.height, _ALL_ROWS)
        items, last_key = state_page(account_id, rows, after_key, limit)
        return state_result(items, last_key, block.height, block.hash)

    async def _code_len(self, account_view: bytes) -> int:
        code_hash = contract_code_hash(account_view)
        code = None if code_hash is None else await self._reader.contract_code(code_hash)
        return 0 if code is None else len(code)

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
                keep(self._codes, code_hash, code, _KEPT_CODES)
        return code


def _no_code_to_call(account_id: str, block: StoredBlock, method: str) -> bytes:
    """A call on an account with no code to run: the VM's CodeDoesNotExist, a result with an
    `error` text for query, CONTRACT_EXECUTION_ERROR for EXPERIMENTAL_call_function."""
    vm_error, vm_error_debug = code_does_not_exist(account_id)
    if method == "query":
        return contract_execution_result(vm_error_debug, block.height, block.hash)
    raise errors.contract_execution_error(vm_error, vm_error_debug, block.height, block.hash)


def check_view_state_pages(request: Any) -> None:
    """The page arguments nearcore refuses while parsing a view_state request (jsonrpc
    `validate_view_state_pagination`), before any block is read: PARSE_ERROR."""
    after = after_key(request)
    if request.include_proof and (after is not None or request.limit is not None):
        raise errors.parse_error("include_proof is not supported with paginated view_state (after_key_base64 / limit)")
    if after is not None and not after.startswith(base64.b64decode(request.prefix_base64.root)):
        raise errors.parse_error("after_key_base64 must start with prefix_base64")


def after_key(request: Any) -> bytes | None:
    """The key a paginated view_state request resumes after (None: from the prefix)."""
    after = getattr(request, "after_key_base64", None)
    return None if after is None else base64.b64decode(after.root)
