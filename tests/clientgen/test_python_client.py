"""A Python client generated from spec/openapi.json by openapi-python-client calls the five methods and the extension.

Every answer is parsed by the generated code itself (`sync_detailed`): results into the
generated result models, errors into the generated error wrappers, causes and infos.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import attrs
import httpx
import orjson
import pytest

from nearrpc.sample import sample_chain
from tests.clientgen.conftest import SPEC, GeneratedPythonClient
from tests.support.live_server import LiveServer
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.live

# the API module (in the folder of the operation's tag) and the request/response model names the
# generator gives each method
API = {
    "genesis_config": (
        "configs.genesis_config", "GenesisConfig", "JsonRpcResponseForGenesisConfigAndGenesisConfigError"
    ),
    "client_config": (
        "configs.client_config", "ClientConfig", "JsonRpcResponseForRpcClientConfigResponseAndRpcClientConfigError"
    ),
    "block": ("blocks.block", "Block", "JsonRpcResponseForRpcBlockResponseAndRpcBlockError"),
    "EXPERIMENTAL_protocol_config": (
        "configs.experimental_protocol_config", "EXPERIMENTALProtocolConfig",
        "JsonRpcResponseForRpcProtocolConfigResponseAndRpcProtocolConfigError",
    ),
    "EXPERIMENTAL_view_account": (
        "accounts.experimental_view_account", "EXPERIMENTALViewAccount",
        "JsonRpcResponseForRpcViewAccountResponseAndRpcViewAccountError",
    ),
    # beyond interface 1.2.14
    "status": ("extension.status", "Status", "JsonRpcResponseForRpcStatusResponseAndRpcStatusError"),
    "gas_price": ("extension.gas_price", "GasPrice", "JsonRpcResponseForRpcGasPriceResponseAndRpcGasPriceError"),
    "EXPERIMENTAL_view_code": (
        "extension.experimental_view_code", "EXPERIMENTALViewCode",
        "JsonRpcResponseForRpcViewCodeResponseAndRpcViewCodeError",
    ),
    "EXPERIMENTAL_view_access_key_list": (
        "extension.experimental_view_access_key_list", "EXPERIMENTALViewAccessKeyList",
        "JsonRpcResponseForRpcViewAccessKeyListResponseAndRpcViewAccessKeyListError",
    ),
}  # fmt: skip


@dataclass(frozen=True)
class Answer:
    status: int
    raw: dict[str, Any]  # the JSON the server sent
    parsed: Any  # what the generated client made of it


def call(client: GeneratedPythonClient, server: LiveServer, method: str, params: Any = None) -> Answer:
    """POST one request through the generated client's API function for `method`."""
    api_module, request_name, _ = API[method]
    models = client.module("models")
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": f"gen-{method}", "method": method}
    if params is not None:
        body["params"] = params
    request = getattr(models, f"JsonRpcRequestFor{request_name}").from_dict(body)
    with client.module("client").Client(base_url=server.url, timeout=httpx.Timeout(30.0)) as http:
        response = client.module(f"api.{api_module}").sync_detailed(client=http, body=request)
    answer = Answer(int(response.status_code), orjson.loads(response.content), response.parsed)
    # the envelope is typed too, whichever branch the answer took
    assert (answer.parsed.jsonrpc, answer.parsed.id) == ("2.0", body["id"]), answer.raw
    assert unnamed_members(answer.parsed) == [], answer.raw  # the spec names every member sent
    return answer


def same_json(parsed: Any, raw: Any) -> bool:
    """`to_dict()` of a parsed answer equals the JSON received. One allowance: Python's datetime
    holds microseconds, so a `date-time` string with nanoseconds comes back truncated."""
    if isinstance(parsed, dict) and isinstance(raw, dict):
        return parsed.keys() == raw.keys() and all(same_json(parsed[k], raw[k]) for k in raw)
    if isinstance(parsed, list) and isinstance(raw, list):
        return len(parsed) == len(raw) and all(same_json(p, r) for p, r in zip(parsed, raw, strict=True))
    if type(parsed) is not type(raw):
        return False
    if parsed == raw:
        return True
    try:
        return isinstance(raw, str) and datetime.fromisoformat(parsed) == datetime.fromisoformat(raw)
    except ValueError:
        return False


def unnamed_members(value: Any, path: str = "") -> list[str]:
    """Members the server sent that the generated models have no field for, at any depth (they
    land in `additional_properties`). Models without fields are maps: all their members are."""
    if attrs.has(type(value)):
        fields = [field.name for field in attrs.fields(type(value)) if field.name != "additional_properties"]
        extra: dict[str, Any] = getattr(value, "additional_properties", {})
        found = [f"{path or '/'}: {sorted(extra)}"] if fields and extra else []
        for name in fields:
            found += unnamed_members(getattr(value, name), f"{path}/{name}")
        for key, member in extra.items():
            found += unnamed_members(member, f"{path}/{key}")
        return found
    if isinstance(value, list):
        return [found for index, item in enumerate(value) for found in unnamed_members(item, f"{path}/{index}")]
    return []


