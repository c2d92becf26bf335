"""The generated pydantic models accept real results of each method and reject broken ones."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pydantic
import pytest

from nearrpc.generated import models
from nearrpc.generated.methods import METHODS
from nearrpc.methods.handlers import ChainHandlers
from nearrpc.methods.params import typed_params
from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.sample import build_sample_store, sample_chain
from nearrpc.store import open_store
from tests.support.sample_facts import sample_facts

FACTS = sample_facts()
PARAMS: dict[str, Any] = {
    "genesis_config": None,
    "client_config": None,
    "block": {"finality": "final"},
    "EXPERIMENTAL_protocol_config": {"finality": "final"},
    "EXPERIMENTAL_view_account": {"account_id": FACTS.contract_account, "finality": "final"},
    "status": None,
    "gas_price": [None],
    "query": {"request_type": "view_account", "account_id": FACTS.contract_account, "finality": "final"},
    "EXPERIMENTAL_view_code": {"account_id": FACTS.contract_account, "finality": "final"},
    "EXPERIMENTAL_view_access_key_list": {"account_id": FACTS.contract_account, "finality": "final"},
    "EXPERIMENTAL_view_access_key": {
        "account_id": FACTS.validators[0],
        "public_key": next(k.public_key for k in sample_chain().access_keys if k.account_id == FACTS.validators[0]),
        "finality": "final",
    },
    "rpc.discover": None,
    "EXPERIMENTAL_call_function": {
        "account_id": FACTS.contract_account,
        "method_name": "get_num",
        "args_base64": "",
        "finality": "final",
    },
    "EXPERIMENTAL_view_state": {"account_id": FACTS.token_account, "prefix_base64": "", "finality": "final"},
}
_TRANSFER = FACTS.transaction(action="Transfer")
_CHANGES_AT = {"block_id": _TRANSFER.block_hash}
PARAMS.update({
    "chunk": {"block_id": _TRANSFER.height, "shard_id": _TRANSFER.shard_id},
    "tx": {"tx_hash": _TRANSFER.tx_hash, "sender_account_id": _TRANSFER.signer_id},
    "EXPERIMENTAL_tx_status": {"tx_hash": _TRANSFER.tx_hash, "sender_account_id": _TRANSFER.signer_id},
    "EXPERIMENTAL_receipt": {"receipt_id": _TRANSFER.receipt_ids[0]},
    "validators": [None],
    "EXPERIMENTAL_validators_ordered": [None],
    "EXPERIMENTAL_changes_in_block": _CHANGES_AT,
    "block_effects": _CHANGES_AT,
    "EXPERIMENTAL_changes": {**_CHANGES_AT, "changes_type": "account_changes", "account_ids": [_TRANSFER.signer_id]},
    "changes": {**_CHANGES_AT, "changes_type": "account_changes", "account_ids": [_TRANSFER.signer_id]},
    "health": None,
})  # fmt: skip
# The writing methods answer only with a sandbox chain (tests/sandbox/test_methods_answers.py
# validates their answers against the spec).
WRITING = frozenset({
    "send_tx", "broadcast_tx_commit", "broadcast_tx_async",
    "sandbox_patch_state", "sandbox_fast_forward", "sandbox_snapshot", "sandbox_revert",
})  # fmt: skip
# a required field of each result whose schema has required fields, and a field to break the type of
REQUIRED: dict[str, str | None] = {
    "genesis_config": "chain_id",
    "client_config": None,
    "block": "header",
    "EXPERIMENTAL_protocol_config": None,
    "EXPERIMENTAL_view_account": "amount",
    "status": "sync_info",
    "gas_price": "gas_price",
    "query": "block_height",
    "EXPERIMENTAL_view_code": "code_base64",
    "EXPERIMENTAL_view_access_key_list": "keys",
    "EXPERIMENTAL_view_access_key": "permission",
    "rpc.discover": "methods",
    "EXPERIMENTAL_call_function": "result",
    "EXPERIMENTAL_view_state": "values",
    "chunk": "header",
    "tx": "final_execution_status",
    "EXPERIMENTAL_tx_status": "final_execution_status",
    "EXPERIMENTAL_receipt": "receiver_id",
    "validators": "current_validators",
    "EXPERIMENTAL_validators_ordered": None,  # a list
    "EXPERIMENTAL_changes_in_block": "changes",
    "block_effects": "block_hash",
    "EXPERIMENTAL_changes": "changes",
    "changes": "block_hash",
    "health": None,  # null
}
WRONG_TYPE: dict[str, tuple[str, object]] = {
    "genesis_config": ("epoch_length", [1]),
    "client_config": ("archive", {"yes": True}),
    "block": ("chunks", "none"),
    "EXPERIMENTAL_protocol_config": ("runtime_config", [1, 2]),
    "EXPERIMENTAL_view_account": ("storage_usage", "lots"),
    "status": ("uptime_sec", "long"),
    "gas_price": ("gas_price", [1]),
    "query": ("block_height", "high"),
    "EXPERIMENTAL_view_code": ("hash", 7),
    "EXPERIMENTAL_view_access_key_list": ("keys", {"a": 1}),
    "EXPERIMENTAL_view_access_key": ("nonce", "first"),
    "rpc.discover": ("openrpc", 1.3),
    "EXPERIMENTAL_call_function": ("result", "bytes"),
    "EXPERIMENTAL_view_state": ("values", {"key": "value"}),
    "chunk": ("transactions", {"tx": 1}),
    "tx": ("final_execution_status", "DONE"),
    "EXPERIMENTAL_tx_status": ("final_execution_status", 3),
    "EXPERIMENTAL_receipt": ("receipt", [1]),
    "validators": ("epoch_start_height", "early"),
    "EXPERIMENTAL_changes_in_block": ("changes", {"a": 1}),
    "block_effects": ("block_hash", 5),
    "EXPERIMENTAL_changes": ("changes", "all"),
    "changes": ("block_hash", [1]),
}
# Results that are not objects: the whole result replaced by a value of the wrong type.
WRONG_RESULT: dict[str, object] = {
    "EXPERIMENTAL_validators_ordered": {"validators": []},
    "health": {"status": "ok"},
}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    path: Path = tmp_path_factory.mktemp("models") / "sample.sqlite"
    build_sample_store(path)
    reader = open_store(path, "serve")
    handlers = ChainHandlers(reader, RuntimeParamStore.load())

    async def answer(name: str) -> Any:
        handler = getattr(handlers, METHODS[name].identifier)
        return orjson.loads(await handler(typed_params(METHODS[name], PARAMS[name])))

    yield {name: asyncio.run(answer(name)) for name in PARAMS}
    assert set(PARAMS) == set(METHODS) - WRITING
    asyncio.run(reader.close())


def result_model(method: str) -> type[pydantic.BaseModel]:
    model: type[pydantic.BaseModel] = getattr(models, METHODS[method].result_schema)
    return model


@pytest.mark.parametrize("method", list(PARAMS))
def test_real_results_are_accepted(results: dict[str, Any], method: str) -> None:
    result_model(method).model_validate(results[method])


@pytest.mark.parametrize("method", [m for m, field in REQUIRED.items() if field])
def test_missing_required_field_is_rejected(results: dict[str, Any], method: str) -> None:
    broken = copy.deepcopy(results[method])
    del broken[str(REQUIRED[method])]
    with pytest.raises(pydantic.ValidationError):
        result_model(method).model_validate(broken)


@pytest.mark.parametrize("method", list(PARAMS))
def test_wrong_type_is_rejected(results: dict[str, Any], method: str) -> None:
    if method in WRONG_RESULT:
        broken = WRONG_RESULT[method]
    else:
        field, value = WRONG_TYPE[method]
        broken = copy.deepcopy(results[method])
        broken[field] = value
    with pytest.raises(pydantic.ValidationError):
        result_model(method).model_validate(broken)


def test_nested_required_fields_are_enforced(results: dict[str, Any]) -> None:
    broken = copy.deepcopy(results["block"])
    del broken["header"]["timestamp_nanosec"]
    with pytest.raises(pydantic.ValidationError):
        models.RpcBlockResponse.model_validate(broken)
    broken = copy.deepcopy(results["genesis_config"])
    broken["validators"][0].pop("public_key")
    with pytest.raises(pydantic.ValidationError):
        models.GenesisConfig.model_validate(broken)
