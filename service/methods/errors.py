"""The error catalogue: every error cause the service answers with, and how it is built.

Each cause fixes nearcore's top-level `name`, the legacy `code` and `message`, whether `cause`
carries an `info` member, and its HTTP status. Every cause has one constructor here, which
writes nearcore's texts for it. `RpcError.http_status(params)` applies the catalogue's status,
the UNKNOWN_BLOCK-by-height rule (422) included, so the HTTP room only reads it. Only
`nearrpc.http.wire` turns an RpcError into bytes.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from nearrpc.methods.blocks import BlockReference, height_of
from nearrpc.nearcore.echo import MESSAGE_CHARS, shown


class Cause(enum.StrEnum):
    """`error.cause.name` on the wire."""

    PARSE_ERROR = "PARSE_ERROR"
    METHOD_NOT_FOUND = "METHOD_NOT_FOUND"
    UNKNOWN_BLOCK = "UNKNOWN_BLOCK"
    NOT_SYNCED_YET = "NOT_SYNCED_YET"
    UNKNOWN_ACCOUNT = "UNKNOWN_ACCOUNT"
    UNKNOWN_ACCESS_KEY = "UNKNOWN_ACCESS_KEY"
    NO_CONTRACT_CODE = "NO_CONTRACT_CODE"
    CONTRACT_EXECUTION_ERROR = "CONTRACT_EXECUTION_ERROR"
    TOO_LARGE_CONTRACT_STATE = "TOO_LARGE_CONTRACT_STATE"
    UNAVAILABLE_SHARD = "UNAVAILABLE_SHARD"
    NO_SYNCED_BLOCKS = "NO_SYNCED_BLOCKS"
    UNKNOWN_CHUNK = "UNKNOWN_CHUNK"
    INVALID_SHARD_ID = "INVALID_SHARD_ID"
    UNKNOWN_TRANSACTION = "UNKNOWN_TRANSACTION"
    TIMEOUT_ERROR = "TIMEOUT_ERROR"
    UNKNOWN_RECEIPT = "UNKNOWN_RECEIPT"
    UNKNOWN_EPOCH = "UNKNOWN_EPOCH"
    VALIDATOR_INFO_UNAVAILABLE = "VALIDATOR_INFO_UNAVAILABLE"
    INVALID_TRANSACTION = "INVALID_TRANSACTION"
    DOES_NOT_TRACK_SHARD = "DOES_NOT_TRACK_SHARD"
    UNKNOWN_SNAPSHOT = "UNKNOWN_SNAPSHOT"
    INTERNAL_ERROR = "INTERNAL_ERROR"


ErrorName = Literal["REQUEST_VALIDATION_ERROR", "HANDLER_ERROR", "INTERNAL_ERROR"]


@dataclass(frozen=True, slots=True)
class ErrorKind:
    name: ErrorName  # top-level `name`
    cause: Cause
    code: int  # legacy JSON-RPC code
    message: str  # legacy JSON-RPC message
    has_info: bool  # unit variants (NOT_SYNCED_YET) carry no `info` at all
    http_status: int  # UNKNOWN_BLOCK answers 422 instead for a height below the head


CATALOGUE: Final[dict[Cause, ErrorKind]] = {
    kind.cause: kind
    for kind in (
        ErrorKind("REQUEST_VALIDATION_ERROR", Cause.PARSE_ERROR, -32700, "Parse error", True, 400),
        ErrorKind("REQUEST_VALIDATION_ERROR", Cause.METHOD_NOT_FOUND, -32601, "Method not found", True, 400),
        ErrorKind("HANDLER_ERROR", Cause.UNKNOWN_BLOCK, -32000, "Server error", True, 200),
        ErrorKind("HANDLER_ERROR", Cause.NOT_SYNCED_YET, -32000, "Server error", False, 200),
        ErrorKind("HANDLER_ERROR", Cause.UNKNOWN_ACCOUNT, -32000, "Server error", True, 200),
        ErrorKind("HANDLER_ERROR", Cause.UNKNOWN_ACCESS_KEY, -32000, "Server error", True, 200),
        ErrorKind("HANDLER_ERROR", Cause.NO_CONTRACT_CODE, -32000, "Server error", True, 200),
        ErrorKind("HANDLER_ERROR", Cause.CONTRACT_EXECUTION_ERROR, -32000, "Server error", True, 200),
        ErrorKind("HANDLER_ERROR", Cause.TOO_LARGE_CONTRACT_STATE, -32000, "Server error", True, 200),
        ErrorKind("HANDLER_ERROR", Cause.UNAVAILABLE_SHARD, -32000, "Server error", True, 200),
        ErrorKind("HANDLER_ERROR", Cause.NO_SYNCED_BLOCKS, -32000, "Server error", False, 200),
        ErrorKind("HANDLER_ERROR", Cause.UNKNOWN_CHUNK, -32000, "Server error", True, 200),
        ErrorKind("HANDLER_ERROR", Cause.INVALID_SHARD_ID, -32000, "Server error", True, 200),
        ErrorKind("HANDLER_ERROR", Cause.UNKNOWN_TRANSACTION, -32000, "Server error", True, 200),
        # chain/jsonrpc lib.rs rpc_handler: a handler's TIMEOUT_ERROR is HTTP 408
        ErrorKind("HANDLER_ERROR", Cause.TIMEOUT_ERROR, -32000, "Server error", False, 408),
        ErrorKind("HANDLER_ERROR", Cause.UNKNOWN_RECEIPT, -32000, "Server error", True, 200),
        ErrorKind("HANDLER_ERROR", Cause.UNKNOWN_EPOCH, -32000, "Server error", False, 200),
        ErrorKind("HANDLER_ERROR", Cause.VALIDATOR_INFO_UNAVAILABLE, -32000, "Server error", False, 200),
        # the writing methods (issue 45): nearcore's RpcTransactionError variants, and the
        # sandbox's own UNKNOWN_SNAPSHOT (sandbox_revert), shaped as UNKNOWN_TRANSACTION is
        ErrorKind("HANDLER_ERROR", Cause.INVALID_TRANSACTION, -32000, "Server error", True, 200),
        ErrorKind("HANDLER_ERROR", Cause.DOES_NOT_TRACK_SHARD, -32000, "Server error", False, 200),
        ErrorKind("HANDLER_ERROR", Cause.UNKNOWN_SNAPSHOT, -32000, "Server error", True, 200),
        ErrorKind("INTERNAL_ERROR", Cause.INTERNAL_ERROR, -32000, "Server error", True, 500),
    )
}

# Which causes each method answers with, beyond the request validation ones every method has.
# nearcore's view_account error enum also declares INVALID_ACCOUNT, but account ids are checked
# while parsing params (PARSE_ERROR), so no request reaches it there or here. genesis_config
# cannot fail on a node; here it answers INTERNAL_ERROR from a store that holds none.
METHOD_CAUSES: Final[dict[str, tuple[Cause, ...]]] = {
    "genesis_config": (Cause.INTERNAL_ERROR,),
    "client_config": (Cause.INTERNAL_ERROR,),
    "EXPERIMENTAL_protocol_config": (Cause.UNKNOWN_BLOCK, Cause.INTERNAL_ERROR),
    "EXPERIMENTAL_view_account": (Cause.UNKNOWN_BLOCK, Cause.UNKNOWN_ACCOUNT, Cause.INTERNAL_ERROR),
    "block": (Cause.UNKNOWN_BLOCK, Cause.NOT_SYNCED_YET, Cause.INTERNAL_ERROR),
    # beyond interface 1.2.14. status fails only when the store cannot fill a required member.
    "status": (Cause.INTERNAL_ERROR,),
    "gas_price": (Cause.UNKNOWN_BLOCK, Cause.INTERNAL_ERROR),
    # query's UNKNOWN_ACCESS_KEY is a result, not an error (nearcore's process_query_response);
    # UNAVAILABLE_SHARD answers the request types no stored data can answer.
    # A failed call_function is a result with an `error` text too. TOO_LARGE_CONTRACT_STATE:
    # view_state without pagination of a state over the node's trie_viewer_state_size_limit.
    "query": (
        Cause.UNKNOWN_BLOCK, Cause.NO_SYNCED_BLOCKS, Cause.UNKNOWN_ACCOUNT, Cause.NO_CONTRACT_CODE,
        Cause.TOO_LARGE_CONTRACT_STATE, Cause.UNAVAILABLE_SHARD, Cause.INTERNAL_ERROR,
    ),
    "EXPERIMENTAL_view_access_key": (Cause.UNKNOWN_BLOCK, Cause.UNKNOWN_ACCESS_KEY, Cause.INTERNAL_ERROR),
    "EXPERIMENTAL_view_access_key_list": (Cause.UNKNOWN_BLOCK, Cause.INTERNAL_ERROR),
    "EXPERIMENTAL_view_code": (
        Cause.UNKNOWN_BLOCK, Cause.UNKNOWN_ACCOUNT, Cause.NO_CONTRACT_CODE, Cause.INTERNAL_ERROR,
    ),
    # jsonrpc-primitives types/call_function.rs and view_state.rs: a failed call (no code
    # included: the VM's CodeDoesNotExist) is CONTRACT_EXECUTION_ERROR; UNAVAILABLE_SHARD
    # folds into INTERNAL_ERROR as for the views.
    "EXPERIMENTAL_call_function": (
        Cause.UNKNOWN_BLOCK, Cause.UNKNOWN_ACCOUNT, Cause.CONTRACT_EXECUTION_ERROR, Cause.INTERNAL_ERROR,
    ),
    "EXPERIMENTAL_view_state": (
        Cause.UNKNOWN_BLOCK, Cause.UNKNOWN_ACCOUNT, Cause.TOO_LARGE_CONTRACT_STATE, Cause.INTERNAL_ERROR,
    ),
    # the packaged OpenRPC document: nothing a store holds, so nothing to fail on
    "rpc.discover": (),
    # issue 30 (jsonrpc-primitives types/chunks.rs, transactions.rs, receipts.rs, validator.rs).
    # A chunk by block and shard: the block (UNKNOWN_BLOCK), the shard in its layout
    # (INVALID_SHARD_ID), then the chunk its header names (UNKNOWN_CHUNK).
    "chunk": (Cause.UNKNOWN_BLOCK, Cause.INVALID_SHARD_ID, Cause.UNKNOWN_CHUNK, Cause.INTERNAL_ERROR),
    # a transaction not stored: UNKNOWN_TRANSACTION for `wait_until` NONE, else TIMEOUT_ERROR
    # (what nearcore answers once its poll for it runs out)
    "tx": (Cause.UNKNOWN_TRANSACTION, Cause.TIMEOUT_ERROR, Cause.INTERNAL_ERROR),
    "EXPERIMENTAL_tx_status": (Cause.UNKNOWN_TRANSACTION, Cause.TIMEOUT_ERROR, Cause.INTERNAL_ERROR),
    "EXPERIMENTAL_receipt": (Cause.UNKNOWN_RECEIPT, Cause.INTERNAL_ERROR),
    # by block: VALIDATOR_INFO_UNAVAILABLE unless it is the last block of a finished epoch;
    # an unknown block or epoch (and the head, which has no next block) is UNKNOWN_EPOCH
    "validators": (Cause.UNKNOWN_EPOCH, Cause.VALIDATOR_INFO_UNAVAILABLE, Cause.INTERNAL_ERROR),
    "EXPERIMENTAL_validators_ordered": (Cause.UNKNOWN_EPOCH, Cause.INTERNAL_ERROR),
    # the server's store cannot be read: what GET /health answers with a 503
    "health": (Cause.INTERNAL_ERROR,),
    # jsonrpc-primitives types/changes.rs: GetBlock's errors, with the cause itself as `data`;
    # INTERNAL_ERROR also for a block whose rows are not known to be its changes (methods.changes).
    # SHARD_NOT_APPLIED (a coordinator's chunks not yet applied) never: a store holds applied blocks.
    "EXPERIMENTAL_changes_in_block": (Cause.UNKNOWN_BLOCK, Cause.NOT_SYNCED_YET, Cause.INTERNAL_ERROR),
    "EXPERIMENTAL_changes": (Cause.UNKNOWN_BLOCK, Cause.NOT_SYNCED_YET, Cause.INTERNAL_ERROR),
    "block_effects": (Cause.UNKNOWN_BLOCK, Cause.NOT_SYNCED_YET, Cause.INTERNAL_ERROR),
    "changes": (Cause.UNKNOWN_BLOCK, Cause.NOT_SYNCED_YET, Cause.INTERNAL_ERROR),
    # issue 45 (jsonrpc-primitives types/transactions.rs, sandbox.rs). A send to a read-only
    # server is DOES_NOT_TRACK_SHARD; a refused transaction INVALID_TRANSACTION; a wait that runs
    # out TIMEOUT_ERROR. broadcast_tx_async, as nearcore's, never reports a refusal.
    "send_tx": (Cause.INVALID_TRANSACTION, Cause.DOES_NOT_TRACK_SHARD, Cause.TIMEOUT_ERROR, Cause.INTERNAL_ERROR),
    "broadcast_tx_commit": (
        Cause.INVALID_TRANSACTION, Cause.DOES_NOT_TRACK_SHARD, Cause.TIMEOUT_ERROR, Cause.INTERNAL_ERROR,
    ),
    "broadcast_tx_async": (Cause.DOES_NOT_TRACK_SHARD, Cause.INTERNAL_ERROR),
    # without --sandbox these are METHOD_NOT_FOUND, a request validation cause every method has
    "sandbox_patch_state": (Cause.INTERNAL_ERROR,),
    "sandbox_fast_forward": (Cause.INTERNAL_ERROR,),
    "sandbox_snapshot": (Cause.INTERNAL_ERROR,),
    "sandbox_revert": (Cause.UNKNOWN_SNAPSHOT, Cause.INTERNAL_ERROR),
}  # fmt: skip
# The EXPERIMENTAL views: their UNKNOWN_BLOCK names the reference, their data is its Display text.
_VIEW_METHODS: Final = frozenset({
    "EXPERIMENTAL_view_account", "EXPERIMENTAL_view_access_key", "EXPERIMENTAL_view_access_key_list",
    "EXPERIMENTAL_view_code", "EXPERIMENTAL_call_function", "EXPERIMENTAL_view_state",
})  # fmt: skip
_UNOBSERVED_BLOCK: Final = "Block either has never been observed on the node or has been garbage collected: "

UNKNOWN_BLOCK_BELOW_HEAD_STATUS: Final = 422
_LIMITS_TEXT: Final = "The node reached its limits. Try again later. More details: "


class RpcError(Exception):
    """A JSON-RPC error on its way to the wire; build it with the constructors below."""

    def __init__(
        self, cause: Cause, info: dict[str, object] | None, data: str | dict[str, object], *,
        head_height: int | None = None,
    ) -> None:
        """`data`: the legacy member, a text (or, for UNKNOWN_RECEIPT, the cause as an object)."""
        super().__init__(f"{cause}: {data}")
        self.kind = CATALOGUE[cause]
        self.info = info if self.kind.has_info else None
        self.data = data
        self._head_height = head_height  # the optimistic head when an UNKNOWN_BLOCK was raised

    def http_status(self, params: object) -> int:
        """The HTTP status of this error in answer to a request with these raw `params`.

        nearcore answers UNKNOWN_BLOCK with 422 when the request's params object has a
        `block_id` member that is an integer below the head, whichever reference member
        decided the lookup, and with 200 for every other form (hashes, finality,
        checkpoints, the positional `[block_id]`, heights at or above the head). An integral
        float is the same integer here (see `height_of`).
        """
        if self.kind.cause is Cause.UNKNOWN_BLOCK and self._head_height is not None and isinstance(params, dict):
            height = height_of(params.get("block_id"))
            if height is not None and height < self._head_height:
                return UNKNOWN_BLOCK_BELOW_HEAD_STATUS
        return self.kind.http_status


def parse_error(message: str) -> RpcError:
    # the values a message repeats are cut where it is written; this bounds whatever is left
    message = shown(message, MESSAGE_CHARS)
    return RpcError(Cause.PARSE_ERROR, {"error_message": message}, message)


def method_not_found(method: str) -> RpcError:
    method = shown(method)  # nearcore repeats the whole name, twice
    return RpcError(Cause.METHOD_NOT_FOUND, {"method_name": method}, method)


def unknown_block(method: str, reference: BlockReference, db_message: str, head_height: int | None) -> RpcError:
    """No block for `reference` while the head is at `head_height` (None: no blocks);
    `db_message` is nearcore's store key text (e.g. BLOCK HEIGHT: 7)."""
    if method in _VIEW_METHODS:
        # jsonrpc-primitives types/view_*.rs: RpcView*Error::UnknownBlock's Display text
        data = _UNOBSERVED_BLOCK + reference.rust_debug()
        return RpcError(Cause.UNKNOWN_BLOCK, {"block_reference": reference.as_json()}, data, head_height=head_height)
    if method == "query":
        return RpcError(
            Cause.UNKNOWN_BLOCK, {"block_reference": reference.as_json()}, _query_unknown_block_data(reference),
            head_height=head_height,
        )
    if method == "EXPERIMENTAL_protocol_config":
        return RpcError(Cause.UNKNOWN_BLOCK, {}, f"Block Not Found: {db_message}", head_height=head_height)
    if method == "gas_price" and reference.kind == "block_id" and isinstance(reference.value, str):
        db_message = f"BLOCK HEADER: {reference.value}"  # the view client reads the header by hash
    data = f"DB Not Found Error: {db_message} \n Cause: Unknown"
    return RpcError(Cause.UNKNOWN_BLOCK, {}, data, head_height=head_height)


