"""A benchmark store of real NEAR contracts with realistic state (issue 44 item 1):

    python -m bench.real_contracts_store STORE [--holders 5000] [--nfts 1000] [--statuses 200]
                                               [--reference DIR]

The sample chain, plus three of near-sdk-rs's own example contracts (near-sdk 4, compiled wasm
read from the shared reference folder's contracts/: $NEARRPC_REFERENCE_DIR, else
../shared/reference beside the repository; never copied into the repository), deployed at the
genesis height with their state written directly in the contracts' own storage layout
(bench/near_sdk_layout.py):
- ft.localnet: new_fungible_token.wasm (near-contract-standards FungibleToken), --holders
  registered accounts with balances of many sizes, their sum the total supply, and its metadata;
- nft.localnet: new_non_fungible_token.wasm (NonFungibleToken with metadata, enumeration and
  approvals), --nfts tokens with metadata minted in order to the holders (a few hold many),
  owner_by_id the AVL tree near-sdk's TreeMap builds from those inserts;
- status.localnet: new_status_message.wasm, --statuses of the holders' messages.
STORE is an SQLite path or a postgresql:// URL; it is replaced. Prints the store's sizes.
What each contract holds is `plan(shape)`, which the tests and bench.real_calls_bench read
for the answers the contracts' views must give (tests/contracts/test_real_contracts.py).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import random
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import orjson

from bench import near_sdk_layout as sdk
from nearrpc.sample import build_sample_store, crypto, scenario
from nearrpc.store import StoreLocation, describe_location, open_store

FT, NFT, STATUS = (f"{name}.{scenario.TOP_LEVEL}" for name in ("ft", "nft", "status"))
CODES = {FT: "new_fungible_token.wasm", NFT: "new_non_fungible_token.wasm", STATUS: "new_status_message.wasm"}
# An account record's own bytes: nearcore's num_bytes_account (the contracts hold no access key).
ACCOUNT_BYTES = scenario.BASE_STORAGE - scenario.FULL_ACCESS_KEY_STORAGE
STATE = b"STATE"  # near-sdk's key of a contract's root struct
# The examples' `BorshStorageKey` enums, a variant's borsh (its index) the prefix:
# fungible-token/ft: FungibleToken, Metadata; non-fungible-token/nft: NonFungibleToken, Metadata,
# TokenMetadata, Enumeration, Approval.
FT_ACCOUNTS, FT_METADATA = b"\x00", b"\x01"
NFT_OWNERS, NFT_METADATA, NFT_TOKEN_METADATA, NFT_ENUMERATION, NFT_APPROVALS = (bytes([i]) for i in range(5))
# near-contract-standards' own StorageKey in non_fungible_token/core/core_impl.rs (its variant 0
# holds a Vec<u8>: the owner's sha256; variant 1 a CryptoHash)
TOKENS_PER_OWNER, TOKEN_PER_OWNER_INNER = b"\x00", b"\x01"
TOKEN_METADATA_FIELDS = ("title", "description", "media", "media_hash", "copies", "issued_at", "expires_at",
                         "starts_at", "updated_at", "extra", "reference", "reference_hash")  # fmt: skip


@dataclass(frozen=True)
class Shape:
    holders: int = 5_000
    nfts: int = 1_000
    statuses: int = 200


@dataclass(frozen=True)
class NftToken:
    token_id: str
    owner_id: str
    metadata: dict[str, str | int | None]  # TokenMetadata's members in its order; media_hash as base64

    def json(self) -> bytes:
        """The view's Token, as the contract's serde writes it (members in struct order, no
        approvals: an empty map)."""
        return orjson.dumps({"token_id": self.token_id, "owner_id": self.owner_id, "metadata": self.metadata,
                             "approved_account_ids": {}})  # fmt: skip


@dataclass(frozen=True)
class RealContracts:
    """What the three contracts hold: the plan both the store and its tests are built from."""

    balances: dict[str, int]  # FT holders in registration order; the first is the token's owner
    ft_metadata: dict[str, str | int | None]
    tokens: tuple[NftToken, ...]  # in mint order
    nft_metadata: dict[str, str | None]
    statuses: dict[str, str]

    @property
    def total_supply(self) -> int:
        return sum(self.balances.values())

    @property
    def owner(self) -> str:
        return next(iter(self.balances))

    @cached_property
    def tokens_by_id(self) -> list[NftToken]:
        """The order `nft_tokens` lists them: TreeMap's, a String's UTF-8 bytes."""
        return sorted(self.tokens, key=lambda token: token.token_id.encode())

    def tokens_of(self, owner_id: str) -> list[NftToken]:
        """The order `nft_tokens_for_owner` lists an owner's: the set's, mint order."""
        return [token for token in self.tokens if token.owner_id == owner_id]


def _holder(rng: random.Random, index: int) -> str:
    # one in five a NEAR-implicit account (64 hex digits), the others named accounts
    if index % 5 == 4:
        return hashlib.sha256(f"holder {index}".encode()).hexdigest()
    return f"{rng.choice(('alice', 'bob', 'carol', 'dan', 'erin', 'frank'))}-{index}.{scenario.TOP_LEVEL}"


def _token_metadata(rng: random.Random, index: int) -> dict[str, str | int | None]:
    media = f"https://media.example.org/collection/{index}.png"
    values: dict[str, str | int | None] = dict.fromkeys(TOKEN_METADATA_FIELDS)
    values |= {"title": f"Benchmark token #{index}", "description": f"token {index} of a benchmark collection",
               "media": media, "media_hash": base64.b64encode(hashlib.sha256(media.encode()).digest()).decode(),
               "copies": 1}  # fmt: skip
    if index % 2 == 0:
        values["issued_at"] = f"2022-0{1 + index % 9}-1{index % 10}T12:00:00Z"
    if index % 3 == 0:
        values["extra"] = orjson.dumps({"rarity": rng.choice(("common", "rare", "epic")), "level": index % 50}).decode()
    return values


def plan(shape: Shape) -> RealContracts:
    """The contracts' contents for `shape`, the same at every call (seeded)."""
    if shape.holders < 1 or shape.nfts < 0 or not 0 <= shape.statuses <= shape.holders:
        raise ValueError(f"bad shape {shape}: at least one holder, statuses no more than holders")
    rng = random.Random(44)
    holders = [_holder(rng, index) for index in range(shape.holders)]
    # balances spread over many orders of magnitude (24 decimals), as a real token's are
    balances = {holder: int(10 ** rng.uniform(15, 28)) for holder in holders}
    # a few owners hold many tokens, most one or none
    tokens = tuple(
        NftToken(str(index), holders[min(int(rng.expovariate(1 / 25)), len(holders) - 1)], _token_metadata(rng, index))
        for index in range(shape.nfts)
    )
    statuses = {holder: f"{holder} says hello, #{index}" for index, holder in enumerate(holders[: shape.statuses])}
    ft_metadata: dict[str, str | int | None] = {
        "spec": "ft-1.0.0", "name": "nearrpc benchmark token", "symbol": "NRPC",
        "icon": "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 8 8'/%3E",
        "reference": None, "reference_hash": None, "decimals": 24,
    }  # fmt: skip
    nft_metadata: dict[str, str | None] = {
        "spec": "nft-1.0.0", "name": "nearrpc benchmark collection", "symbol": "NRPCNFT", "icon": None,
        "base_uri": "https://media.example.org/collection", "reference": None, "reference_hash": None,
    }  # fmt: skip
    return RealContracts(balances, ft_metadata, tokens, nft_metadata, statuses)


