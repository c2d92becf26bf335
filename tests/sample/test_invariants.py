"""Invariants of the sample chain: links, hashes, heights, time, finality, epochs, shards,
chunks, supply and accounts."""

from __future__ import annotations

import itertools
from typing import Any

import base58
import orjson
import pytest

from nearrpc.sample import SampleChain, crypto
from nearrpc.sample.configs import shard_index
from nearrpc.sample.scenario import GENESIS_PROTOCOL_VERSION, LATEST_PROTOCOL_VERSION
from tests.support.sample_facts import SampleFacts

ZERO = "11111111111111111111111111111111"


def decoded_length(value: str) -> int:
    return len(base58.b58decode(value))


def test_parent_links_and_heights(headers: list[dict[str, Any]]) -> None:
    assert headers[0]["prev_hash"] == ZERO
    for parent, child in itertools.pairwise(headers):
        assert child["prev_hash"] == parent["hash"]
        assert child["prev_height"] == parent["height"]
        assert child["height"] > parent["height"]
        assert child["block_ordinal"] == parent["block_ordinal"] + 1
    assert headers[0]["block_ordinal"] == 1


def test_hashes_recompute(views: list[dict[str, Any]]) -> None:
    seen_chunks: set[str] = set()
    for view in views:
        header = view["header"]
        assert crypto.block_hash(header) == header["hash"]
        for chunk in view["chunks"]:
            assert crypto.chunk_hash(chunk) == chunk["chunk_hash"]
            seen_chunks.add(chunk["chunk_hash"])
    assert len({v["header"]["hash"] for v in views}) == len(views)
    assert len(seen_chunks) > 300


def test_hash_key_and_signature_shapes(views: list[dict[str, Any]]) -> None:
    hash_fields = [
        "hash", "prev_hash", "epoch_id", "next_epoch_id", "prev_state_root", "block_body_hash",
        "chunk_receipts_root", "chunk_headers_root", "chunk_tx_root", "outcome_root",
        "challenges_root", "random_value", "last_final_block", "last_ds_final_block",
        "next_bp_hash", "block_merkle_root",
    ]  # fmt: skip
    chunk_hash_fields = [
        "chunk_hash", "prev_block_hash", "outcome_root", "prev_state_root",
        "encoded_merkle_root", "outgoing_receipts_root", "tx_root",
    ]  # fmt: skip

    def signature_ok(value: str) -> bool:
        prefix, _, body = value.partition(":")
        return prefix == "ed25519" and decoded_length(body) == 64

    for view in views:
        header = view["header"]
        for name in hash_fields:
            assert decoded_length(header[name]) == 32, name
        assert signature_ok(header["signature"])
        assert all(a is None or signature_ok(a) for a in header["approvals"])
        for chunk in view["chunks"]:
            for name in chunk_hash_fields:
                assert decoded_length(chunk[name]) == 32, name
            assert signature_ok(chunk["signature"])


def test_timestamps_strictly_increase(headers: list[dict[str, Any]]) -> None:
    for header in headers:
        assert header["timestamp_nanosec"] == str(header["timestamp"])
    stamps = [header["timestamp"] for header in headers]
    assert stamps == sorted(set(stamps))
    # Roughly one second per height, skipped heights included.
    span = (stamps[-1] - stamps[0]) / (headers[-1]["height"] - headers[0]["height"])
    assert 1.0e9 < span < 1.4e9


def test_genesis_header(headers: list[dict[str, Any]], facts: SampleFacts) -> None:
    genesis = headers[0]
    assert genesis["height"] == facts.genesis_height == 0
    assert genesis["epoch_id"] == genesis["next_epoch_id"] == ZERO
    assert genesis["last_final_block"] == genesis["last_ds_final_block"] == ZERO
    assert genesis["approvals"] == []
    assert genesis["signature"] == "ed25519:" + "1" * 64
    assert genesis["gas_price"] == "100000000"


def test_skipped_heights(facts: SampleFacts, headers: list[dict[str, Any]]) -> None:
    heights = [h["height"] for h in headers]
    assert len(facts.skipped_heights) >= 5
    assert not set(facts.skipped_heights) & set(heights)
    assert set(heights) | set(facts.skipped_heights) == set(range(heights[0], heights[-1] + 1))
    gaps = [c for p, c in itertools.pairwise(headers) if c["height"] - p["height"] > 1]
    assert gaps, "some block's parent is more than one height below it"
    assert 80 <= facts.head_height <= 120