def _query_unknown_block_data(reference: BlockReference) -> str:
    """chain/jsonrpc lib.rs process_query_response: a block_id reference keeps the legacy
    "DB Not Found" text (a height with its cause, a hash without); others the Display text."""
    if reference.kind != "block_id":
        return _UNOBSERVED_BLOCK + reference.rust_debug()
    if isinstance(reference.value, int):
        return f"DB Not Found Error: BLOCK HEIGHT: {reference.value} \n Cause: Unknown"
    return f"DB Not Found Error: BLOCK HEADER: {reference.value}"


def not_synced_yet() -> RpcError:
    """`earliest_available` for `block` on a store without blocks."""
    return RpcError(Cause.NOT_SYNCED_YET, None, "There are no fully synchronized blocks yet")


def cause_as_data(error: RpcError) -> RpcError:
    """`error` as the changes methods send it (jsonrpc-primitives types/changes.rs): their legacy
    `data` is the cause itself as an object, e.g. {"name": "UNKNOWN_BLOCK", "info": {}}."""
    cause: dict[str, object] = {"name": str(error.kind.cause)}
    if error.kind.has_info:
        cause["info"] = error.info if error.info is not None else {}
    return RpcError(error.kind.cause, error.info, cause, head_height=error._head_height)


def unknown_account(account_id: str, block_height: int, block_hash: str) -> RpcError:
    return RpcError(
        Cause.UNKNOWN_ACCOUNT,
        {"requested_account_id": account_id, "block_height": block_height, "block_hash": block_hash},
        f"account {account_id} does not exist while viewing",
    )


