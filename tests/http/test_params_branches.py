"""The params branch picked before validating (nearrpc.methods.params.branches) is the branch the
whole union picks, and a request it refuses is worded as before: every recorded request of the
fixtures and a spread of forms and refusals, validated both ways."""

from __future__ import annotations

import copy
import itertools
import json
import pickle
from pathlib import Path
from typing import Any

import pydantic
import pytest

from nearrpc.generated import models
from nearrpc.generated.methods import METHODS, MethodSpec
from nearrpc.methods.errors import RpcError
from nearrpc.methods.params.branches import branch_of, branches
from nearrpc.methods.params.parse import normalise, typed_params

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HASH = "ZgLb3Y85gjYiz7ZNS6nAAeSFNzGWXh1JM4rBZuwx3cN"
KEY = "ed25519:DcA2MzgpJbrUATQLLceocVckhhAqrkingax4oJ9kZ847"
REFERENCES: list[dict[str, Any]] = [
    {"block_id": 5}, {"block_id": HASH}, {"finality": "final"}, {"finality": "optimistic"},
    {"sync_checkpoint": "genesis"}, {"sync_checkpoint": "earliest_available"},
]  # fmt: skip
QUERIES: list[dict[str, Any]] = [
    {"request_type": "view_account", "account_id": "alice.localnet"},
    {"request_type": "view_code", "account_id": "counter.localnet"},
    {"request_type": "view_access_key_list", "account_id": "alice.localnet"},
    {"request_type": "view_access_key", "account_id": "alice.localnet", "public_key": KEY},
    {"request_type": "view_state", "account_id": "counter.localnet", "prefix_base64": ""},
    {"request_type": "view_state", "account_id": "counter.localnet", "prefix_base64": "", "include_proof": True},
    {"request_type": "call_function", "account_id": "token.localnet", "method_name": "ft_total_supply",
     "args_base64": ""},
]  # fmt: skip
REFUSED: list[dict[str, Any]] = [
    {"request_type": "view_account"},  # no account
    {"request_type": "view_account", "account_id": 7},
    {"request_type": "call_function", "account_id": "token.localnet", "method_name": 5, "args_base64": ""},
    {"request_type": "view_state", "account_id": "counter.localnet"},  # no prefix
    {"request_type": "view_access_key", "account_id": "alice.localnet"},  # no key
    {"request_type": "no_such_type", "account_id": "alice.localnet"},
]


def _both_ways(method: MethodSpec, params: object) -> tuple[Any, Any]:
    """typed_params's answer (with the branch picked first) and the whole union's, each a dump of
    the model or the refusal text."""

    def outcome(validate: Any) -> Any:
        try:
            return validate().model_dump(mode="json")
        except RpcError as refused:
            return ("refused", refused.data)

    model = getattr(models, method.params_schema)

    def union() -> Any:
        try:
            return model.model_validate(normalise(method, params), strict=True)
        except pydantic.ValidationError:
            return typed_params(method, params)  # the refusal as typed_params words it

    return outcome(lambda: typed_params(method, params)), outcome(union)


def _recorded() -> list[tuple[str, object]]:
    found = []
    for path in sorted(FIXTURES.glob("*/*.json")):
        body = json.loads(path.read_text())["request"].get("body")
        if isinstance(body, str):  # a body recorded as its raw text
            try:
                body = json.loads(body)
            except ValueError:
                continue
        if isinstance(body, dict) and body.get("method") in METHODS and "params" in body:
            found.append((body["method"], body["params"]))
    return found


RECORDED = _recorded()


def test_every_recorded_request_is_typed_as_the_whole_union_types_it() -> None:
    picked = 0
    for name, params in RECORDED:
        method = METHODS[name]
        typed, union = _both_ways(method, params)
        assert typed == union, (name, params)
        model = getattr(models, method.params_schema)
        normalised = _normalised(method, params)
        branch = branch_of(model, normalised) if method.takes_block_reference else None
        if branch is None:
            continue
        try:  # the branch picked is the one the union picks (not one refused, then the union asked)
            whole = model.model_validate(normalised, strict=True)
        except pydantic.ValidationError:
            continue  # a recorded refusal
        assert type(whole.root) is branch, (name, params, branch)
        picked += 1
    assert len(RECORDED) > 100 and picked > 100, (len(RECORDED), picked)  # the branch path ran


