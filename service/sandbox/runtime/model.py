"""What the runtime reads and returns: the contract between the runtime and the chain writer.

The chain writer hands the runtime the chain's state as of the parent block (`StateView`), the
block being applied (`BlockContext`) and what it applies (signed transactions as their borsh
bytes, receipts carried over from earlier blocks); the runtime returns everything the block
changed (`BlockResult`): views already in nearcore's JSON shapes, ready to be stored.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

# CryptoHash::default() in base58: an account without code.
NO_CODE_HASH = "11111111111111111111111111111111"


@dataclass(frozen=True, slots=True)
class FunctionCallPermission:
    """AccessKeyPermission::FunctionCall: allowance None means unlimited."""

    allowance: int | None
    receiver_id: str
    method_names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AccessKey:
    nonce: int
    permission: FunctionCallPermission | None  # None: FullAccess


@dataclass(frozen=True, slots=True)
class Account:
    """nearcore's Account (the fields AccountView shows, amounts in yoctoNEAR)."""

    amount: int
    locked: int
    code_hash: str  # base58; NO_CODE_HASH without code
    storage_usage: int


# core/primitives/src/action: the actions a transaction or receipt carries, decoded. Amounts
# and gas are ints; keys and signatures in their canonical text ("ed25519:<base58>").
@dataclass(frozen=True, slots=True)
class CreateAccount:
    pass


@dataclass(frozen=True, slots=True)
class DeployContract:
    code: bytes


@dataclass(frozen=True, slots=True)
class FunctionCall:
    method_name: str
    args: bytes
    gas: int
    deposit: int


@dataclass(frozen=True, slots=True)
class Transfer:
    deposit: int


@dataclass(frozen=True, slots=True)
class Stake:
    stake: int
    public_key: str


@dataclass(frozen=True, slots=True)
class AddKey:
    public_key: str
    access_key: AccessKey


@dataclass(frozen=True, slots=True)
class DeleteKey:
    public_key: str


@dataclass(frozen=True, slots=True)
class DeleteAccount:
    beneficiary_id: str


@dataclass(frozen=True, slots=True)
class DelegateAction:
    """NEP-366: what a relayer's Delegate action carries, signed by `sender_id`'s key."""

    sender_id: str
    receiver_id: str
    actions: tuple[NonDelegateAction, ...]
    nonce: int
    max_block_height: int
    public_key: str


@dataclass(frozen=True, slots=True)
class Delegate:
    delegate_action: DelegateAction
    signature: str


NonDelegateAction = (
    CreateAccount | DeployContract | FunctionCall | Transfer | Stake | AddKey | DeleteKey | DeleteAccount
)
Action = NonDelegateAction | Delegate


@dataclass(frozen=True, slots=True)
class Transaction:
    signer_id: str
    public_key: str
    nonce: int
    receiver_id: str
    block_hash: str  # base58
    actions: tuple[Action, ...]
    priority_fee: int | None = None  # Transaction::V1 only; None for V0


@dataclass(frozen=True, slots=True)
class SignedTransaction:
    transaction: Transaction
    signature: str
    hash: str  # base58 of SHA-256 of the transaction's borsh bytes
    size: int  # the signed transaction's borsh length (nearcore's size limit applies to it)


class StateView(Protocol):
    """The chain's state as of the parent block, read synchronously (on the chain writer's
    thread). The runtime layers its own writes over it; it never writes through this."""

    def account(self, account_id: str) -> Account | None: ...

    def access_key(self, account_id: str, public_key: str) -> AccessKey | None:
        """`public_key` in its canonical text ("ed25519:<base58>")."""
        ...

    def access_keys(self, account_id: str) -> list[tuple[str, AccessKey]]: ...

    def code(self, code_hash: str) -> bytes | None: ...

    def storage_read(self, account_id: str, key: bytes) -> bytes | None: ...

    def storage_keys(self, account_id: str) -> Iterator[bytes]:
        """Every key the account's contract holds (DeleteAccount removes them)."""
        ...


@dataclass(frozen=True, slots=True)
class BlockContext:
    """The block being applied."""

    height: int
    block_hash: str  # base58 of the block being applied (receipt ids are derived from it)
    prev_block_hash: str
    timestamp_ns: int
    epoch_id: str
    epoch_height: int
    gas_price: int  # the block's gas price (what its receipts are charged at)
    protocol_version: int
    # The EXPERIMENTAL_protocol_config result of the block's epoch (runtime_config inside it:
    # fees, wasm limits, storage_amount_per_byte, account creation rules).
    protocol_config: Mapping[str, Any]
    random_seed: bytes  # 32 bytes, what `random_seed` answers a contract
    chain_id: str
    shard_of: Any  # Callable[[str], int]: an account's shard id under the chain's shard layout


@dataclass(frozen=True, slots=True)
class Receipt:
    """A receipt waiting to be applied in a later block: its ReceiptView JSON (predecessor_id,
    receiver_id, receipt_id, receipt, priority) and the block height it was produced at.
    `actions` are its actions decoded (the runtime's own, handed back as it gave them): a view
    cannot always rebuild them, since nearcore's ActionView shows a DeployContract's code only by
    its hash; empty, they are read from the view."""

    view: Mapping[str, Any]
    produced_at: int
    actions: tuple[Action, ...] = ()
    # a PromiseYield receipt's timeout: the height from which a Failed resume is sent to it
    # (runtime function_call.rs `enqueue_promise_yield_timeout`); None for any other receipt
    expires_at: int | None = None