def no_synced_blocks() -> RpcError:
    """query's `earliest_available` on a store without blocks (a unit variant: no `info`)."""
    return RpcError(Cause.NO_SYNCED_BLOCKS, None, "There are no fully synchronized blocks on the node yet")


def unknown_access_key(public_key: str, block_height: int, block_hash: str) -> RpcError:
    """The EXPERIMENTAL view's error (query answers a result instead, `unknown_access_key_result`)."""
    return RpcError(
        Cause.UNKNOWN_ACCESS_KEY,
        {"public_key": public_key, "block_height": block_height, "block_hash": block_hash},
        f"Access key for public key {public_key} has never been observed on the node",
    )


def no_contract_code(account_id: str, block_height: int, block_hash: str) -> RpcError:
    return RpcError(
        Cause.NO_CONTRACT_CODE,
        {"contract_account_id": account_id, "block_height": block_height, "block_hash": block_hash},
        f"Contract code for contract ID #{account_id} has never been observed on the node",
    )


def contract_execution_error(vm_error: object, vm_error_debug: str, block_height: int, block_hash: str) -> RpcError:
    """EXPERIMENTAL_call_function's failed call (jsonrpc-primitives types/call_function.rs):
    `vm_error` is the RpcFunctionCallError as JSON (e.g. {"MethodResolveError": "MethodNotFound"}),
    `vm_error_debug` its Rust Debug text, which `data` repeats. query answers a result instead
    (`queries.contract_execution_result`)."""
    return RpcError(
        Cause.CONTRACT_EXECUTION_ERROR,
        {"vm_error": vm_error, "block_height": block_height, "block_hash": block_hash},
        f"Function call returned an error: {vm_error_debug}",
    )


