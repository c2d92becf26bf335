"""A small chain for the runtime's tests: state in memory, a block context at protocol 84 (the
sample chain's genesis) or any other version, from the packaged parameter store, ed25519
signers, signed transactions, and a loop that applies blocks until no receipt is left."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import based58
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from nearrpc.contracts import GasCosts, ViewContext, run_view
from nearrpc.nearcore.transaction import transaction_bytes
from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.sandbox.runtime.apply import SandboxRuntime
from nearrpc.sandbox.runtime.model import (
    NO_CODE_HASH,
    AccessKey,
    Account,
    Action,
    BlockContext,
    BlockResult,
    DeployContract,
    Receipt,
    SignedTransaction,
    StateChanges,
    Transaction,
)
from nearrpc.sandbox.runtime.views import action_view
from tests.conftest import reference_dir

K = TypeVar("K")
V = TypeVar("V")
PROTOCOL_VERSION = 84
GAS_PRICE = 100_000_000
NEAR = 10**24
_STORE = RuntimeParamStore.load()
RUNTIME_CONFIG: dict[str, Any] = _STORE.nearcore_view(PROTOCOL_VERSION, "testnet")
FEES = RUNTIME_CONFIG["transaction_costs"]


def runtime_config(protocol_version: int) -> dict[str, Any]:
    """The RuntimeConfigView of a protocol version, as EXPERIMENTAL_protocol_config shows it."""
    return _STORE.nearcore_view(protocol_version, "testnet")


def fee(name: str, kind: str = "execution") -> int:
    return int(FEES["action_creation_config"][name][kind])


RECEIPT_FEE = FEES["action_receipt_creation_config"]


class MemoryState:
    """model.StateView over dicts; `apply` writes a block's changes in."""

    def __init__(self) -> None:
        self.accounts: dict[str, Account] = {}
        self.keys: dict[tuple[str, str], AccessKey] = {}
        self.codes: dict[str, bytes] = {}
        self.data: dict[tuple[str, bytes], bytes] = {}

    def account(self, account_id: str) -> Account | None:
        return self.accounts.get(account_id)

    def access_key(self, account_id: str, public_key: str) -> AccessKey | None:
        return self.keys.get((account_id, public_key))

    def access_keys(self, account_id: str) -> list[tuple[str, AccessKey]]:
        return sorted((key, value) for (owner, key), value in self.keys.items() if owner == account_id)

    def code(self, code_hash: str) -> bytes | None:
        return self.codes.get(code_hash)

    def storage_read(self, account_id: str, key: bytes) -> bytes | None:
        return self.data.get((account_id, key))

    def storage_keys(self, account_id: str) -> Iterator[bytes]:
        return iter(sorted(key for owner, key in self.data if owner == account_id))

    def apply(self, changes: StateChanges) -> None:
        for account_id, account in changes.accounts.items():
            _put(self.accounts, account_id, account)
        for key, access_key in changes.access_keys.items():
            _put(self.keys, key, access_key)
        for data_key, value in changes.data.items():
            _put(self.data, data_key, value)
        self.codes.update(changes.codes)


def _put(store: dict[K, V], key: K, value: V | None) -> None:
    if value is None:
        store.pop(key, None)
    else:
        store[key] = value


@dataclass
class Signer:
    account_id: str
    secret: Ed25519PrivateKey = field(default_factory=Ed25519PrivateKey.generate)
    nonce: int = 0

    @property
    def public_key(self) -> str:
        raw = self.secret.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        return "ed25519:" + based58.b58encode(raw).decode()

    def sign(self, receiver_id: str, actions: Sequence[Action], block_hash: str) -> SignedTransaction:
        self.nonce += 1
        views = [_borsh_view(action) for action in actions]
        raw = transaction_bytes(
            signer_id=self.account_id,
            public_key=self.public_key,
            nonce=self.nonce,
            receiver_id=receiver_id,
            block_hash=block_hash,
            actions=views,
        )
        digest = hashlib.sha256(raw).digest()
        signature = "ed25519:" + based58.b58encode(self.secret.sign(digest)).decode()
        tx = Transaction(self.account_id, self.public_key, self.nonce, receiver_id, block_hash, tuple(actions))
        return SignedTransaction(tx, signature, based58.b58encode(digest).decode(), len(raw) + 65)