def test_finality_lags_the_head(headers: list[dict[str, Any]], facts: SampleFacts) -> None:
    height_of = {h["hash"]: h["height"] for h in headers}
    height_of[ZERO] = -1
    for parent, child in itertools.pairwise(headers):
        if child["height"] == parent["height"] + 1:
            assert child["last_ds_final_block"] == parent["hash"]
            assert child["last_final_block"] == parent["last_ds_final_block"]
        else:
            assert child["last_ds_final_block"] == parent["last_ds_final_block"]
            assert child["last_final_block"] == parent["last_final_block"]
        final = height_of[child["last_final_block"]]
        near_final = height_of[child["last_ds_final_block"]]
        assert final < near_final < child["height"]
    assert facts.final_height < facts.near_final_height < facts.head_height
    # Right after skipped heights finality falls further behind.
    lags = [h["height"] - height_of[h["last_final_block"]] for h in headers[1:]]
    assert max(lags) > 2 and min(lags) == 2


def test_epochs_and_protocol_versions(headers: list[dict[str, Any]], facts: SampleFacts, chain: SampleChain) -> None:
    assert len(facts.epochs) >= 3
    old, new = GENESIS_PROTOCOL_VERSION, LATEST_PROTOCOL_VERSION
    assert old < new
    assert facts.genesis_protocol_version == old
    assert facts.protocol_versions == (old, new)
    assert [e.protocol_version for e in facts.epochs[:2]] == [old, old]
    assert all(e.protocol_version == new for e in facts.epochs[2:])
    assert all(h["latest_protocol_version"] == new for h in headers)
    assert facts.epochs[0].epoch_id == ZERO
    assert facts.epochs[1].epoch_id == facts.genesis_hash
    by_height = {h["height"]: h for h in headers}
    ids = [e.epoch_id for e in facts.epochs]
    assert len(set(ids)) == len(ids)
    for index, epoch in enumerate(facts.epochs):
        if index >= 2:  # epoch T+2 is named after the last block of epoch T
            assert epoch.epoch_id == by_hash_height(headers, facts.epochs[index - 2].last_height)
        for height in range(epoch.first_height, epoch.last_height + 1):
            header = by_height.get(height)
            if header is None or height == facts.genesis_height:
                continue
            assert header["epoch_id"] == epoch.epoch_id
            if index + 1 < len(facts.epochs):
                assert header["next_epoch_id"] == facts.epochs[index + 1].epoch_id
            # Only the first block of an epoch after the first carries epoch sync data.
            first = height == epoch.first_height and index > 0
            assert (header["epoch_sync_data_hash"] is not None) == first
    # Epochs are about epoch_length long; skipped heights can stretch one.
    for epoch in facts.epochs[1:-1]:
        length = epoch.last_height - epoch.first_height + 1
        assert facts.epoch_length <= length <= facts.epoch_length + 3
    assert [e.epoch_id for e in facts.epochs] == [e.epoch_id for e in chain.epochs]


def by_hash_height(headers: list[dict[str, Any]], height: int) -> str:
    return str(next(h["hash"] for h in headers if h["height"] == height))


def test_four_shards_and_chunks(views: list[dict[str, Any]], facts: SampleFacts) -> None:
    assert facts.shard_ids == (0, 1, 2, 3)
    assert len(facts.boundary_accounts) == 3
    for view in views:
        header = view["header"]
        chunks = view["chunks"]
        assert [c["shard_id"] for c in chunks] == list(facts.shard_ids)
        assert len(header["chunk_mask"]) == 4
        assert header["chunks_included"] == sum(header["chunk_mask"])
        for chunk, produced in zip(chunks, header["chunk_mask"], strict=True):
            if produced:
                assert chunk["height_included"] == chunk["height_created"] == header["height"]
                if header["height"] != facts.genesis_height:
                    assert chunk["prev_block_hash"] == header["prev_hash"]
            else:
                assert chunk["height_included"] < header["height"]
            assert 0 <= chunk["gas_used"] <= chunk["gas_limit"]
    assert len(facts.missing_chunks) >= 4


def test_missing_chunk_repeats_the_last_header(views: list[dict[str, Any]]) -> None:
    last: dict[int, dict[str, Any]] = {}
    for view in views:
        for chunk, produced in zip(view["chunks"], view["header"]["chunk_mask"], strict=True):
            if not produced:
                assert chunk == last[chunk["shard_id"]]
            last[chunk["shard_id"]] = chunk


def test_gas_price_moves_within_bounds(headers: list[dict[str, Any]], facts: SampleFacts) -> None:
    prices = [int(h["gas_price"]) for h in headers]
    assert min(prices) == 100_000_000
    assert facts.max_gas_price_seen > facts.min_gas_price_seen
    assert len(set(prices)) > 5
    assert max(prices) < 10**22