def too_large_contract_state(account_id: str, block_height: int, block_hash: str) -> RpcError:
    """view_state of an account whose storage (less its code) exceeds the node's
    trie_viewer_state_size_limit, asked without pagination (state_viewer view_state)."""
    return RpcError(
        Cause.TOO_LARGE_CONTRACT_STATE,
        {"contract_account_id": account_id, "block_height": block_height, "block_hash": block_hash},
        f"State of contract {account_id} is too large to be viewed",
    )


def unavailable_shard(shard_id: int) -> RpcError:
    """What a node answers for state of a shard it does not track: here, state the store does not
    hold (contract storage, function calls, global contracts)."""
    return RpcError(
        Cause.UNAVAILABLE_SHARD, {"requested_shard_id": shard_id}, f"The node does not track the shard ID {shard_id}"
    )


def account_not_held(method: str, account_id: str, shard_id: int) -> RpcError:
    """An account a recording of chosen accounts (or a fork's store) does not hold at the block
    asked (`store.held`): nearcore's answer
    for state of a shard the node does not track, which `query` gives as UNAVAILABLE_SHARD and
    the EXPERIMENTAL views fold into INTERNAL_ERROR with the same text; the reason is added."""
    text = (
        f"The node does not track the shard ID {shard_id} (this store is a recording of chosen accounts "
        f"and holds no state of {account_id} at this block; record it with `nearrpc import rpc --accounts`, "
        "or fetch it with `nearrpc serve --upstream`)"
    )
    if method == "query":
        return RpcError(Cause.UNAVAILABLE_SHARD, {"requested_shard_id": shard_id}, text)
    return internal_error(text)