# borsh of the metadata structs (near-contract-standards' fungible_token/metadata.rs,
# non_fungible_token/metadata.rs): Option<String> and Option<Base64VecU8> (raw bytes) members


def _optional_text(value: str | int | None) -> bytes:
    return sdk.option(None if value is None else sdk.string(str(value)))


def _optional_base64(value: str | int | None) -> bytes:
    return sdk.option(None if value is None else sdk.vec(base64.b64decode(str(value))))


def _token_metadata_borsh(values: dict[str, str | int | None]) -> bytes:
    out = b""
    for field in TOKEN_METADATA_FIELDS:
        value = values[field]
        if field in ("media_hash", "reference_hash"):
            out += _optional_base64(value)
        elif field == "copies":
            out += sdk.option(None if value is None else sdk.u64(int(value)))
        else:
            out += _optional_text(value)
    return out


def _ft_metadata_borsh(values: dict[str, str | int | None]) -> bytes:
    return (sdk.string(str(values["spec"])) + sdk.string(str(values["name"])) + sdk.string(str(values["symbol"]))
            + _optional_text(values["icon"]) + _optional_text(values["reference"])
            + _optional_base64(values["reference_hash"]) + bytes([int(values["decimals"] or 0)]))  # fmt: skip


def _nft_metadata_borsh(values: dict[str, str | None]) -> bytes:
    return (sdk.string(str(values["spec"])) + sdk.string(str(values["name"])) + sdk.string(str(values["symbol"]))
            + _optional_text(values["icon"]) + _optional_text(values["base_uri"])
            + _optional_text(values["reference"]) + _optional_base64(values["reference_hash"]))  # fmt: skip