@dataclass(slots=True)
class StateChanges:
    """Everything a block wrote, last write wins; None deletes."""

    accounts: dict[str, Account | None] = field(default_factory=dict)
    access_keys: dict[tuple[str, str], AccessKey | None] = field(default_factory=dict)
    codes: dict[str, bytes] = field(default_factory=dict)  # code hash → wasm (new code only)
    data: dict[tuple[str, bytes], bytes | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Committed:
    """One commit of the runtime's writes, as nearcore's TrieUpdate::commit records it (core/store
    trie/update.rs: each key the commit wrote gets one more (cause, value) in the block's state
    changes): `cause` is the StateChangeCauseView JSON, the rest what it wrote, None deleting.
    `codes` is the ContractCode key: an account's code, by account (a deployment, or its
    deletion with the account)."""

    cause: Mapping[str, str]
    accounts: Mapping[str, Account | None]
    access_keys: Mapping[tuple[str, str], AccessKey | None]
    codes: Mapping[str, bytes | None]
    data: Mapping[tuple[str, bytes], bytes | None]


@dataclass(frozen=True, slots=True)
class TransactionApplied:
    """A transaction converted to its receipt in this block."""

    tx_hash: str
    signer_id: str
    shard_id: int  # the signer's shard
    view: Mapping[str, Any]  # SignedTransactionView
    outcome: Mapping[str, Any]  # ExecutionOutcomeWithIdView of the conversion


@dataclass(frozen=True, slots=True)
class ReceiptApplied:
    """A receipt executed in this block."""

    receipt_id: str
    shard_id: int  # the receiver's shard
    view: Mapping[str, Any]  # ReceiptView
    outcome: Mapping[str, Any]  # ExecutionOutcomeWithIdView


@dataclass(frozen=True, slots=True)
class BlockResult:
    transactions: Sequence[TransactionApplied]  # in the order applied
    receipts: Sequence[ReceiptApplied]  # executed here, in nearcore's order
    outgoing: Sequence[Receipt]  # produced here, to be applied in the next block
    changes: StateChanges
    gas_burnt: int  # per shard totals are the chain writer's sum over outcomes
    # what left the total supply: the outcomes' tokens burnt, less what contracts earned of
    # them (burnt_gas_reward), plus the deposits of refunds that failed (lib.rs `ApplyStats`)
    tokens_burnt: int
    # every commit in the order made (what the changes methods list, each with its cause); empty
    # from a runtime that does not tell them
    commits: Sequence[Committed] = ()
    # what waits in the state for the next blocks (lib.rs `process_receipt`'s postponed receipts
    # and received data): action receipts whose input data has not all arrived, and data receipts
    # that arrived before the receipt waiting for them. Handed back to the next apply_block as
    # `waiting`; never part of a chunk, and no outcome of their own until they run
    waiting: Sequence[Receipt] = ()


class TransactionRefused(Exception):
    """A transaction nearcore refuses before it is included: `error` is the
    `InvalidTxError` JSON (e.g. {"InvalidNonce": {"tx_nonce": 5, "ak_nonce": 7}}, or a unit
    variant's name as a string: "InvalidSignature", "Expired", "CostOverflow"), as nearcore
    puts it under `TxExecutionError.InvalidTxError`."""

    def __init__(self, error: Mapping[str, Any] | str) -> None:
        if not isinstance(error, str) and len(error) == 1 and next(iter(error.values())) is None:
            error = next(iter(error))  # {"Expired": None}: serde writes a unit variant as its name
        super().__init__(error if isinstance(error, str) else next(iter(error), "InvalidTransaction"))
        self.error = error


class TransactionUndecodable(Exception):
    """Signed bytes that are no borsh SignedTransaction: the message is borsh's error text as
    nearcore prints it (e.g. "Unexpected length of input"). nearcore refuses them while parsing
    the request (chain/jsonrpc api/transactions.rs decode_signed_transaction), so the writing
    methods answer PARSE_ERROR "Failed to decode transaction: <message>"."""


class Runtime(Protocol):
    """What the chain writer calls (implemented by `runtime.apply`)."""

    def check_transaction(self, state: StateView, context: BlockContext, signed: bytes) -> TransactionApplied:
        """Decode and validate one signed transaction against the state the next block will be
        applied on, as nearcore checks it when it arrives; raises TransactionRefused. Returns
        what its inclusion would record (`outcome` is a placeholder until applied)."""
        ...

    def apply_block(
        self,
        state: StateView,
        context: BlockContext,
        transactions: Sequence[bytes],
        receipts: Sequence[Receipt],
        waiting: Sequence[Receipt] = (),
    ) -> BlockResult:
        """Apply a block: the receipts carried over first (nearcore's order: local, delayed,
        incoming), then the transactions, each validated again (a refused one is dropped, as a
        chunk producer drops it). Local receipts (signer == receiver) run in this block.
        `waiting`: the previous block's BlockResult.waiting."""
        ...