def contract_state_not_held(method: str, account_id: str, shard_id: int) -> RpcError:
    """Contract state a recording could not get at this block (the node refused it as too large,
    or did not track the shard; `store.held`): answered as `account_not_held` is."""
    text = (
        f"The node does not track the shard ID {shard_id} (this store is a recording that could not get the "
        f"contract state of {account_id} at this block, or did not ask for it)"
    )
    if method == "query":
        return RpcError(Cause.UNAVAILABLE_SHARD, {"requested_shard_id": shard_id}, text)
    return internal_error(text)


def internal_error(error_message: str) -> RpcError:
    """A failure of the node itself (here: its store); `data` reads as nearcore's method errors do."""
    return RpcError(Cause.INTERNAL_ERROR, {"error_message": error_message}, _LIMITS_TEXT + error_message)


def unknown_chunk(chunk_hash: str) -> RpcError:
    """No chunk of that hash (asked by hash, or named by the block's header for the shard)."""
    return RpcError(
        Cause.UNKNOWN_CHUNK,
        {"chunk_hash": chunk_hash},
        f"Chunk Missing (unavailable on the node): ChunkHash(`{chunk_hash}`) \n Cause: Unknown",
    )


def invalid_shard_id(shard_id: int) -> RpcError:
    """A shard id that the block's shard layout does not have."""
    return RpcError(Cause.INVALID_SHARD_ID, {"shard_id": shard_id}, f"Shard id {shard_id} does not exist")


