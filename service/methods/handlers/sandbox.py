"""The writing methods (issue 45): send_tx, broadcast_tx_commit, broadcast_tx_async, and the
sandbox's sandbox_patch_state, sandbox_fast_forward, sandbox_snapshot, sandbox_revert.

They hand the work to the sandbox chain (`sandbox_hooks.SandboxChain`, given by `serve
--sandbox`) and answer from the store like every read: a send waits for the status asked and
is answered by the same composition as `tx` (`transactions.transaction_answer`). As nearcore's
(chain/jsonrpc lib.rs `send_tx`, `send_tx_commit`, `send_tx_async`): NONE and broadcast_tx_async
answer at once and never report a refusal; broadcast_tx_commit waits for EXECUTED_OPTIMISTIC; a
refusal is INVALID_TRANSACTION; a wait that runs out (nearcore polls for 10 s) TIMEOUT_ERROR.
Without a chain a send is DOES_NOT_TRACK_SHARD with a hint, and the sandbox methods are
METHOD_NOT_FOUND, as on a node built without nearcore's `sandbox` feature.
"""

from __future__ import annotations

import base64
from typing import Any, Final

import based58
import orjson

from nearrpc.generated import models
from nearrpc.methods import errors
from nearrpc.methods.blocks import BlockReference, UnknownBlock, resolve
from nearrpc.methods.handlers.resolution import Resolution, store_failures_are_internal
from nearrpc.methods.sandbox_hooks import PatchRefused, SandboxChain
from nearrpc.methods.transactions import (
    EXECUTED_OPTIMISTIC,
    INCLUDED,
    INCLUDED_FINAL,
    NONE,
    TransactionRequest,
    transaction_answer,
)
from nearrpc.nearcore.transaction import signed_transaction_hash
from nearrpc.sandbox.runtime.model import TransactionRefused, TransactionUndecodable
from nearrpc.store import StoredBlock

# chain/jsonrpc RpcPollingConfig: how long nearcore polls for the status a send asked for
SEND_WAIT_SECONDS: Final = 10.0
_SENT_NOT_WAITED: Final = b'{"final_execution_status":"NONE"}'
_FINAL: Final = BlockReference("finality", "final")


