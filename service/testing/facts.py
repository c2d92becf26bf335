"""Facts about the chain a test server serves, read from its store: what a client test can
ask for and compare with (heights, hashes, accounts, their access keys, contract code hashes,
and ones that do not exist)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from nearrpc.store import ChainReader, StoredBlock, open_store

# Heights below the head that block_heights / skipped_heights cover at most (big recordings).
HEIGHT_SPAN = 100_000
_MISSING_ACCOUNT = "nearrpc-no-such-account"


@dataclass(frozen=True, slots=True)
class ChainFacts:
    chain_id: str
    genesis_height: int
    genesis_hash: str | None  # None when the store does not hold the genesis block (a recording)
    earliest_height: int  # `sync_checkpoint: earliest_available`
    earliest_hash: str
    head_height: int  # `finality: optimistic`
    head_hash: str
    near_final_height: int  # `finality: near-final`
    near_final_hash: str
    final_height: int  # `finality: final`
    final_hash: str
    protocol_version: int | None  # of the head's epoch (EXPERIMENTAL_protocol_config at the head)
    block_heights: tuple[int, ...]  # heights with a block, ascending, up to the head
    skipped_heights: tuple[int, ...]  # heights between the earliest block and the head without one
    accounts: tuple[str, ...]  # accounts that exist at the final block: validators, treasury, authors
    missing_account: str  # a valid account id that does not exist
    # (account, public key) of every access key of `accounts` at the final block, in listing order
    access_keys: tuple[tuple[str, str], ...] = ()
    contract_code_hashes: tuple[str, ...] = ()  # hashes of the contract code the store holds, sorted


def _by_hash(reader: ChainReader, block_hash: str, what: str) -> StoredBlock:
    block = reader.block_by_hash(block_hash)
    if block is None:
        raise ValueError(f"the store does not hold the {what} block {block_hash}")
    return block


def _existing_accounts(reader: ChainReader, genesis: dict[str, object], authors: list[str], height: int) -> list[str]:
    validators = genesis.get("validators")
    candidates = [v["account_id"] for v in validators if isinstance(v, dict)] if isinstance(validators, list) else []
    candidates += [str(genesis.get("protocol_treasury_account")), *authors]
    return sorted({name for name in candidates if reader.account_json(name, height) is not None})


def _missing_account(reader: ChainReader, height: int) -> str:
    name, number = _MISSING_ACCOUNT, 0
    while reader.account_json(name, height) is not None:
        number += 1
        name = f"{_MISSING_ACCOUNT}-{number}"
    return name


def read_chain_facts(store: Path) -> ChainFacts:
    """The facts of the store at `store`; ValueError when it holds no chain to serve."""
    reader = open_store(store, "read")
    try:
        genesis_json, head, earliest = reader.genesis_config_json(), reader.head(), reader.earliest_block()
        if genesis_json is None or head is None or earliest is None:
            raise ValueError(f"{store} holds no genesis config or no blocks")
        genesis = json.loads(genesis_json)
        final = _by_hash(reader, head.last_final_block, "final")
        near_final = _by_hash(reader, head.last_ds_final_block, "near-final")
        epoch = reader.epoch(head.epoch_id)
        first = max(earliest.height, head.height - HEIGHT_SPAN)
        heights = [h for h in range(first, head.height + 1) if reader.block_by_height(h) is not None]
        genesis_block = reader.genesis_block()
        authors = [str(json.loads(b.view_json)["author"]) for b in (head, final)]
        accounts = _existing_accounts(reader, genesis, authors, final.height)
        return ChainFacts(
            chain_id=str(genesis["chain_id"]),
            genesis_height=int(genesis["genesis_height"]),
            genesis_hash=genesis_block.hash if genesis_block is not None else None,
            earliest_height=earliest.height,
            earliest_hash=earliest.hash,
            head_height=head.height,
            head_hash=head.hash,
            near_final_height=near_final.height,
            near_final_hash=near_final.hash,
            final_height=final.height,
            final_hash=final.hash,
            protocol_version=epoch.protocol_version if epoch is not None else None,
            block_heights=tuple(heights),
            skipped_heights=tuple(sorted(set(range(first, head.height + 1)) - set(heights))),
            accounts=tuple(accounts),
            missing_account=_missing_account(reader, final.height),
            access_keys=tuple(
                (account, key) for account in accounts for key, _ in reader.access_keys_json(account, final.height)
            ),
            contract_code_hashes=tuple(sorted(code_hash for code_hash, _ in reader.iter_contract_codes())),
        )
    finally:
        reader.close()
