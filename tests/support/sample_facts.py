"""Facts about the sample chain for tests, read off the generated data.

Nothing here repeats the generator's plan: every value is computed from the blocks,
epochs and account states the generator produced, so a change to the plan shows up here
by itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson

from nearrpc.nearcore.views import ZERO_HASH
from nearrpc.sample import ContractDataRow, SampleChain, sample_chain, scenario


@dataclass(frozen=True, slots=True)
class EpochFacts:
    index: int  # 0 for the epoch opened by the genesis block
    epoch_id: str
    protocol_version: int
    first_height: int  # height of its first block
    last_height: int  # height of its last stored block
    block_count: int


@dataclass(frozen=True, slots=True)
class TxFacts:
    tx_hash: str
    signer_id: str
    receiver_id: str
    public_key: str
    nonce: int
    height: int  # of the block whose chunk included it
    block_hash: str
    shard_id: int
    actions: tuple[str, ...]  # the action kinds, e.g. ("FunctionCall",)
    method_name: str | None  # its function call's method, if any
    receipt_ids: tuple[str, ...]  # every receipt it led to: its action receipt first, then refunds
    final_execution_status: str


@dataclass(frozen=True, slots=True)
class ChunkFacts:
    chunk_hash: str
    height: int  # height_included (= height_created: every chunk is new in its block)
    block_hash: str
    shard_id: int
    tx_hashes: tuple[str, ...]
    receipt_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SampleFacts:
    chain_id: str
    genesis_height: int
    genesis_hash: str
    genesis_protocol_version: int  # genesis_config.protocol_version
    latest_protocol_version: int  # what the block headers carry
    protocol_versions: tuple[int, ...]  # distinct epoch protocol versions, ascending
    first_upgraded_height: int  # first block whose epoch runs the highest version
    epoch_length: int
    head_height: int
    head_hash: str
    near_final_height: int  # the head's last_ds_final_block
    near_final_hash: str
    final_height: int  # the head's last_final_block
    final_hash: str
    block_heights: tuple[int, ...]
    skipped_heights: tuple[int, ...]  # heights between genesis and head without a block
    epochs: tuple[EpochFacts, ...]
    shard_ids: tuple[int, ...]
    boundary_accounts: tuple[str, ...]
    missing_chunks: tuple[tuple[int, int], ...]  # (block height, shard id), chunk_mask false
    validators: tuple[str, ...]
    treasury_account: str
    registrar_account: str
    contract_account: str  # the counter: the contract whose state has the key b"STATE"
    contract_code_hash: str
    token_account: str  # the fungible token: the contract whose state has the key b"t" (total supply)
    token_code_hash: str
    contract_data: tuple[ContractDataRow, ...]  # every contract state row, ascending height
    global_contract_accounts: tuple[str, ...]  # views with global_contract_* members
    implicit_accounts: tuple[str, ...]  # 64-hex-character account ids
    accounts_at_genesis: tuple[str, ...]
    all_accounts: tuple[str, ...]
    created_accounts: tuple[tuple[str, int], ...]  # (account, height) created after genesis
    deleted_accounts: tuple[tuple[str, int], ...]  # (account, height of deletion)
    state_heights: tuple[tuple[str, tuple[int, ...]], ...]  # heights with a state row
    total_supply_at_genesis: int
    min_gas_price_seen: int
    max_gas_price_seen: int
    transactions: tuple[TxFacts, ...]  # ascending height, then shard, then order in the chunk
    chunks: tuple[ChunkFacts, ...]  # every new chunk (genesis's included), ascending height, then shard
    receipt_ids: tuple[str, ...]  # every executed receipt
    refund_receipt_ids: tuple[str, ...]  # receipts from "system": gas refunds and deleted accounts' balances
    validator_epochs: tuple[tuple[str, int], ...]  # (epoch id, height its `validators` record counts to)

    def transaction(self, *, action: str, method_name: str | None = None) -> TxFacts:
        """The first transaction with this action kind (and function call method)."""
        for tx in self.transactions:
            if action in tx.actions and (method_name is None or tx.method_name == method_name):
                return tx
        raise LookupError(f"no sample transaction with {action} {method_name or ''}")

    def chunk(self, chunk_hash: str) -> ChunkFacts:
        return next(c for c in self.chunks if c.chunk_hash == chunk_hash)

    def busiest_chunk(self) -> ChunkFacts:
        """The chunk with the most transactions (the first of them)."""
        return max(self.chunks, key=lambda c: len(c.tx_hashes))

    def created_at(self, account_id: str) -> int | None:
        return dict(self.created_accounts).get(account_id)

    def deleted_at(self, account_id: str) -> int | None:
        return dict(self.deleted_accounts).get(account_id)

    def change_heights(self, account_id: str) -> tuple[int, ...]:
        """Heights at which the account's state was written (genesis included)."""
        return dict(self.state_heights).get(account_id, ())

    def contract_value(self, account_id: str, key: bytes, height: int) -> bytes | None:
        """The value of a contract's storage key as of the block at `height` (None: absent)."""
        value = None
        for row in self.contract_data:
            if row.account_id == account_id and row.key == key and row.height <= height:
                value = row.value
        return value

    def contract_change_heights(self, account_id: str, key: bytes) -> tuple[int, ...]:
        """Heights at which a contract's storage key was written or removed."""
        return tuple(r.height for r in self.contract_data if r.account_id == account_id and r.key == key)

    def epoch_at(self, height: int) -> EpochFacts:
        """The epoch of the block at `height` (or of the height, if skipped)."""
        for epoch in reversed(self.epochs):
            if epoch.first_height <= height:
                return epoch
        raise ValueError(f"height {height} is below genesis")


