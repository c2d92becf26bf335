"""Realistic nearcore genesis.json files for the tests, written as `neard init` lays them out:
the config members first (legacy ones included), then `records`."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import base58
import orjson

NEAR = 10**24
CHAIN_ID = "import-localnet"
GENESIS_HEIGHT = 1000
ZERO_HASH = "11111111111111111111111111111111"


def b58(*parts: object) -> str:
    return base58.b58encode(hashlib.sha256("/".join(map(str, parts)).encode()).digest()).decode()


def public_key(*parts: object) -> str:
    return f"ed25519:{b58('key', *parts)}"


def genesis_members(chain_id: str = CHAIN_ID) -> dict[str, Any]:
    """The config part of a genesis.json, with legacy members nearcore no longer reads and
    without four fields that have defaults."""
    return {
        "protocol_version": 78,
        "genesis_time": "2025-05-12T08:14:39.528014Z",
        "chain_id": chain_id,
        "genesis_height": GENESIS_HEIGHT,
        "num_block_producer_seats": 50,
        "num_block_producer_seats_per_shard": [50, 50],  # legacy
        "avg_hidden_validator_seats_per_shard": [0, 0],  # legacy
        "dynamic_resharding": False,
        "protocol_upgrade_stake_threshold": [4, 5],
        "epoch_length": 500,
        "gas_limit": 1_000_000_000_000_000,
        "min_gas_price": "100000000",
        "max_gas_price": "10000000000000000000000",
        "block_producer_kickout_threshold": 90,
        "chunk_producer_kickout_threshold": 90,
        "chunk_validator_only_kickout_threshold": 80,
        "target_validator_mandates_per_shard": 68,
        "online_min_threshold": [90, 100],
        "online_max_threshold": [99, 100],
        "gas_price_adjustment_rate": [1, 100],
        "validators": [
            {"account_id": f"node{i}", "public_key": public_key("node", i), "amount": str((50 - i) * 1_000_000 * NEAR)}
            for i in range(2)
        ],
        "transaction_validity_period": 100,
        "protocol_reward_rate": [1, 10],
        "max_inflation_rate": [1, 20],
        "total_supply": str(2_050_000_000 * NEAR),
        "num_blocks_per_year": 31_536_000,
        "protocol_treasury_account": "treasury.near",
        "fishermen_threshold": str(10 * NEAR),
        "minimum_stake_divisor": 10,
        "shard_layout": {
            "V2": {
                "boundary_accounts": ["m.near"],
                "shard_ids": [0, 1],
                "id_to_index_map": {"0": 0, "1": 1},
                "index_to_id_map": {"0": 0, "1": 1},
                "shards_split_map": None,
                "shards_parent_map": None,
                "version": 0,
            }
        },
        "num_chunk_only_producer_seats": 300,  # legacy
        "minimum_validators_per_shard": 1,
        "max_kickout_stake_perc": 100,
        "minimum_stake_ratio": [1, 6250],
        "use_production_config": False,
    }


def account_record(account_id: str, amount: int, *, locked: int = 0, code_hash: str = ZERO_HASH,
                   storage_usage: int = 182, **extra: Any) -> dict[str, Any]:
    account = {"amount": str(amount), "locked": str(locked), "code_hash": code_hash,
               "storage_usage": storage_usage, "version": "V1", **extra}
    return {"Account": {"account_id": account_id, "account": account}}


def other_records(account_id: str, index: int, *, code_bytes: int = 600, data: int = 0) -> Iterator[dict[str, Any]]:
    """Records of the kinds this interface does not serve; `data` extra contract-state entries."""
    yield {"AccessKey": {"account_id": account_id, "public_key": public_key(account_id),
                         "access_key": {"nonce": 0, "permission": "FullAccess"}}}
    if index % 4 == 0:
        yield {"AccessKey": {"account_id": account_id, "public_key": public_key(account_id, "fc"),
                             "access_key": {"nonce": 7, "permission": {"FunctionCall": {
                                 "allowance": str(NEAR // 4), "receiver_id": "app.near", "method_names": ["play"]}}}}}
    if index % 5 == 0:
        yield {"Data": {"account_id": account_id, "data_key": base64.b64encode(b"STATE").decode(),
                        "value": base64.b64encode(hashlib.sha256(account_id.encode()).digest() * 4).decode()}}
    for entry in range(data):
        yield {"Data": {"account_id": account_id, "data_key": base64.b64encode(b"k:%d" % entry).decode(),
                        "value": base64.b64encode(hashlib.sha256(b"%d" % entry).digest() * 3).decode()}}
    if index % 50 == 0:
        code = (hashlib.sha512(account_id.encode()).digest() * (code_bytes // 64 + 1))[:code_bytes]
        yield {"Contract": {"account_id": account_id, "code": base64.b64encode(code).decode()}}


def some_records() -> list[dict[str, Any]]:
    """A small record set of several kinds, incl. accounts with a contract and a global one."""
    records: list[dict[str, Any]] = [
        account_record("node0", 1_000 * NEAR, locked=50_000_000 * NEAR),
        account_record("node1", 2_000 * NEAR, locked=49_000_000 * NEAR),
        account_record("alice.near", 1_500 * NEAR + 17),
        account_record("counter.near", 40 * NEAR, code_hash=b58("counter-wasm"), storage_usage=51_211),
        account_record("dapp.near", 12 * NEAR, storage_usage=214, global_contract_hash=b58("global-wasm")),
        account_record("widget.near", 9 * NEAR, storage_usage=226, global_contract_account_id="factory.near"),
        account_record("0" * 24 + "ab" * 20, 3 * NEAR),
        account_record("treasury.near", 2_000_000_000 * NEAR - 4_120 * NEAR),
    ]
    for index, record in enumerate(list(records)):
        records.extend(other_records(record["Account"]["account_id"], index))
    records.append({"ReceivedData": {"account_id": "counter.near", "data_id": b58("data"), "data": None}})
    records.append({"PostponedReceipt": {"predecessor_id": "alice.near", "receiver_id": "counter.near",
                                         "receipt_id": b58("receipt"), "receipt": {"Action": {
                                             "signer_id": "alice.near", "signer_public_key": public_key("alice.near"),
                                             "gas_price": "100000000", "output_data_receivers": [],
                                             "input_data_ids": [b58("data")], "actions": []}}}})
    return records


def expected_view(record: dict[str, Any]) -> dict[str, Any]:
    """The AccountView (without block members) an Account record becomes."""
    account = record["Account"]["account"]
    view = {"amount": account["amount"], "locked": account["locked"], "code_hash": account["code_hash"],
            "storage_usage": account["storage_usage"], "storage_paid_at": 0}
    for key in ("global_contract_hash", "global_contract_account_id"):
        if key in account:
            view[key] = account[key]
    return view


def write_genesis(path: Path, members: dict[str, Any], records: list[dict[str, Any]], *,
                  records_first: bool = False, indent: bool = True) -> Path:
    """genesis.json as nearcore writes it (pretty-printed), `records` last unless `records_first`."""
    ordered = {"records": records, **members} if records_first else {**members, "records": records}
    path.write_bytes(orjson.dumps(ordered, option=orjson.OPT_INDENT_2 if indent else 0))
    return path


def write_big_genesis(path: Path, accounts: int, *, code_bytes: int = 600, data: int = 0,
                      broken_at: int | None = None) -> tuple[int, int]:
    """A genesis.json with `accounts` Account records and their other records, written record
    by record. Returns (record count, file size). `broken_at`: the record with that index is
    written with an invalid balance."""
    head = orjson.dumps(genesis_members(), option=orjson.OPT_INDENT_2)
    count = 0
    with path.open("wb") as out:
        out.write(head[:-2] + b',\n  "records": [\n')
        for index in range(accounts):
            account_id = f"user{index:07d}.near"
            batch = [account_record(account_id, (index + 1) * NEAR),
                     *other_records(account_id, index, code_bytes=code_bytes, data=data)]
            for record in batch:
                if count == broken_at:
                    record = account_record(account_id, 1)
                    record["Account"]["account"]["amount"] = "12.5 NEAR"
                out.write(b",\n    " if count else b"    ")
                out.write(orjson.dumps(record))
                count += 1
        out.write(b"\n  ]\n}\n")
    return count, path.stat().st_size