def _borsh_view(action: Action) -> Any:
    if isinstance(action, DeployContract):  # the borsh writer wants the code, not its hash
        return {"DeployContract": {"code": base64.b64encode(action.code).decode()}}
    return action_view(action)


def _hash(label: str) -> str:
    return based58.b58encode(hashlib.sha256(label.encode()).digest()).decode()


class Chain:
    """Blocks applied one after the other over a MemoryState, each carrying the receipts the
    previous one made."""

    def __init__(self, protocol_version: int = PROTOCOL_VERSION, gas_price: int = GAS_PRICE) -> None:
        self.protocol_version = protocol_version
        self.gas_price = gas_price
        self.config = runtime_config(protocol_version)
        self.state = MemoryState()
        self.runtime = SandboxRuntime()
        self.height = 100
        self.pending: list[Receipt] = []
        self.waiting: list[Receipt] = []
        self.results: list[BlockResult] = []

    def add_account(self, signer: Signer, amount: int, storage_usage: int = 182) -> None:
        self.state.accounts[signer.account_id] = Account(amount, 0, NO_CODE_HASH, storage_usage)
        self.state.keys[(signer.account_id, signer.public_key)] = AccessKey(nonce=0, permission=None)

    def context(self) -> BlockContext:
        return BlockContext(
            height=self.height,
            block_hash=_hash(f"block {self.height}"),
            prev_block_hash=_hash(f"block {self.height - 1}"),
            timestamp_ns=1_700_000_000_000_000_000 + self.height,
            epoch_id=_hash("epoch"),
            epoch_height=1,
            gas_price=self.gas_price,
            protocol_version=self.protocol_version,
            protocol_config={"runtime_config": self.config, "chain_id": "sandbox"},
            random_seed=bytes(32),
            chain_id="sandbox",
            shard_of=lambda _account_id: 0,
        )

    @property
    def block_hash(self) -> str:
        return _hash(f"block {self.height - 1}")

    def block(self, transactions: Sequence[SignedTransaction] = ()) -> BlockResult:
        result = self.runtime.apply_decoded(self.state, self.context(), transactions, self.pending, self.waiting)
        self.state.apply(result.changes)
        self.pending = list(result.outgoing)
        self.waiting = list(result.waiting)
        self.results.append(result)
        self.height += 1
        return result

    def run(self, transactions: Sequence[SignedTransaction]) -> list[BlockResult]:
        """The block with `transactions`, then blocks until no receipt is left."""
        blocks = [self.block(transactions)]
        while self.pending:
            blocks.append(self.block())
        return blocks


def block_hash(height: int) -> str:
    """The hash Chain gives the block at `height`."""
    return _hash(f"block {height}")


def outcomes(blocks: Sequence[BlockResult]) -> list[dict[str, Any]]:
    """Every outcome of the blocks: transactions', then receipts', block by block."""
    found: list[dict[str, Any]] = []
    for block in blocks:
        found.extend(dict(applied.outcome) for applied in block.transactions)
        found.extend(dict(applied.outcome) for applied in block.receipts)
    return found


def burnt(blocks: Sequence[BlockResult]) -> int:
    return sum(int(outcome["outcome"]["tokens_burnt"]) for outcome in outcomes(blocks))


def reference_contract(name: str) -> bytes:
    path = reference_dir() / "contracts" / name
    if not path.is_file():
        pytest.skip(f"{path} not found (set NEARRPC_REFERENCE_DIR)")
    return path.read_bytes()


class _Reader:
    def __init__(self, state: MemoryState, account_id: str) -> None:
        self.state, self.account_id = state, account_id

    def storage_read(self, key: bytes) -> bytes | None:
        return self.state.storage_read(self.account_id, key)


def view(chain: Chain, account_id: str, method: str, args: object = None) -> object:
    account = chain.state.accounts[account_id]
    context = ViewContext(
        account_id, chain.height, 0, 1, account.amount, account.locked, account.storage_usage, bytes(32)
    )
    raw = b"" if args is None else json.dumps(args).encode()
    code = chain.state.codes[account.code_hash]
    costs = GasCosts.from_protocol_config({"runtime_config": chain.config})
    outcome = run_view(code, account.code_hash, method, raw, context, _Reader(chain.state, account_id), costs)
    return json.loads(outcome.result)