def _view(json_bytes: bytes) -> dict[str, Any]:
    value: dict[str, Any] = orjson.loads(json_bytes)
    return value


def derive_facts(chain: SampleChain) -> SampleFacts:
    genesis_config = _view(chain.genesis_config_json)
    views = [_view(block.view_json) for block in chain.blocks]
    headers = [view["header"] for view in views]
    by_hash = {header["hash"]: header for header in headers}
    heights = tuple(header["height"] for header in headers)
    genesis, head = headers[0], headers[-1]

    versions = {epoch.epoch_id: epoch.protocol_version for epoch in chain.epochs}
    epochs: list[EpochFacts] = []
    for index, epoch in enumerate(chain.epochs):
        members = [h["height"] for h in headers if h["epoch_id"] == epoch.epoch_id]
        epochs.append(
            EpochFacts(
                index=index,
                epoch_id=epoch.epoch_id,
                protocol_version=epoch.protocol_version,
                first_height=min(members),
                last_height=max(members),
                block_count=len(members),
            )
        )
    top_version = max(versions.values())
    first_upgraded = min(e.first_height for e in epochs if e.protocol_version == top_version)

    missing = tuple(
        (header["height"], chunk["shard_id"])
        for view, header in zip(views, headers, strict=True)
        for chunk, produced in zip(view["chunks"], header["chunk_mask"], strict=True)
        if not produced
    )
    layout = genesis_config["shard_layout"]["V2"]

    rows_by_account: dict[str, list[tuple[int, dict[str, Any] | None]]] = {}
    for row in chain.account_states:
        view = None if row.view_json is None else _view(row.view_json)
        rows_by_account.setdefault(row.account_id, []).append((row.height, view))
    genesis_height = genesis_config["genesis_height"]
    at_genesis = sorted(a for a, rows in rows_by_account.items() if rows[0][0] == genesis_height)
    created = sorted((a, rows[0][0]) for a, rows in rows_by_account.items() if rows[0][0] != genesis_height)
    deleted = sorted((a, height) for a, rows in rows_by_account.items() for height, view in rows if view is None)
    genesis_views = {a: rows[0][1] for a, rows in rows_by_account.items() if rows[0][0] == genesis_height}
    contracts = {a: v["code_hash"] for a, v in genesis_views.items() if v and v["code_hash"] != ZERO_HASH}
    keys_of: dict[str, set[bytes]] = {}
    for data_row in chain.contract_data:
        keys_of.setdefault(data_row.account_id, set()).add(data_row.key)
    counters = [a for a in contracts if b"STATE" in keys_of.get(a, set())]
    tokens = [a for a in contracts if b"t" in keys_of.get(a, set())]
    if len(counters) != 1 or len(tokens) != 1 or len(contracts) != 2:
        raise AssertionError(f"expected a counter and a token among the contract accounts, found {sorted(contracts)}")
    globals_ = sorted(
        a for a, v in genesis_views.items() if v and ("global_contract_hash" in v or "global_contract_account_id" in v)
    )
    gas_prices = [int(header["gas_price"]) for header in headers]
    transactions = tuple(_tx_facts(tx.view_json, tx.block_hash, tx.height, tx.shard_id) for tx in chain.transactions)
    chunks = tuple(_chunk_facts(c.view_json, c.block_hash) for c in chain.chunks)
    receipts = [_view(r.view_json) for r in chain.receipts]

    return SampleFacts(
        chain_id=genesis_config["chain_id"],
        genesis_height=genesis_height,
        genesis_hash=genesis["hash"],
        genesis_protocol_version=genesis_config["protocol_version"],
        latest_protocol_version=head["latest_protocol_version"],
        protocol_versions=tuple(sorted(set(versions.values()))),
        first_upgraded_height=first_upgraded,
        epoch_length=genesis_config["epoch_length"],
        head_height=head["height"],
        head_hash=head["hash"],
        near_final_height=by_hash[head["last_ds_final_block"]]["height"],
        near_final_hash=head["last_ds_final_block"],
        final_height=by_hash[head["last_final_block"]]["height"],
        final_hash=head["last_final_block"],
        block_heights=heights,
        skipped_heights=tuple(sorted(set(range(heights[0], heights[-1] + 1)) - set(heights))),
        epochs=tuple(epochs),
        shard_ids=tuple(layout["shard_ids"]),
        boundary_accounts=tuple(layout["boundary_accounts"]),
        missing_chunks=missing,
        validators=tuple(v["account_id"] for v in genesis_config["validators"]),
        treasury_account=genesis_config["protocol_treasury_account"],
        # The registrar comes from the runtime config (not in the stored data); it is one of
        # the genesis accounts.
        registrar_account=scenario.REGISTRAR,
        contract_account=counters[0],
        contract_code_hash=contracts[counters[0]],
        token_account=tokens[0],
        token_code_hash=contracts[tokens[0]],
        contract_data=chain.contract_data,
        global_contract_accounts=tuple(globals_),
        implicit_accounts=tuple(a for a in at_genesis if len(a) == 64 and all(c in "0123456789abcdef" for c in a)),
        accounts_at_genesis=tuple(at_genesis),
        all_accounts=tuple(sorted(rows_by_account)),
        created_accounts=tuple(created),
        deleted_accounts=tuple(deleted),
        state_heights=tuple((a, tuple(height for height, _ in rows)) for a, rows in sorted(rows_by_account.items())),
        total_supply_at_genesis=int(genesis["total_supply"]),
        min_gas_price_seen=min(gas_prices),
        max_gas_price_seen=max(gas_prices),
        transactions=transactions,
        chunks=chunks,
        receipt_ids=tuple(r["receipt_id"] for r in receipts),
        refund_receipt_ids=tuple(r["receipt_id"] for r in receipts if r["predecessor_id"] == "system"),
        validator_epochs=tuple((v.epoch_id, v.height) for v in chain.validators),
    )