def unknown_transaction(tx_hash: str) -> RpcError:
    return RpcError(
        Cause.UNKNOWN_TRANSACTION, {"requested_transaction_hash": tx_hash}, f"Transaction {tx_hash} doesn't exist"
    )


def timeout_error() -> RpcError:
    """The transaction status asked for (`wait_until`) was not reached (a unit variant; HTTP 408)."""
    return RpcError(Cause.TIMEOUT_ERROR, None, "Timeout")


def view_call_timeout() -> RpcError:
    """A view call past its wall-clock deadline (`serve --view-call-timeout`). nearcore has no
    deadline of the call itself; what it answers when the view client does not answer a query in
    time (its AsyncSendError::Timeout, whose text is "Timeout") is query's INTERNAL_ERROR with
    that text (chain/jsonrpc api/query.rs, `RpcFrom<AsyncSendError> for RpcQueryError`)."""
    return internal_error("Timeout")


def unknown_receipt(receipt_id: str) -> RpcError:
    # types/receipts.rs: this error's legacy `data` is the cause itself, as an object
    info: dict[str, object] = {"receipt_id": receipt_id}
    return RpcError(Cause.UNKNOWN_RECEIPT, info, {"name": str(Cause.UNKNOWN_RECEIPT), "info": info})


def unknown_epoch() -> RpcError:
    return RpcError(Cause.UNKNOWN_EPOCH, None, "Unknown Epoch")