def test_the_generator_takes_the_spec_whole(python_client: GeneratedPythonClient, record_property: Any) -> None:
    record_property("terminal_summary", f"openapi-python-client on {SPEC.name}: {python_client.report.strip()}")
    assert python_client.returncode == 0, python_client.report
    assert python_client.report == f"Generating {python_client.project}\n"  # no warning, no schema dropped
    models = python_client.module("models")
    # what 0.29 used to drop: the two results, the configs with object defaults, the error variants
    # (the causes with one variant are one model each: `form-one-member-oneof`)
    for name in ("GenesisConfig", "RpcClientConfigResponse", "GCConfig", "CloudArchivalWriterConfig",
                 "InternalError", "RpcClientConfigError", "BandwidthRequests"):  # fmt: skip
        assert hasattr(models, name), name
    schemas = json.loads(SPEC.read_text(encoding="utf-8"))["components"]["schemas"]
    for union in (
        "RpcBlockError", "RpcViewAccountError", "RpcProtocolConfigError", "RpcRequestValidationErrorKind",
        "ExternalStorageLocation",
    ):  # fmt: skip
        for index in range(len(schemas[union]["oneOf"])):
            assert hasattr(models, f"{union}Type{index}"), f"{union}Type{index}"


def _genesis(result: Any) -> None:
    facts = sample_facts()
    assert (result.chain_id, result.genesis_height) == (facts.chain_id, facts.genesis_height)
    assert result.epoch_length == facts.epoch_length
    assert [validator.account_id for validator in result.validators] == list(facts.validators)
    assert result.shard_layout.v2.shard_ids == list(facts.shard_ids)
    assert isinstance(result.genesis_time, datetime)


def _client_config(result: Any) -> None:
    stored = orjson.loads(sample_chain().client_config_json)
    assert result.chain_id == sample_facts().chain_id
    assert result.gc.gc_step_period.to_dict() == stored["gc"]["gc_step_period"]


def _block(result: Any) -> None:
    facts = sample_facts()
    assert (result.header.height, result.header.hash_) == (facts.final_height, facts.final_hash)
    assert len(result.chunks) == len(facts.shard_ids)


def _protocol_config(result: Any) -> None:
    facts = sample_facts()
    assert result.protocol_version == facts.epoch_at(facts.genesis_height).protocol_version
    assert result.chain_id == facts.chain_id


def _view_account(result: Any) -> None:
    facts = sample_facts()
    stored = next(
        orjson.loads(row.view_json)
        for row in reversed(sample_chain().account_states)
        if row.account_id == facts.treasury_account and row.view_json is not None
    )
    assert (result.amount, result.code_hash) == (stored["amount"], stored["code_hash"])
    assert result.block_height == facts.head_height


def _status(result: Any) -> None:
    facts = sample_facts()
    assert (result.chain_id, result.genesis_hash) == (facts.chain_id, facts.genesis_hash)
    assert [v.account_id for v in result.validators] == list(facts.validators)


def _gas_price(result: Any) -> None:
    head = orjson.loads(sample_chain().blocks[-1].view_json)
    assert result.gas_price == head["header"]["gas_price"]


def _view_code(result: Any) -> None:
    assert result.hash_ == sample_facts().contract_code_hash


def _access_key_list(result: Any) -> None:
    treasury = sample_facts().treasury_account
    expected = {row.public_key for row in sample_chain().access_keys if row.account_id == treasury}
    assert {key.public_key for key in result.keys} == expected


def _proposal_height() -> int:
    """The first stored block whose header carries validator proposals."""
    return next(
        block.height
        for block in sample_chain().blocks
        if orjson.loads(block.view_json)["header"]["validator_proposals"]
    )


def _block_with_proposals(result: Any) -> None:
    stored = orjson.loads(next(b.view_json for b in sample_chain().blocks if b.height == _proposal_height()))
    proposals = result.header.validator_proposals
    assert proposals and [p.to_dict() for p in proposals] == stored["header"]["validator_proposals"]
    assert {p.validator_stake_struct_version for p in proposals} == {"V1"}


@dataclass(frozen=True)
class ResultCase:
    name: str
    method: str
    params: Callable[[], Any]
    model: str  # the generated result model
    check: Callable[[Any], None]