def _action_kind(action: Any) -> str:
    return action if isinstance(action, str) else next(iter(action))


def _tx_facts(view_json: bytes, block_hash: str, height: int, shard_id: int) -> TxFacts:
    view = _view(view_json)
    tx = view["transaction"]
    calls = [a["FunctionCall"]["method_name"] for a in tx["actions"] if _action_kind(a) == "FunctionCall"]
    return TxFacts(
        tx_hash=tx["hash"],
        signer_id=tx["signer_id"],
        receiver_id=tx["receiver_id"],
        public_key=tx["public_key"],
        nonce=tx["nonce"],
        height=height,
        block_hash=block_hash,
        shard_id=shard_id,
        actions=tuple(_action_kind(a) for a in tx["actions"]),
        method_name=calls[0] if calls else None,
        receipt_ids=tuple(o["id"] for o in view["receipts_outcome"]),
        final_execution_status=view["final_execution_status"],
    )


def _chunk_facts(view_json: bytes, block_hash: str) -> ChunkFacts:
    view = _view(view_json)
    header = view["header"]
    return ChunkFacts(
        chunk_hash=header["chunk_hash"],
        height=header["height_included"],
        block_hash=block_hash,
        shard_id=header["shard_id"],
        tx_hashes=tuple(t["hash"] for t in view["transactions"]),
        receipt_ids=tuple(r["receipt_id"] for r in view["receipts"]),
    )


@cache
def sample_facts() -> SampleFacts:
    """Facts about the sample chain, computed once per process."""
    return derive_facts(sample_chain())