def validator_info_unavailable() -> RpcError:
    return RpcError(Cause.VALIDATOR_INFO_UNAVAILABLE, None, "Validator info unavailable")


def invalid_transaction(invalid_tx_error: Mapping[str, object] | str) -> RpcError:
    """A transaction nearcore refuses (jsonrpc-primitives types/transactions.rs, From<RpcTransactionError>
    for RpcError): the cause's `info` is empty (its `context` is skip_serializing) and the legacy
    `data` is ServerError::TxExecutionError(InvalidTxError(context)) as JSON, e.g.
    {"TxExecutionError": {"InvalidTxError": {"InvalidNonce": {"tx_nonce": 5, "ak_nonce": 7}}}}, or a
    unit variant by its name ({"InvalidTxError": "Expired"})."""
    context = invalid_tx_error if isinstance(invalid_tx_error, str) else dict(invalid_tx_error)
    data: dict[str, object] = {"TxExecutionError": {"InvalidTxError": context}}
    return RpcError(Cause.INVALID_TRANSACTION, {}, data)


# RpcTransactionError::DoesNotTrackShard's Display text, and why this server answers it
_DOES_NOT_TRACK_SHARD: Final = "Node doesn't track this shard. Cannot determine whether the transaction is valid"
_READ_ONLY_HINT: Final = " (this server is read-only: start it with `nearrpc serve --sandbox` to send transactions)"


def read_only_send() -> RpcError:
    """A transaction sent to a server without a sandbox chain: nearcore's answer of a node that
    cannot validate a transaction for the shard (a unit variant), with what to do about it."""
    return RpcError(Cause.DOES_NOT_TRACK_SHARD, None, _DOES_NOT_TRACK_SHARD + _READ_ONLY_HINT)


def unknown_snapshot(snapshot_id: str) -> RpcError:
    """sandbox_revert to an id no snapshot has (never given, or dropped by an earlier revert)."""
    snapshot_id = shown(snapshot_id)
    return RpcError(Cause.UNKNOWN_SNAPSHOT, {"snapshot_id": snapshot_id}, f"Snapshot {snapshot_id} doesn't exist")