def usage(records: list[sdk.Record]) -> int:
    """What `records` add to an account's storage_usage (nearcore: key, value and the extra
    bytes of a record)."""
    return sum(len(key) + len(value) + scenario.DATA_RECORD_EXTRA_BYTES for key, value in records)


def ft_records(contracts: RealContracts) -> list[sdk.Record]:
    """FungibleToken (near-contract-standards fungible_token/core_impl.rs) and the example's
    LazyOption metadata; the root struct under "STATE": { token: { accounts: LookupMap,
    total_supply: u128, account_storage_usage: u64 }, metadata: LazyOption }."""
    records = [(sdk.lookup_key(FT_ACCOUNTS, sdk.string(holder)), sdk.u128(balance))
               for holder, balance in contracts.balances.items()]  # fmt: skip
    # `FungibleToken::new` measures one registration of a 64-character account id
    per_account = usage([(sdk.lookup_key(FT_ACCOUNTS, sdk.string("a" * 64)), sdk.u128(0))])
    records.append((FT_METADATA, _ft_metadata_borsh(contracts.ft_metadata)))
    root = (sdk.lookup_map_struct(FT_ACCOUNTS) + sdk.u128(contracts.total_supply) + sdk.u64(per_account)
            + sdk.vec(FT_METADATA))  # fmt: skip
    return [(STATE, root), *records]


def _tokens_per_owner_prefix(owner_id: str) -> bytes:
    return TOKENS_PER_OWNER + sdk.vec(hashlib.sha256(owner_id.encode()).digest())


def _measured_token_storage() -> int:
    """NonFungibleToken's `extra_storage_in_bytes_per_token`: what `measure_min_token_storage_cost`
    finds one token with a 64-character id, owner and metadata takes (core_impl.rs), replayed on
    these encoders: its records, then the owner's set swapped for an empty one of another prefix."""
    token, owner = "a" * 64, "a" * 64
    _, owners = sdk.tree_map(NFT_OWNERS, [(token, sdk.string(owner))])
    metadata = dict.fromkeys(TOKEN_METADATA_FIELDS) | {
        "title": token, "description": token, "media": token,
        "media_hash": base64.b64encode(token.encode()).decode(), "copies": 1,
    }  # fmt: skip
    first_set, set_records = sdk.unordered_set(_tokens_per_owner_prefix(owner), [sdk.string(token)])
    hashed = hashlib.sha256(owner.encode()).digest()
    second_set, _ = sdk.unordered_set(TOKEN_PER_OWNER_INNER + hashed, [])
    records = [*owners, *set_records,
               (sdk.lookup_key(NFT_TOKEN_METADATA, sdk.string(token)), _token_metadata_borsh(metadata)),
               (sdk.lookup_key(NFT_ENUMERATION, sdk.string(owner)), first_set),
               (sdk.lookup_key(NFT_APPROVALS, sdk.string(token)), b"\x01\x00\x00\x00" + sdk.string(owner) + sdk.u64(1)),
               (sdk.lookup_key(NFT_APPROVALS + b"n", sdk.string(token)), sdk.u64(1))]  # fmt: skip
    return usage(records) + len(second_set) - len(first_set)


def nft_records(contracts: RealContracts) -> list[sdk.Record]:
    """NonFungibleToken with its metadata, enumeration and approval extensions, as `nft_mint`
    leaves them (core_impl.rs `internal_mint_with_refund`): owner_by_id a TreeMap of token id ->
    owner, token_metadata_by_id a LookupMap, tokens_per_owner a LookupMap of owner ->
    UnorderedSet of token ids (each set under its owner's sha256), no approvals."""
    tree, records = sdk.tree_map(NFT_OWNERS, [(t.token_id, sdk.string(t.owner_id)) for t in contracts.tokens])
    records += [(sdk.lookup_key(NFT_TOKEN_METADATA, sdk.string(t.token_id)), _token_metadata_borsh(t.metadata))
                for t in contracts.tokens]  # fmt: skip
    for owner in dict.fromkeys(t.owner_id for t in contracts.tokens):
        owned = [sdk.string(t.token_id) for t in contracts.tokens_of(owner)]
        structure, set_records = sdk.unordered_set(_tokens_per_owner_prefix(owner), owned)
        records += [(sdk.lookup_key(NFT_ENUMERATION, sdk.string(owner)), structure), *set_records]
    records.append((NFT_METADATA, _nft_metadata_borsh(contracts.nft_metadata)))
    some = [sdk.option(sdk.lookup_map_struct(prefix)) for prefix in
            (NFT_TOKEN_METADATA, NFT_ENUMERATION, NFT_APPROVALS, NFT_APPROVALS + b"n")]  # fmt: skip
    root = (sdk.string(contracts.owner) + sdk.u64(_measured_token_storage()) + tree + b"".join(some)
            + sdk.vec(NFT_METADATA))  # fmt: skip
    return [(STATE, root), *records]


