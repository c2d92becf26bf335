"""Facts about the chain a test server serves, read from its store: what a client test can
ask for and compare with (heights, hashes, accounts, their access keys, contract code hashes,
chunks, transactions and receipts, and ones that do not exist). A fork's are asked of the server
instead (`read_served_facts`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx

from nearrpc.sample_keys import full_access_label, key_pair
from nearrpc.store import ACCOUNTS_CHOSEN, ChainReader, StoredBlock, StoreLocation, describe_location, open_store
from nearrpc.store.held import held_account
from nearrpc.testing.transaction_facts import (
    ChunkFact,
    ReceiptFact,
    TransactionFact,
    served_transaction_facts,
    stored_transaction_facts,
)

# Heights below the head that block_heights / skipped_heights cover at most (big recordings).
HEIGHT_SPAN = 100_000
_MISSING_ACCOUNT = "nearrpc-no-such-account"
_NO_CODE = "11111111111111111111111111111111"  # the code hash of an account without a contract


@dataclass(frozen=True, slots=True)
class FundedAccount:
    """An account whose full-access key the facts can sign with: its secret key follows the
    sample's rule for named accounts (`nearrpc.sample_keys`) and the store holds its public key."""

    account_id: str
    public_key: str  # ed25519:<base58>, as nearcore prints it
    secret_key: str  # ed25519:<base58 of seed and public key>, as near-api-js and py-near read it
    balance: int  # `amount` in yoctoNEAR at the final block


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
    # (account, methods its wasm exports) of every account with code at the final block, sorted:
    # what `query call_function` can name (on the sample: the counter's get_num, the token's
    # ft_balance_of, ft_total_supply and ft_metadata, beside their change methods)
    contracts: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # a height below the head without a block (UNKNOWN_BLOCK, HTTP 422): the lowest skipped
    # height known, else the height below a genesis above 0; None when the chain shows neither
    absent_height: int | None = None
    # the new chunks of the blocks `block_heights` covers, (height, shard_id, chunk_hash), by
    # height and shard: what `chunk` answers by hash, or by the block at that height and the shard
    chunks: tuple[ChunkFact, ...] = ()
    # the transactions those chunks included, (tx_hash, signer_id, height), by height and hash:
    # what `tx` and `EXPERIMENTAL_tx_status` answer for that hash and signer
    transactions: tuple[TransactionFact, ...] = ()
    # the receipts those transactions led to, (receipt_id, receiver_id, tx_hash), each
    # transaction's in its receipts_outcome order: what `EXPERIMENTAL_receipt` answers
    receipts: tuple[ReceiptFact, ...] = ()
    # accounts at the final block without code or stake whose full-access key pair the facts
    # know (on the sample chain: its named accounts), richest first: what a sandbox test signs with
    funded_accounts: tuple[FundedAccount, ...] = ()


def _absent_height(skipped: list[int] | tuple[int, ...], genesis_height: int) -> int | None:
    if skipped:
        return min(skipped)
    return genesis_height - 1 if genesis_height > 0 else None


def _by_hash(reader: ChainReader, block_hash: str, what: str) -> StoredBlock:
    block = reader.block_by_hash(block_hash)
    if block is None:
        raise ValueError(f"the store does not hold the {what} block {block_hash}")
    return block


def _candidate_accounts(genesis: dict[str, Any], authors: list[str]) -> list[str]:
    """The accounts the facts try, sorted: the genesis validators, the treasury, block authors."""
    validators = genesis.get("validators")
    candidates = [v["account_id"] for v in validators if isinstance(v, dict)] if isinstance(validators, list) else []
    return sorted({*candidates, str(genesis.get("protocol_treasury_account")), *authors})


def _existing_accounts(reader: ChainReader, genesis: dict[str, Any], authors: list[str], height: int) -> list[str]:
    return [name for name in _candidate_accounts(genesis, authors) if reader.account_json(name, height) is not None]


