"""Unit tests: the GenesisConfig projection and field order, genesis record mapping, and how
input items are told apart."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from nearrpc.ingest.genesis_config import (
    ProjectionError,
    RecordError,
    account_state,
    project_genesis_config,
    record_kind,
)
from nearrpc.ingest.shapes import (
    AccountItem,
    BlockItem,
    ClientConfigItem,
    Context,
    GenesisConfigItem,
    IgnoredItem,
    ProtocolConfigItem,
    ShapeError,
    classify,
)
from nearrpc.nearcore.genesis_fields import GENESIS_DEFAULTS, GENESIS_FIELD_ORDER
from nearrpc.sample import sample_chain
from nearrpc.spec import spec_document
from tests.ingest.genesis_files import genesis_members


def test_field_order_is_the_sample_order_and_the_spec_field_set() -> None:
    sample = orjson.loads(sample_chain().genesis_config_json)
    assert tuple(sample) == GENESIS_FIELD_ORDER
    spec = spec_document()["components"]["schemas"]["GenesisConfig"]
    assert set(spec["properties"]) == set(GENESIS_FIELD_ORDER)
    assert set(GENESIS_DEFAULTS) == set(GENESIS_FIELD_ORDER) - set(spec["required"])


def test_projection_orders_defaults_and_drops() -> None:
    members = genesis_members()
    shuffled = dict(reversed(list(members.items())))
    projected = project_genesis_config({**shuffled, "records": [], "future_field": 1})
    assert tuple(projected.config) == GENESIS_FIELD_ORDER
    assert projected.config["num_chunk_validator_seats"] == GENESIS_DEFAULTS["num_chunk_validator_seats"]
    assert projected.config["epoch_length"] == 500
    assert set(projected.dropped) == {"future_field", "num_block_producer_seats_per_shard",
                                      "avg_hidden_validator_seats_per_shard", "num_chunk_only_producer_seats"}
    assert projected.defaulted == ("shuffle_shard_assignment_for_chunk_producers", "num_chunk_producer_seats",
                                   "num_chunk_validator_seats", "chunk_producer_assignment_changes_limit")
    del members["chain_id"], members["validators"]
    with pytest.raises(ProjectionError, match="lacks required field\\(s\\) chain_id, validators"):
        project_genesis_config(members)


@pytest.mark.parametrize("field", sorted(GENESIS_DEFAULTS))
def test_every_optional_field_a_file_leaves_out_gets_its_default_in_place(field: str) -> None:
    members = {**genesis_members(), **GENESIS_DEFAULTS}
    members[field] = "given"  # not the default, so both ways are seen
    assert project_genesis_config(members).config[field] == "given"
    del members[field]
    projected = project_genesis_config(members)
    assert tuple(projected.config) == GENESIS_FIELD_ORDER
    assert projected.config[field] == GENESIS_DEFAULTS[field] and projected.defaulted == (field,)


def test_account_records_become_account_views() -> None:
    zero = "11111111111111111111111111111111"
    account: dict[str, Any] = {"amount": 5, "locked": "0", "code_hash": zero, "storage_usage": 100, "version": "V2",
               "global_contract_account_id": "f.near", "global_contract_hash": None}
    body = {"account_id": "a.near", "account": account}
    assert account_state(body) == ("a.near", {"amount": "5", "locked": "0", "code_hash": zero, "storage_usage": 100,
                                              "storage_paid_at": 0, "global_contract_account_id": "f.near"})
    assert record_kind({"Data": {"x": 1}}) == ("Data", {"x": 1})
    bad_records: list[object] = [[], {}, {"Account": {}, "Data": {}}]
    for bad in bad_records:
        with pytest.raises(RecordError):
            record_kind(bad)
    with pytest.raises(RecordError, match="must be a decimal string"):
        account_state({"account_id": "a.near", "account": {**account, "amount": "1e24"}})


BLOCK: dict[str, Any] = {"author": "a", "header": {"height": 1}, "chunks": []}
VIEW: dict[str, Any] = {"amount": "1", "locked": "0", "code_hash": "1" * 32, "storage_usage": 1, "storage_paid_at": 0,
                        "block_height": 9, "block_hash": "H"}


def response(result: Any, **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "result": result, "id": 1, **extra}


def test_items_are_told_apart_by_shape() -> None:
    assert classify(BLOCK) == BlockItem(BLOCK)
    assert classify(response(BLOCK)) == BlockItem(BLOCK)
    genesis = orjson.loads(sample_chain().genesis_config_json)
    assert classify(response(genesis)) == GenesisConfigItem(genesis)
    client = orjson.loads(sample_chain().client_config_json)
    assert classify(client) == ClientConfigItem(client)
    config = {"protocol_version": 86, "runtime_config": {}}
    assert classify(response(config, block_hash="H")) == ProtocolConfigItem(config, Context(block_ref="H"))
    assert classify({"request": {"method": "EXPERIMENTAL_protocol_config", "params": {"block_id": 7}},
                     "response": response(config)}) == ProtocolConfigItem(config, Context(block_ref=7))
    assert classify(config) == ProtocolConfigItem(config, Context())


def test_account_views_need_their_account_id() -> None:
    expected = AccountItem("a.near", 9, "H", {k: v for k, v in VIEW.items() if k not in ("block_height", "block_hash")})
    assert classify(response(VIEW, account_id="a.near")) == expected
    assert classify({**VIEW, "account_id": "a.near"}) == expected
    exchange = {"request": {"jsonrpc": "2.0", "method": "EXPERIMENTAL_view_account",
                            "params": {"block_id": 9, "account_id": "a.near"}}, "response": response(VIEW)}
    assert classify(exchange) == expected
    with pytest.raises(ShapeError, match="does not name its account"):
        classify(response(VIEW))


def test_error_responses() -> None:
    unknown = {"name": "HANDLER_ERROR", "cause": {"name": "UNKNOWN_ACCOUNT", "info": {
        "requested_account_id": "gone.near", "block_height": 5, "block_hash": "H"}}}
    assert classify({"jsonrpc": "2.0", "error": unknown, "id": 1}) == AccountItem("gone.near", 5, "H", None)
    block_error = {"name": "HANDLER_ERROR", "cause": {"name": "UNKNOWN_BLOCK", "info": {}}}
    assert classify({"jsonrpc": "2.0", "error": block_error, "id": 1}) == IgnoredItem("error response UNKNOWN_BLOCK")


def test_unknown_shapes_are_refused() -> None:
    with pytest.raises(ShapeError, match=r"not a block, account view, .* \(members: foo, bar\)"):
        classify({"foo": 1, "bar": 2})
    with pytest.raises(ShapeError, match="expected a JSON object"):
        classify([1, 2])
    with pytest.raises(ShapeError, match="unexpected members \\['extra'\\]"):
        classify(response(BLOCK, extra=1))
