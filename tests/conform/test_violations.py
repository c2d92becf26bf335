"""Schema violations name the faulty field itself, also inside unions and nullable members."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from nearrpc.conform.answers import error_violations
from nearrpc.conform.violations import Kind, Violation, field_path, schema_violations
from nearrpc.sample import sample_chain


@pytest.fixture(scope="module")
def block() -> dict[str, Any]:
    value: dict[str, Any] = orjson.loads(sample_chain().blocks[-1].view_json)
    return value


@pytest.fixture(scope="module")
def genesis() -> dict[str, Any]:
    value: dict[str, Any] = orjson.loads(sample_chain().genesis_config_json)
    return value


def found(component: str, value: object) -> set[tuple[str, Kind]]:
    return {(v.path, v.kind) for v in schema_violations(component, value, "result")}


def test_real_answers_have_no_violations(block: dict[str, Any], genesis: dict[str, Any]) -> None:
    assert schema_violations("RpcBlockResponse", block, "result") == []
    assert schema_violations("GenesisConfig", genesis, "result") == []


def test_each_broken_field_is_named_once_by_its_path(block: dict[str, Any]) -> None:
    broken = copy.deepcopy(block)
    del broken["header"]["hash"]
    broken["header"]["height"] = -1
    broken["chunks"][1]["gas_used"] = "12"
    broken["author"] = 7
    assert found("RpcBlockResponse", broken) == {
        ("result.header.hash", Kind.MISSING),
        ("result.header.height", Kind.RANGE),
        ("result.chunks[1].gas_used", Kind.TYPE),
        ("result.author", Kind.TYPE),
    }


def test_a_field_inside_a_nullable_member_is_named_not_its_container(block: dict[str, Any]) -> None:
    broken = copy.deepcopy(block)
    chunk = next(c for c in broken["chunks"] if c["congestion_info"] is not None)
    index = broken["chunks"].index(chunk)
    chunk["congestion_info"]["allowed_shard"] = -5  # congestion_info: a CongestionInfoView or null
    assert found("RpcBlockResponse", broken) == {(f"result.chunks[{index}].congestion_info.allowed_shard", Kind.RANGE)}


def test_an_extra_member_of_a_closed_union_variant_is_named(genesis: dict[str, Any]) -> None:
    broken = copy.deepcopy(genesis)
    broken["shard_layout"]["V9"] = {}  # ShardLayout variants: one member each, no others
    assert found("GenesisConfig", broken) == {("result.shard_layout.V9", Kind.EXTRA)}


def test_a_tag_no_variant_has_is_named_with_every_allowed_value() -> None:
    error = {
        "name": "HANDLER_ERROR",
        "cause": {"name": "ACCOUNT_NOT_FOUND", "info": {}},
        "code": -32000,
        "message": "Server error",
        "data": "x",
    }
    (violation,) = schema_violations("ErrorWrapper_for_RpcViewAccountError", error, "error")
    assert (violation.path, violation.kind) == ("error.cause.name", Kind.BAD_VALUE)
    for cause in ("UNKNOWN_BLOCK", "UNKNOWN_ACCOUNT", "INTERNAL_ERROR"):
        assert cause in violation.message


def test_no_clear_variant_is_reported_at_the_union() -> None:
    # a cause without `name` fits no variant better than another
    error = {"name": "HANDLER_ERROR", "cause": {"info": {}}, "code": -32000, "message": "Server error"}
    assert schema_violations("ErrorWrapper_for_RpcBlockError", error, "error") == [
        Violation("error.cause", Kind.SHAPE, "matches none of the 3 shapes the spec allows")
    ]


def test_paths_read_like_the_json() -> None:
    assert field_path("result", ["chunks", 3, "gas_used"]) == "result.chunks[3].gas_used"
    assert field_path("", ["a", "b"]) == "a.b"


UNKNOWN_BLOCK_ERROR: dict[str, Any] = {
    "name": "HANDLER_ERROR", "cause": {"name": "UNKNOWN_BLOCK", "info": {}}, "code": -32000,
    "message": "Server error", "data": "DB Not Found Error: BLOCK HEIGHT: 7 \n Cause: Unknown",
}  # fmt: skip


def test_an_error_as_nearcore_sends_it_has_no_violations() -> None:
    assert error_violations("block", "ErrorWrapper_for_RpcBlockError", UNKNOWN_BLOCK_ERROR) == []


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"data": None}, "error.data"),  # None: the member left out
        ({"code": -32603}, "error.code"),
        ({"message": "Internal error"}, "error.message"),
        ({"cause": {"name": "UNKNOWN_BLOCK"}}, "error.cause.info"),
        ({"cause": {"name": "UNKNOWN_ACCOUNT", "info": {}}}, "error.cause.name"),
    ],
)
def test_each_departure_from_nearcores_error_rules_is_named(change: dict[str, Any], path: str) -> None:
    error = {key: value for key, value in {**UNKNOWN_BLOCK_ERROR, **change}.items() if value is not None}
    found = error_violations("block", "ErrorWrapper_for_RpcBlockError", error)
    assert any(violation.path == path and violation.kind is Kind.RULE for violation in found), found