def test_a_picked_branch_is_wrapped_as_the_unions_validator_wraps_it() -> None:
    """typed_params builds the union's instance around the branch's directly: the same instance
    in every respect the union's validator gives (type, `root`, fields set, dumps, copies)."""
    wrapped = 0
    for name, params in RECORDED:
        method = METHODS[name]
        normalised = _normalised(method, params)
        model = getattr(models, method.params_schema)
        if branch_of(model, normalised) is None:
            continue
        try:
            whole = model.model_validate(normalised, strict=True)
        except pydantic.ValidationError:
            continue
        typed = typed_params(method, params)
        assert type(typed) is model and typed == whole, (name, params)
        assert typed.model_fields_set == whole.model_fields_set == {"root"}
        assert repr(typed) == repr(whole) and typed.model_dump_json() == whole.model_dump_json()
        assert pickle.loads(pickle.dumps(typed)) == whole and copy.deepcopy(typed) == whole
        assert model.model_validate(typed, strict=True).root is typed.root  # still the union's own
        wrapped += 1
    assert wrapped > 100, wrapped


def _normalised(method: MethodSpec, params: object) -> object:
    try:
        return normalise(method, params)
    except RpcError:
        return None


@pytest.mark.parametrize("reference", REFERENCES, ids=lambda reference: "-".join(map(str, reference.items())))
def test_every_query_form_and_refusal_reads_the_same_either_way(reference: dict[str, Any]) -> None:
    query = METHODS["query"]
    for request in itertools.chain(QUERIES, REFUSED):
        params = {**request, **reference}
        typed, union = _both_ways(query, params)
        assert typed == union, params
    for name in ("block", "EXPERIMENTAL_view_account", "EXPERIMENTAL_protocol_config", "EXPERIMENTAL_call_function"):
        method = METHODS[name]
        extra = {"account_id": "token.localnet", "method_name": "ft_total_supply", "args_base64": ""}
        for params in ({**reference}, {**reference, **extra}, {**reference, "account_id": 5}):
            assert _both_ways(method, params)[0] == _both_ways(method, params)[1], (name, params)


def test_each_query_branch_has_its_own_key() -> None:
    table = branches(models.RpcQueryRequest)
    request_types = {key[0] for key in table}
    assert {"view_account", "view_state", "call_function", "view_access_key"} <= request_types
    assert {key[1] for key in table} == {"block_id", "finality", "sync_checkpoint"}
    assert len(table) == 3 * len(request_types)


CHANGES: list[dict[str, Any]] = [
    {"changes_type": "account_changes", "account_ids": ["alice.localnet", "counter.localnet"]},
    {"changes_type": "all_access_key_changes", "account_ids": ["alice.localnet"]},
    {"changes_type": "contract_code_changes", "account_ids": ["counter.localnet"]},
    {"changes_type": "data_changes", "account_ids": ["counter.localnet"], "key_prefix_base64": ""},
    {"changes_type": "single_access_key_changes", "keys": [{"account_id": "alice.localnet", "public_key": KEY}]},
]
CHANGES_REFUSED: list[dict[str, Any]] = [
    {"changes_type": "account_changes", "account_ids": ["alice.localnet", "Not An Id"]},
    {"changes_type": "account_changes", "account_ids": "alice.localnet"},  # not a list
    {"changes_type": "data_changes", "account_ids": ["counter.localnet"], "key_prefix_base64": 5},
    {
        "changes_type": "single_access_key_changes",
        "keys": [{"account_id": "alice.localnet", "public_key": "ed25519:x"}],
    },
    {"changes_type": "single_access_key_changes", "keys": [{"account_id": "alice.localnet"}]},
]


@pytest.mark.parametrize("reference", REFERENCES, ids=lambda reference: "-".join(map(str, reference.items())))
def test_a_changes_request_is_validated_against_the_branch_its_changes_type_names(reference: dict[str, Any]) -> None:
    """The whole union checked every asked id once per branch (15 of them); the branch the
    `changes_type` and reference member name is picked first, and it is the one the union picks.
    Refusals read the same either way."""
    model = models.RpcStateChangesInBlockByTypeRequest
    for name in ("EXPERIMENTAL_changes", "changes"):
        method = METHODS[name]
        for request in CHANGES:
            params = {**request, **reference}
            branch = branch_of(model, normalise(method, params))
            assert branch is not None, (name, params)  # picked, not left to the whole union
            assert type(model.model_validate(normalise(method, params), strict=True).root) is branch, params
            typed, union = _both_ways(method, params)
            assert typed == union, params
        for request in CHANGES_REFUSED:
            params = {**request, **reference}
            typed, union = _both_ways(method, params)
            assert typed[0] == "refused" and typed == union, params


def test_each_changes_branch_has_its_own_key() -> None:
    table = branches(models.RpcStateChangesInBlockByTypeRequest)
    changes_types = {"account_changes", "single_access_key_changes", "all_access_key_changes",
                     "contract_code_changes", "data_changes"}  # fmt: skip
    assert set(table) == set(itertools.product(changes_types, ("block_id", "finality", "sync_checkpoint")))