def test_chunk_burn_matches_supply(headers: list[dict[str, Any]], views: list[dict[str, Any]]) -> None:
    # Supply falls by what new chunks burn, except at epoch starts where rewards are minted.
    minted_at = 0
    for parent, view in itertools.pairwise(views):
        header = view["header"]
        burnt = sum(
            int(chunk["balance_burnt"])
            for chunk, produced in zip(view["chunks"], header["chunk_mask"], strict=True)
            if produced
        )
        delta = int(header["total_supply"]) - int(parent["header"]["total_supply"])
        if header["epoch_sync_data_hash"] is None:
            assert delta == -burnt
        else:
            assert delta > -burnt
            minted_at += 1
    assert minted_at >= 2


def test_supply_equals_sum_of_balances(chain: SampleChain, headers: list[dict[str, Any]]) -> None:
    balances: dict[str, int] = {}
    rows = list(chain.account_states)
    index = 0
    for header in headers:
        while index < len(rows) and rows[index].height <= header["height"]:
            row = rows[index]
            if row.view_json is None:
                balances.pop(row.account_id, None)
            else:
                view = orjson.loads(row.view_json)
                balances[row.account_id] = int(view["amount"]) + int(view["locked"])
            index += 1
        assert sum(balances.values()) == int(header["total_supply"]), header["height"]


def test_validators_and_authors(views: list[dict[str, Any]], facts: SampleFacts) -> None:
    assert len(facts.validators) >= 4
    for view in views:
        assert view["author"] in facts.validators
        approvals = view["header"]["approvals"]
        if view["header"]["height"] != facts.genesis_height:
            assert len(approvals) == len(facts.validators)
    assert any(None in v["header"]["approvals"] for v in views)
    assert any(v["header"]["validator_proposals"] for v in views)


def test_accounts(facts: SampleFacts, chain: SampleChain) -> None:
    assert len(facts.accounts_at_genesis) >= 50
    assert len(facts.implicit_accounts) >= 10
    assert facts.treasury_account in facts.accounts_at_genesis
    assert facts.registrar_account in facts.accounts_at_genesis
    assert set(facts.validators) <= set(facts.accounts_at_genesis)
    assert any(a.endswith(".localnet") and a.count(".") == 1 for a in facts.all_accounts)
    for account_id in facts.all_accounts:
        assert 2 <= len(account_id) <= 64
        assert 0 <= shard_index(account_id) < 4
    per_shard = [sum(1 for a in facts.all_accounts if shard_index(a) == s) for s in range(4)]
    assert min(per_shard) >= 5
    assert len(facts.created_accounts) >= 1 and len(facts.deleted_accounts) >= 1
    # Locked stake: validators have it at genesis and it grows with rewards.
    for validator in facts.validators:
        heights = facts.change_heights(validator)
        locked = {
            int(orjson.loads(row.view_json)["locked"])
            for row in chain.account_states
            if row.account_id == validator and row.view_json is not None
        }
        assert len(heights) >= 3 and len(locked) >= 3 and min(locked) > 0


@pytest.mark.parametrize("height_offset", [-1, 0, 1])
def test_created_and_deleted_accounts_in_store(facts: SampleFacts, reader: Any, height_offset: int) -> None:
    for account_id, height in facts.created_accounts:
        present = reader.account_json(account_id, height + height_offset) is not None
        assert present == (height_offset >= 0)
    for account_id, height in facts.deleted_accounts:
        present = reader.account_json(account_id, height + height_offset) is not None
        assert present == (height_offset < 0)


def test_contract_accounts(facts: SampleFacts, reader: Any) -> None:
    from nearrpc.sample import wasm

    counter = orjson.loads(reader.account_json(facts.contract_account, facts.head_height))
    assert counter["code_hash"] == facts.contract_code_hash == crypto.code_hash(wasm.COUNTER.code)
    assert counter["storage_usage"] > len(wasm.COUNTER.code)
    assert len(facts.global_contract_accounts) == 2
    members = set()
    for account_id in facts.global_contract_accounts:
        view = orjson.loads(reader.account_json(account_id, facts.head_height))
        assert view["code_hash"] == ZERO
        members |= set(view) & {"global_contract_hash", "global_contract_account_id"}
    assert members == {"global_contract_hash", "global_contract_account_id"}
    plain = orjson.loads(reader.account_json(facts.treasury_account, facts.head_height))
    assert list(plain) == ["amount", "locked", "code_hash", "storage_usage", "storage_paid_at"]
    # The contract's storage grows as it is used.
    first = orjson.loads(reader.account_json(facts.contract_account, facts.genesis_height))
    assert counter["storage_usage"] > first["storage_usage"]


def test_balances_change_over_time(facts: SampleFacts, reader: Any) -> None:
    heights = facts.change_heights("alice.localnet")
    assert len(heights) >= 5
    amounts = [orjson.loads(reader.account_json("alice.localnet", h))["amount"] for h in heights]
    assert len(set(amounts)) == len(amounts)