RESULTS = [
    ResultCase("genesis_config", "genesis_config", lambda: None, "GenesisConfig", _genesis),
    ResultCase("client_config", "client_config", lambda: [], "RpcClientConfigResponse", _client_config),
    ResultCase("block", "block", lambda: {"finality": "final"}, "RpcBlockResponse", _block),
    ResultCase("block-with-proposals", "block", lambda: {"block_id": _proposal_height()}, "RpcBlockResponse",
               _block_with_proposals),
    ResultCase("protocol_config", "EXPERIMENTAL_protocol_config", lambda: {"sync_checkpoint": "genesis"},
               "RpcProtocolConfigResponse", _protocol_config),
    ResultCase("view_account", "EXPERIMENTAL_view_account",
               lambda: {"account_id": sample_facts().treasury_account, "finality": "optimistic"},
               "RpcViewAccountResponse", _view_account),
    ResultCase("status", "status", lambda: None, "RpcStatusResponse", _status),
    ResultCase("gas_price", "gas_price", lambda: [None], "RpcGasPriceResponse", _gas_price),
    ResultCase("view_code", "EXPERIMENTAL_view_code",
               lambda: {"account_id": sample_facts().contract_account, "finality": "final"},
               "RpcViewCodeResponse", _view_code),
    ResultCase("access_key_list", "EXPERIMENTAL_view_access_key_list",
               lambda: {"account_id": sample_facts().treasury_account, "finality": "final"},
               "RpcViewAccessKeyListResponse", _access_key_list),
]  # fmt: skip


@pytest.mark.parametrize("case", RESULTS, ids=[case.name for case in RESULTS])
def test_results_parse_into_the_generated_models(
    case: ResultCase, python_client: GeneratedPythonClient, server: LiveServer
) -> None:
    answer = call(python_client, server, case.method, case.params())
    models = python_client.module("models")
    envelope = API[case.method][2]
    assert answer.status == 200 and "result" in answer.raw
    assert isinstance(answer.parsed, getattr(models, f"{envelope}Type0")), type(answer.parsed)
    result = answer.parsed.result
    assert isinstance(result, getattr(models, case.model)), type(result)
    assert same_json(answer.parsed.to_dict(), answer.raw)  # parsed whole: nothing lost, nothing altered
    case.check(result)


NO_SUCH_HASH = "11111111111111111111111111111111"  # base58 of 32 zero bytes: no block has it


@dataclass(frozen=True)
class ErrorCase:
    name: str
    method: str
    params: Callable[[], Any]
    store: str  # "sample" or "empty"
    status: int
    wrapper: int  # index of the ErrorWrapper variant: 0 request validation, 1 handler, 2 internal
    cause: str  # the generated cause model
    info: str | None  # the generated info model


ERRORS = [
    ErrorCase("genesis-internal", "genesis_config", lambda: None, "empty", 500, 2, "InternalError",
              "InternalErrorINTERNALERRORInfo"),
    ErrorCase("client-config-internal", "client_config", lambda: None, "empty", 500, 2, "InternalError",
              "InternalErrorINTERNALERRORInfo"),
    ErrorCase("block-unknown", "block", lambda: {"block_id": NO_SUCH_HASH}, "sample", 200, 1, "RpcBlockErrorType0",
              "RpcBlockErrorUNKNOWNBLOCKInfo"),
    ErrorCase("block-not-synced", "block", lambda: {"sync_checkpoint": "earliest_available"}, "empty", 200, 1,
              "RpcBlockErrorType1", None),
    ErrorCase("protocol-config-unknown", "EXPERIMENTAL_protocol_config",
              lambda: {"block_id": sample_facts().skipped_heights[0]}, "sample", 422, 1, "RpcProtocolConfigErrorType0",
              "RpcProtocolConfigErrorUNKNOWNBLOCKInfo"),
    ErrorCase("view-account-unknown", "EXPERIMENTAL_view_account",
              lambda: {"account_id": "nobody-here.near", "finality": "final"}, "sample", 200, 1,
              "RpcViewAccountErrorType2", "RpcViewAccountErrorUNKNOWNACCOUNTInfo"),
    ErrorCase("view-account-parse-error", "EXPERIMENTAL_view_account",
              lambda: {"account_id": "Not An Account!", "finality": "final"}, "sample", 400, 0,
              "RpcRequestValidationErrorKindType1", "RpcRequestValidationErrorKindPARSEERRORInfo"),
]  # fmt: skip


@pytest.mark.parametrize("case", ERRORS, ids=[case.name for case in ERRORS])
def test_errors_parse_into_the_generated_error_models(
    case: ErrorCase, python_client: GeneratedPythonClient, server: LiveServer, empty_server: LiveServer
) -> None:
    live = server if case.store == "sample" else empty_server
    answer = call(python_client, live, case.method, case.params())
    models = python_client.module("models")
    _, _, envelope = API[case.method]
    wrapper_union = envelope.removeprefix("JsonRpcResponseFor").split("And", 1)[1]
    assert answer.status == case.status and "error" in answer.raw, answer.raw
    assert isinstance(answer.parsed, getattr(models, f"{envelope}Type1")), type(answer.parsed)
    error = answer.parsed.error
    assert isinstance(error, getattr(models, f"ErrorWrapperFor{wrapper_union}Type{case.wrapper}")), type(error)
    assert isinstance(error.cause, getattr(models, case.cause)), type(error.cause)
    assert case.info is None or isinstance(error.cause.info, getattr(models, case.info)), type(error.cause.info)
    assert (error.code, error.message) == (answer.raw["error"]["code"], answer.raw["error"]["message"])
    assert same_json(answer.parsed.to_dict(), answer.raw)