def _missing_account(reader: ChainReader, height: int) -> str:
    if reader.fetched(ACCOUNTS_CHOSEN):
        # a recording of chosen accounts knows only those: one recorded as absent, if any (any
        # other name answers that the store does not hold it)
        held_prefix = held_account("")
        for mark in sorted(reader.iter_fetched()):
            account = mark.removeprefix(held_prefix)
            if mark.startswith(held_prefix) and reader.account_json(account, height) is None:
                return account
    name, number = _MISSING_ACCOUNT, 0
    while reader.account_json(name, height) is not None:
        number += 1
        name = f"{_MISSING_ACCOUNT}-{number}"
    return name


def _leb128(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if byte < 0x80:
            return value, at


def exported_functions(code: bytes) -> tuple[str, ...]:
    """The names of the functions a wasm module exports, sorted, read off its export section
    (no compilation: a recording's contracts may be megabytes); () for what is not wasm."""
    if code[:4] != b"\0asm":
        return ()
    names: list[str] = []
    at = 8
    try:
        while at < len(code):
            section, (size, at) = code[at], _leb128(code, at + 1)
            if section == 7:  # exports: (name, kind, index) each; kind 0 is a function
                count, cursor = _leb128(code, at)
                for _ in range(count):
                    length, cursor = _leb128(code, cursor)
                    name, kind = code[cursor : cursor + length], code[cursor + length]
                    _, cursor = _leb128(code, cursor + length + 1)
                    if kind == 0:
                        names.append(name.decode("utf-8", "replace"))
                break
            at += size
    except IndexError:
        return ()
    return tuple(sorted(names))


def _contracts(reader: ChainReader, height: int) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Every account whose state at `height` has code the store holds, with its exports."""
    codes = dict(reader.iter_contract_codes())
    if not codes:
        return ()
    latest: dict[str, tuple[int, bytes | None]] = {}
    for account_id, at, view in reader.iter_account_states():
        if at <= height and (account_id not in latest or latest[account_id][0] <= at):
            latest[account_id] = (at, view)
    found = []
    for account_id, (_, view) in sorted(latest.items()):
        code = None if view is None else codes.get(str(json.loads(view).get("code_hash")))
        if code is not None:
            found.append((account_id, exported_functions(code)))
    return tuple(found)


def _funded_accounts(reader: ChainReader, height: int) -> tuple[FundedAccount, ...]:
    """The accounts at `height` that hold the full-access key of their label, have no contract
    and no stake (a transfer from one moves its balance and nothing else), richest first."""
    names = sorted({account_id for account_id, at, _ in reader.iter_account_states() if at <= height})
    found = []
    for account_id in names:
        view = reader.account_json(account_id, height)
        if view is None:
            continue
        account = json.loads(view)
        if account.get("code_hash") != _NO_CODE or int(account.get("locked", 0)) != 0:
            continue
        pair = key_pair(full_access_label(account_id))
        key = reader.access_key_json(account_id, pair.public_key, height)
        if key is not None and json.loads(key).get("permission") == "FullAccess":
            found.append(FundedAccount(account_id, pair.public_key, pair.secret_key, int(account["amount"])))
    return tuple(sorted(found, key=lambda funded: (-funded.balance, funded.account_id)))


def read_chain_facts(store: StoreLocation) -> ChainFacts:
    """The facts of the store at `store`; ValueError when it holds no chain to serve."""
    reader = open_store(store, "read")
    try:
        genesis_json, head, earliest = reader.genesis_config_json(), reader.head(), reader.earliest_block()
        if genesis_json is None or head is None or earliest is None:
            raise ValueError(f"{describe_location(store)} holds no genesis config or no blocks")
        genesis = json.loads(genesis_json)
        final = _by_hash(reader, head.last_final_block, "final")
        near_final = _by_hash(reader, head.last_ds_final_block, "near-final")
        epoch = reader.epoch(head.epoch_id)
        first = max(earliest.height, head.height - HEIGHT_SPAN)
        heights = [h for h in range(first, head.height + 1) if reader.block_by_height(h) is not None]
        genesis_block = reader.genesis_block()
        authors = [str(json.loads(b.view_json)["author"]) for b in (head, final)]
        accounts = _existing_accounts(reader, genesis, authors, final.height)
        skipped = sorted(set(range(first, head.height + 1)) - set(heights))
        happened = stored_transaction_facts(reader, first)
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
            skipped_heights=tuple(skipped),
            accounts=tuple(accounts),
            missing_account=_missing_account(reader, final.height),
            access_keys=tuple(
                (account, key) for account in accounts for key, _ in reader.access_keys_json(account, final.height)
            ),
            contract_code_hashes=tuple(sorted(code_hash for code_hash, _ in reader.iter_contract_codes())),
            contracts=_contracts(reader, final.height),
            absent_height=_absent_height(skipped, int(genesis["genesis_height"])),
            chunks=happened.chunks,
            transactions=happened.transactions,
            receipts=happened.receipts,
            funded_accounts=_funded_accounts(reader, final.height),
        )
    finally:
        reader.close()


# -- a fork's facts: asked of the server itself

# How far back from the head a fork's facts walk the chain at most (one request a block).
FORK_WALK = 50


def is_fork_store(store: StoreLocation) -> bool:
    """Whether `store` was written by a fork (`serve --upstream`): it holds marks of what was
    fetched (the facts of a fork mark at least the accounts they ask), and more than a
    recording's marks of the accounts it holds (`store.held`)."""
    reader = open_store(store, "read")
    try:
        held = held_account("")
        return any(mark != ACCOUNTS_CHOSEN and not mark.startswith(held) for mark in reader.iter_fetched())
    finally:
        reader.close()


class _Rpc:
    """JSON-RPC calls to the server under test; an answer the facts need and do not get is a
    ValueError naming the call (the fixture reports it in one line)."""

    def __init__(self, client: httpx.Client, url: str) -> None:
        self._client, self._url = client, url

    def result(self, method: str, params: object, *, absent: tuple[str, ...] = ()) -> dict[str, Any] | None:
        """The result; None for an error whose cause is one of `absent` (what the facts may find
        missing: an account, a contract); any other error is a ValueError, never an absence."""
        reply = self._client.post(self._url, json={"jsonrpc": "2.0", "id": "nearrpc-facts", "method": method,
                                                   "params": params})  # fmt: skip
        try:
            answer = reply.json()
        except ValueError:
            answer = None
        if isinstance(answer, dict) and isinstance(answer.get("result"), dict):
            return answer["result"]  # type: ignore[no-any-return]  # checked a dict just above
        error = answer.get("error") if isinstance(answer, dict) else None
        if not isinstance(error, dict):
            raise ValueError(f"{method} {json.dumps(params)}: HTTP {reply.status_code}, not a JSON-RPC answer")
        cause = error.get("cause", {}).get("name")
        if cause in absent:
            return None
        raise ValueError(f"{method} {json.dumps(params)} answers {cause}: {error.get('data', '')}")

    def found(self, method: str, params: object) -> dict[str, Any]:
        """The result, which the facts cannot do without."""
        result = self.result(method, params)
        assert result is not None  # nothing is allowed absent
        return result


def _walk_heights(rpc: _Rpc, head: dict[str, Any], final_height: int) -> tuple[list[int], list[int]]:
    """Heights with a block, and skipped heights, from the final block up to the head, walking the
    head's parents by hash (as the chain links them): the one stretch a fork knows whole without
    asking its upstream for every height."""
    heights: list[int] = []
    skipped: list[int] = []
    header = head["header"]
    for _ in range(FORK_WALK):
        heights.append(int(header["height"]))
        if header["height"] <= final_height:
            break
        parent = rpc.found("block", {"block_id": header["prev_hash"]})["header"]
        skipped.extend(range(int(parent["height"]) + 1, int(header["height"])))
        header = parent
    return sorted(heights), sorted(skipped)


def _served_absent_height(rpc: _Rpc, skipped: list[int], genesis_height: int, final_height: int) -> int | None:
    """`absent_height` for a fork: when neither its walk nor its genesis gives one, the first
    height below the final block the server has no block at, asking down by height (at most
    `FORK_WALK` requests, which the cassette keeps like any other)."""
    known = _absent_height(skipped, genesis_height)
    if known is not None:
        return known
    for height in range(final_height - 1, max(genesis_height, final_height - 1 - FORK_WALK), -1):
        if rpc.result("block", {"block_id": height}, absent=("UNKNOWN_BLOCK",)) is None:
            return height
    return None


def read_served_facts(url: str, *, timeout: float = 60.0) -> ChainFacts:
    """The facts of a fork, asked of the server at `url` over JSON-RPC (ValueError when it cannot
    say). A fork's store holds only what was asked, so it cannot list the chain's heights or
    accounts; the server answers for each block and account the facts name, fetching what the
    store lacks from the upstream, and these very requests are recorded: a later run that serves
    the store alone answers them the same, so its facts are the same.

    `near_final_*` and `final_*` are the head's `last_ds_final_block` and `last_final_block`, which
    `near-final` and `final` name. What differs from a store's facts: `block_heights` and
    `skipped_heights` cover the final block up to the head only (`FORK_WALK` blocks at most), and
    so do `chunks`; `transactions` (and their `receipts`) are those of the final block, ten at
    most (each chunk and transaction asked of the server);
    `contract_code_hashes` holds the code of `accounts` only."""
    with httpx.Client(timeout=timeout) as client:
        rpc = _Rpc(client, url)
        genesis = rpc.found("genesis_config", None)
        # a node that is not archival has dropped its genesis block
        genesis_block = rpc.result("block", {"sync_checkpoint": "genesis"}, absent=("UNKNOWN_BLOCK",))
        earliest = rpc.found("block", {"sync_checkpoint": "earliest_available"})["header"]
        head = rpc.found("block", {"finality": "optimistic"})
        # named by the head, as a node derives them: a head that moves between two requests
        # (a fork not pinned) cannot pair one head with a later head's final block
        near_final = rpc.found("block", {"block_id": head["header"]["last_ds_final_block"]})["header"]
        final = rpc.found("block", {"block_id": head["header"]["last_final_block"]})
        config = rpc.found("EXPERIMENTAL_protocol_config", {"block_id": head["header"]["hash"]})
        heights, skipped = _walk_heights(rpc, head, int(final["header"]["height"]))
        at_final = str(final["header"]["hash"])

        def view(name: str) -> dict[str, Any] | None:
            params = {"account_id": name, "block_id": at_final}
            return rpc.result("EXPERIMENTAL_view_account", params, absent=("UNKNOWN_ACCOUNT",))

        authors = [str(head["author"]), str(final["author"])]
        views = {name: view(name) for name in _candidate_accounts(genesis, authors)}
        accounts = {name: found for name, found in views.items() if found is not None}
        missing, number = _MISSING_ACCOUNT, 0
        while view(missing) is not None:
            number += 1
            missing = f"{_MISSING_ACCOUNT}-{number}"
        keys = [
            (name, str(item["public_key"]))
            for name in accounts
            for item in rpc.found("EXPERIMENTAL_view_access_key_list", {"account_id": name, "block_id": at_final})[
                "keys"
            ]
        ]
        code_hashes = {
            str(found["code_hash"])
            for name, found in accounts.items()
            if found["code_hash"] != _NO_CODE
            and rpc.result("EXPERIMENTAL_view_code", {"account_id": name, "block_id": at_final},
                           absent=("NO_CONTRACT_CODE",)) is not None
        }  # fmt: skip
        happened = served_transaction_facts(rpc.found, rpc.result, heights, int(final["header"]["height"]))
        return ChainFacts(
            chain_id=str(genesis["chain_id"]),
            genesis_height=int(genesis["genesis_height"]),
            genesis_hash=str(genesis_block["header"]["hash"]) if genesis_block is not None else None,
            earliest_height=int(earliest["height"]),
            earliest_hash=str(earliest["hash"]),
            head_height=int(head["header"]["height"]),
            head_hash=str(head["header"]["hash"]),
            near_final_height=int(near_final["height"]),
            near_final_hash=str(near_final["hash"]),
            final_height=int(final["header"]["height"]),
            final_hash=at_final,
            protocol_version=int(config["protocol_version"]),
            block_heights=tuple(heights),
            skipped_heights=tuple(skipped),
            accounts=tuple(accounts),
            missing_account=missing,
            access_keys=tuple(keys),
            contract_code_hashes=tuple(sorted(code_hashes)),
            absent_height=_served_absent_height(
                rpc, skipped, int(genesis["genesis_height"]), int(final["header"]["height"])
            ),
            chunks=happened.chunks,
            transactions=happened.transactions,
            receipts=happened.receipts,
        )