class SandboxMethods(Resolution):
    def _init_sandbox(self, sandbox: SandboxChain | None) -> None:
        """`sandbox`: the chain that takes transactions (None: a read-only server)."""
        self._sandbox = sandbox

    @store_failures_are_internal
    async def send_tx(self, params: models.RpcSendTransactionRequest) -> bytes:
        signed, wait_until, positional = _send_request(params)
        return await self._send(signed, wait_until, positional)

    @store_failures_are_internal
    async def broadcast_tx_commit(self, params: models.RpcSendTransactionRequest) -> bytes:
        signed, _ignored, positional = _send_request(params)  # lib.rs send_tx_commit: its own wait
        return await self._send(signed, EXECUTED_OPTIMISTIC, positional)

    @store_failures_are_internal
    async def broadcast_tx_async(self, params: models.RpcSendTransactionRequest) -> bytes:
        signed, _ignored, positional = _send_request(params)
        chain = self._chain_for_sends()
        try:
            tx_hash = await chain.submit(signed)
        except TransactionUndecodable as problem:
            raise _undecodable(str(problem), positional) from None
        except TransactionRefused as refused:
            # lib.rs send_tx_async: the hash of what was sent, the refusal unsaid
            digest = signed_transaction_hash(signed)
            if digest is None:  # not reached: bytes the runtime decoded end in a signature
                raise errors.invalid_transaction(refused.error) from None
            tx_hash = based58.b58encode(digest).decode("ascii")
        return orjson.dumps(tx_hash)

    @store_failures_are_internal
    async def sandbox_patch_state(self, params: models.RpcSandboxPatchStateRequest) -> bytes:
        chain = self._chain_for("sandbox_patch_state")
        # as sent: members the client left out stay out (the model's defaults are not nearcore's)
        records = [record.model_dump(mode="json", exclude_unset=True) for record in params.records]
        try:
            await chain.patch_state(records)
        except PatchRefused as refused:  # a value serde would refuse (a u128 too big) or the store cannot hold
            raise errors.parse_error(f"Failed parsing args: {refused}") from None
        return b"{}"  # types/sandbox.rs RpcSandboxPatchStateResponse {}

    @store_failures_are_internal
    async def sandbox_fast_forward(self, params: models.RpcSandboxFastForwardRequest) -> bytes:
        await self._chain_for("sandbox_fast_forward").fast_forward(params.delta_height)
        return b"{}"  # types/sandbox.rs RpcSandboxFastForwardResponse {}

    @store_failures_are_internal
    async def sandbox_snapshot(self, params: models.RpcSandboxSnapshotRequest) -> bytes:
        snapshot_id = await self._chain_for("sandbox_snapshot").snapshot()
        return orjson.dumps({"snapshot_id": snapshot_id})

    @store_failures_are_internal
    async def sandbox_revert(self, params: models.RpcSandboxRevertRequest) -> bytes:
        chain = self._chain_for("sandbox_revert")
        try:
            await chain.revert(params.snapshot_id)
        except KeyError:
            raise errors.unknown_snapshot(params.snapshot_id) from None
        return b"{}"

    async def _send(self, signed: bytes, wait_until: str, positional: bool) -> bytes:
        chain = self._chain_for_sends()
        try:
            tx_hash = await chain.submit(signed)
        except TransactionUndecodable as problem:
            raise _undecodable(str(problem), positional) from None
        except TransactionRefused as refused:
            if wait_until == NONE:
                return _SENT_NOT_WAITED  # lib.rs send_tx: NONE is sent as send_tx_async is, unchecked
            raise errors.invalid_transaction(refused.error) from None
        if wait_until == NONE:
            return _SENT_NOT_WAITED
        reached = await chain.wait(tx_hash, wait_until, SEND_WAIT_SECONDS)
        if reached in (INCLUDED, INCLUDED_FINAL) and wait_until in (INCLUDED, reached):
            # included, its receipts not all executed: the store holds it only once they are. nearcore
            # answers such a transaction without an outcome (view_client_actor.rs get_tx_status, where
            # the execution outcome is not there yet): its status alone
            if await self._reader.transaction(tx_hash, "") is None:
                return orjson.dumps({"final_execution_status": reached})
        # the status reached, as `tx` answers it: the store's final block now, not the one kept
        # for this request (the chain wrote blocks while it waited)
        final = await self._final_block_now()
        request = TransactionRequest(tx_hash, "", wait_until)  # found by its hash alone
        return await transaction_answer(self._reader, request, final, with_receipts=False)

    async def _final_block_now(self) -> StoredBlock | None:
        try:
            return await resolve(self._reader, _FINAL)
        except UnknownBlock:
            return None

    def _chain_for_sends(self) -> SandboxChain:
        if self._sandbox is None:
            raise errors.read_only_send()
        return self._sandbox

    def _chain_for(self, method: str) -> SandboxChain:
        if self._sandbox is None:  # lib.rs: sandbox_* exist only in a node built with `sandbox`
            raise errors.method_not_found(method)
        return self._sandbox


def _send_request(params: models.RpcSendTransactionRequest) -> tuple[bytes, str, bool]:
    """The signed transaction's bytes, the status to wait for, and whether it came as the
    positional `[signed_tx_base64]` (whose refusals nearcore words differently)."""
    request: Any = params.root
    if isinstance(request, models.RpcSendTransactionRequest1):
        return base64.b64decode(request.signed_tx_base64.root), str(request.wait_until.root), False
    (signed,) = request.root
    return base64.b64decode(signed.root), EXECUTED_OPTIMISTIC, True


def _undecodable(message: str, positional: bool) -> errors.RpcError:
    """Bytes that are no SignedTransaction, as nearcore refuses them while parsing: the array form
    by api/transactions.rs decode_signed_transaction, the object form by SignedTransaction's serde."""
    if positional:
        return errors.parse_error(f"Failed to decode transaction: {message}")
    return errors.parse_error(f"Failed parsing args: the value could not decoded from borsh due to: {message}")
