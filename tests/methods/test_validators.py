"""`validators`, `EXPERIMENTAL_validators_ordered` and JSON-RPC `health` from a real server over a
SQLite store: the sample chain plus a validators record per epoch (tests/support/read_rows.py).
Every request form, every error with its status, every answer held to this spec and to
upstream 1.2.13's schemas."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from nearrpc.sample import build_sample_store
from nearrpc.spec import validate_component
from tests.support.live_server import running_server
from tests.support.read_rows import ReadRows, fake_hash, serving_read_rows
from tests.support.rpc import Answer, call, checked
from tests.support.upstream_schema import check_upstream

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, ReadRows]]:
    with serving_read_rows(tmp_path_factory.mktemp("validators")) as served:
        yield served


def _answered(reference: Path, http: httpx.Client, method: str, params: Any) -> Answer:
    answer = checked(call(http, method, params), method)
    check_upstream(reference, method, answer.body)
    return answer


def _unit_error(answer: Answer, cause: str, data: str) -> None:
    assert answer.status == 200, answer.raw
    assert answer.error["name"] == "HANDLER_ERROR"
    assert answer.error["cause"] == {"name": cause}  # a unit variant: no info
    assert answer.error["data"] == data


def test_the_latest_epoch_in_every_form(served: tuple[httpx.Client, ReadRows], reference: Path) -> None:
    http, rows = served
    head = rows.blocks[-1]
    latest = rows.validators[-1]
    assert latest.epoch_id == head.epoch_id and latest.height == head.height
    # "latest" is EpochReference's unit variant named by a string, as serde_json reads an enum
    for params in ([None], {"latest": None}, "latest", {"epoch_id": head.epoch_id}):
        answer = _answered(reference, http, "validators", params)
        validate_component("RpcValidatorResponse", answer.result)
        assert answer.raw == orjson.dumps({"jsonrpc": "2.0", "result": orjson.loads(latest.view_json), "id": "t"})


def test_a_finished_epoch_by_its_id_and_by_its_last_block(
    served: tuple[httpx.Client, ReadRows], reference: Path
) -> None:
    http, rows = served
    for record in rows.validators[:-1]:
        last = rows.block_at(record.height)
        expected = orjson.loads(record.view_json)
        for params in ({"epoch_id": record.epoch_id}, {"block_id": last.height}, {"block_id": last.hash},
                       [last.height], [last.hash]):  # fmt: skip
            assert _answered(reference, http, "validators", params).result == expected, params


def test_validators_errors(served: tuple[httpx.Client, ReadRows], reference: Path) -> None:
    http, rows = served
    first = rows.validators[0]
    inside = next(b for b in rows.blocks if b.epoch_id == first.epoch_id and b.height < first.height)
    head = rows.blocks[-1]
    in_current = next(b for b in rows.blocks if b.epoch_id == head.epoch_id and b.height < head.height)
    unavailable: list[Any] = [{"block_id": inside.height}, [inside.hash], {"block_id": in_current.height}]
    for params in unavailable:
        _unit_error(_answered(reference, http, "validators", params), "VALIDATOR_INFO_UNAVAILABLE",
                    "Validator info unavailable")  # fmt: skip
    unknown = fake_hash("no epoch")
    # an unknown epoch or block, a skipped height, and the head (no block after it yet)
    unknown_epochs: list[Any] = [
        {"epoch_id": unknown}, {"block_id": unknown}, {"block_id": 7}, [head.height], {"block_id": 10**6},
    ]  # fmt: skip
    for params in unknown_epochs:
        _unit_error(_answered(reference, http, "validators", params), "UNKNOWN_EPOCH", "Unknown Epoch")


_VARIANTS = "expected one of `epoch_id`, `block_id`, `latest`"


@pytest.mark.parametrize(
    ("params", "detail"),
    [
        # a one-element array: its element is a MaybeBlockId, refused with its own error (no fallback)
        (["x"], "data did not match any variant of untagged enum BlockId"),
        (["latest"], "data did not match any variant of untagged enum BlockId"),
        # anything else is the enum EpochReference itself, read from the value as serde_json reads
        # an externally tagged enum: a string names a unit variant, a map of one member a variant
        # and its value, nothing else names one
        ("block_id", "invalid type: unit variant, expected newtype variant"),
        ("epoch_id", "invalid type: unit variant, expected newtype variant"),
        ("finality", f"unknown variant `finality`, {_VARIANTS}"),
        ("", f"unknown variant ``, {_VARIANTS}"),
        ({}, "invalid value: map, expected map with a single key"),
        ({"latest": None, "block_id": 5}, "invalid value: map, expected map with a single key"),
        ({"foo": 1}, f"unknown variant `foo`, {_VARIANTS}"),
        ({"latest": 1}, "invalid type: integer `1`, expected unit"),
        ({"latest": "x"}, 'invalid type: string "x", expected unit'),
        ({"latest": []}, "invalid type: sequence, expected unit"),
        ({"epoch_id": "short"}, 'invalid value: string "short", expected a base58 hash of 32 bytes'),
        ({"block_id": "x"}, "data did not match any variant of untagged enum BlockId"),
        ({"block_id": None}, "data did not match any variant of untagged enum BlockId"),
        (None, "invalid type: null, expected string or map"),
        (5, "invalid type: integer `5`, expected string or map"),
        (-5, "invalid type: integer `-5`, expected string or map"),
        (1.5, "invalid type: floating point `1.5`, expected string or map"),
        (True, "invalid type: boolean `true`, expected string or map"),
        ([], "invalid type: sequence, expected string or map"),
        ([None, None], "invalid type: sequence, expected string or map"),
    ],
)
def test_validators_refuses_what_nearcore_refuses(
    served: tuple[httpx.Client, ReadRows], params: Any, detail: str
) -> None:
    answer = checked(call(served[0], "validators", params), "validators")
    assert answer.status == 400 and answer.error["cause"]["name"] == "PARSE_ERROR"
    assert answer.error["data"] == f"Failed parsing args: {detail}", answer.error["data"]


def test_validators_ordered_lists_block_producers_by_stake(
    served: tuple[httpx.Client, ReadRows], reference: Path
) -> None:
    http, rows = served
    head = rows.blocks[-1]
    for params in ([None], {}, {"block_id": None}, {"block_id": head.height}, [head.hash]):
        answer = _answered(reference, http, "EXPERIMENTAL_validators_ordered", params)
        validate_component("RpcValidatorsOrderedResponse", answer.result)
        # node2's stake equals node3's in these rows: the account id breaks the tie
        assert [v["account_id"] for v in answer.result] == ["node0", "node1", "node2", "node3"]
        current = {v["account_id"]: v for v in orjson.loads(rows.validators[-1].view_json)["current_validators"]}
        for view in answer.result:
            assert view == {
                "account_id": view["account_id"],
                "public_key": current[view["account_id"]]["public_key"],
                "stake": current[view["account_id"]]["stake"],
                "validator_stake_struct_version": "V1",
            }
    # a block of an earlier epoch: that epoch's producers
    earlier = rows.block_at(rows.validators[1].height)
    assert _answered(reference, http, "EXPERIMENTAL_validators_ordered", [earlier.height]).status == 200
    for unknown_block in ({"block_id": 7}, [fake_hash("no block")]):
        _unit_error(_answered(reference, http, "EXPERIMENTAL_validators_ordered", unknown_block), "UNKNOWN_EPOCH",
                    "Unknown Epoch")  # fmt: skip
    refused: list[tuple[Any, str]] = [
        (None, "invalid type: null, expected struct RpcValidatorsOrderedRequest"),
        ([], "invalid length 0, expected struct RpcValidatorsOrderedRequest with 1 element"),
        # serde_json reads the struct's one field from the array, then refuses what is left over
        ([None, None], "invalid length 2, expected fewer elements in array"),
        (["x", None], "untagged enum BlockId"),  # the element first
        ("latest", 'invalid type: string "latest", expected struct RpcValidatorsOrderedRequest'),
        ({"block_id": -3}, "untagged enum BlockId"),
    ]
    for bad, containing in refused:
        answer = checked(call(http, "EXPERIMENTAL_validators_ordered", bad), "EXPERIMENTAL_validators_ordered")
        assert answer.status == 400 and containing in answer.error["data"], answer.raw


def test_health_answers_null_whatever_the_params(served: tuple[httpx.Client, ReadRows], reference: Path) -> None:
    http, _ = served
    ignored: list[Any] = [None, [], {}, {"anything": 1}]
    for params in ignored:
        answer = _answered(reference, http, "health", params)
        assert answer.raw == b'{"jsonrpc":"2.0","result":null,"id":"t"}'
    by_path = checked(call(http, "health", omit_params=True, path="/health"), "health")
    assert by_path.raw == b'{"jsonrpc":"2.0","result":null,"id":"t"}'  # POST /health: JSON-RPC, GET: the probe


def test_health_is_an_internal_error_when_the_store_cannot_be_read(tmp_path: Path) -> None:
    """As GET /health's 503: here INTERNAL_ERROR (HTTP 500) naming what failed."""
    store = tmp_path / "store.sqlite"
    build_sample_store(store)
    with running_server(store, tmp_path / "server.log") as live, httpx.Client(base_url=live.url) as http:
        assert call(http, "health").status == 200
        store.write_bytes(b"this is not a database any more" * 100)
        answer = checked(call(http, "health"), "health")
        assert answer.status == 500 and answer.error["cause"]["name"] == "INTERNAL_ERROR", answer.raw
        assert http.get("/health").status_code == 503