def status_records(contracts: RealContracts) -> list[sdk.Record]:
    """The status-message example: its whole state one HashMap<AccountId, String> under "STATE"."""
    return [(STATE, sdk.string_map(contracts.statuses))]


def reference_contracts() -> Path:
    """The compiled example contracts: $NEARRPC_REFERENCE_DIR/contracts, else the shared
    reference folder beside the repository (tests/conftest.py reads the same place)."""
    default = Path(__file__).resolve().parents[2] / "shared" / "reference"
    return Path(os.environ.get("NEARRPC_REFERENCE_DIR", default)) / "contracts"


@dataclass(frozen=True)
class Deployed:
    account_id: str
    code_bytes: int
    records: int
    record_bytes: int  # keys and values
    storage_usage: int


def add_real_contracts(location: StoreLocation, contracts: RealContracts, folder: Path) -> list[Deployed]:
    """Deploy the three contracts with their state into the store at `location` (which holds a
    chain), at its genesis height: they exist at every block."""
    states = {FT: ft_records(contracts), NFT: nft_records(contracts), STATUS: status_records(contracts)}
    deployed = []
    with open_store(location, "write") as writer, writer.batch() as batch:
        for account_id, records in states.items():
            code = (folder / CODES[account_id]).read_bytes()
            code_hash = crypto.code_hash(code)
            storage = ACCOUNT_BYTES + len(code) + usage(records)
            view = {"amount": str(30 * scenario.NEAR), "locked": "0", "code_hash": code_hash,
                    "storage_usage": storage, "storage_paid_at": 0}  # fmt: skip
            batch.put_account_state(account_id, scenario.GENESIS_HEIGHT, orjson.dumps(view))
            batch.put_contract_code(code_hash, code)
            for key, value in records:
                batch.put_contract_data(account_id, key, scenario.GENESIS_HEIGHT, value)
            record_bytes = sum(len(key) + len(value) for key, value in records)
            deployed.append(Deployed(account_id, len(code), len(records), record_bytes, storage))
    return deployed


def build_real_store(location: StoreLocation, shape: Shape, folder: Path | None = None) -> list[Deployed]:
    """The sample chain and the three contracts of `plan(shape)`, replacing any store there."""
    folder = folder or reference_contracts()
    missing = [name for name in CODES.values() if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(f"{', '.join(missing)} not found in {folder} (set NEARRPC_REFERENCE_DIR)")
    build_sample_store(location)
    return add_real_contracts(location, plan(shape), folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("store", help="an SQLite path or a postgresql:// URL (replaced)")
    parser.add_argument("--holders", type=int, default=Shape.holders, help="FT holders (the first owns the NFT)")
    parser.add_argument("--nfts", type=int, default=Shape.nfts, help="NFT tokens, with metadata")
    parser.add_argument("--statuses", type=int, default=Shape.statuses, help="status messages")
    parser.add_argument("--reference", type=Path, help="the compiled contracts' folder (default: the reference's)")
    args = parser.parse_args()
    try:
        deployed = build_real_store(args.store, Shape(args.holders, args.nfts, args.statuses), args.reference)
    except (FileNotFoundError, ValueError) as problem:
        parser.exit(2, f"real_contracts_store: {problem}\n")
    print(f"wrote the sample chain and 3 contracts to {describe_location(args.store)}:")
    for row in deployed:
        print(f"  {row.account_id:18} code {row.code_bytes:7,d} B  {row.records:6,d} records  "
              f"{row.record_bytes:10,d} B of keys and values  storage_usage {row.storage_usage:,d}")  # fmt: skip
    if not args.store.startswith("postgres"):
        print(f"  file: {Path(args.store).stat().st_size:,d} B")


if __name__ == "__main__":
    main()
