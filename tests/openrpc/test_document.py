"""spec/openrpc.json: valid OpenRPC, every method of spec/openapi.json, and what each says."""

from __future__ import annotations

import copy
import json
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest

from nearrpc.methods.errors import CATALOGUE, METHOD_CAUSES, Cause
from tests.openrpc.conftest import OPENAPI, OPENRPC, load, method_of, result_validator
from tools.openrpc import render

DOCUMENT = load(OPENRPC)
SPEC = load(OPENAPI)


def _methods_of_openapi() -> dict[str, dict[str, Any]]:
    """Method name -> its POST /<method> operation."""
    schemas = SPEC["components"]["schemas"]
    found = {}
    for path, item in SPEC["paths"].items():
        if path == "/":
            continue
        envelope = item["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
        (name,) = schemas[envelope]["properties"]["method"]["enum"]
        found[name] = item["post"]
    return found


def test_meta_schema_accepts_the_document(meta_validator: jsonschema.Draft7Validator) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message[:200]}" for e in meta_validator.iter_errors(DOCUMENT)]
    assert errors == []


def test_meta_schema_is_not_a_pass_for_anything(meta_validator: jsonschema.Draft7Validator) -> None:
    """The same validator refuses what OpenRPC does not allow, so its pass above means something."""
    broken = copy.deepcopy(DOCUMENT)
    method_of(broken, "block")["paramStructure"] = "by-shape"
    del broken["methods"][0]["params"]
    broken["components"]["errors"]["HANDLER_ERROR.UNKNOWN_BLOCK"]["code"] = "-32000"
    paths = {tuple(e.absolute_path)[:3] for e in meta_validator.iter_errors(broken)}
    assert paths == {("methods", 0), ("methods", 4), ("components", "errors", "HANDLER_ERROR.UNKNOWN_BLOCK")}


def test_server_urls_are_absolute() -> None:
    """The meta-schema asks for format uri (the OpenRPC generator refuses a relative one), which
    jsonschema checks only with an optional package: checked here."""
    for server in DOCUMENT["servers"]:
        parts = urlsplit(server["url"])
        assert parts.scheme == "http" and parts.netloc, server


def test_it_is_what_regenerate_makes_of_the_spec() -> None:
    assert render(OPENAPI.read_bytes()) == OPENRPC.read_bytes()
    assert render(OPENAPI.read_bytes()) == render(OPENAPI.read_bytes())


def test_every_method_of_the_openapi_spec_is_there_in_its_order() -> None:
    assert [m["name"] for m in DOCUMENT["methods"]] == list(_methods_of_openapi())


def test_extension_methods_are_marked() -> None:
    for name, operation in _methods_of_openapi().items():
        method = method_of(DOCUMENT, name)
        extension = "extension" in operation.get("tags", [])
        assert method.get("x-extension", False) is extension, name
        assert ({"$ref": "#/components/tags/extension"} in method["tags"]) is extension, name
    extensions = {m["name"] for m in DOCUMENT["methods"] if m.get("x-extension")}
    assert extensions == {"status", "gas_price", "query", "EXPERIMENTAL_view_access_key",
                          "EXPERIMENTAL_view_access_key_list", "EXPERIMENTAL_view_code", "EXPERIMENTAL_call_function",
                          "EXPERIMENTAL_view_state", "rpc.discover", "chunk", "tx", "EXPERIMENTAL_tx_status",
                          "EXPERIMENTAL_receipt", "validators", "EXPERIMENTAL_validators_ordered",
                          "EXPERIMENTAL_changes_in_block", "EXPERIMENTAL_changes", "block_effects", "changes",
                          "health", "send_tx", "broadcast_tx_commit", "broadcast_tx_async", "sandbox_patch_state",
                          "sandbox_fast_forward", "sandbox_snapshot", "sandbox_revert"}  # fmt: skip


def _params(name: str) -> dict[str, bool]:
    return {p["name"]: p["required"] for p in method_of(DOCUMENT, name)["params"]}


def test_params_by_name_as_nearcore_takes_them() -> None:
    assert _params("genesis_config") == {} and _params("client_config") == {} and _params("status") == {}
    reference = {"block_id": False, "finality": False, "sync_checkpoint": False}
    assert _params("block") == reference and _params("EXPERIMENTAL_protocol_config") == reference
    assert _params("EXPERIMENTAL_view_account") == {"account_id": True, **reference}
    assert _params("EXPERIMENTAL_view_access_key") == {"account_id": True, "public_key": True, **reference}
    assert _params("gas_price") == {"block_id": False}
    query = _params("query")
    assert query["request_type"] is True and {"account_id", "public_key", "prefix_base64", "finality"} <= set(query)


def test_param_structure_either_only_where_the_positional_form_is_the_named_params() -> None:
    structures = {m["name"]: m["paramStructure"] for m in DOCUMENT["methods"]}
    assert {name for name, s in structures.items() if s == "either"} == {
        "block", "gas_price", "EXPERIMENTAL_validators_ordered",
    }  # fmt: skip
    assert set(structures.values()) == {"either", "by-name"}
    for name in ("block", "gas_price", "EXPERIMENTAL_validators_ordered"):
        method = method_of(DOCUMENT, name)
        assert method["params"][0]["name"] == "block_id"  # [block_id] by position
        assert method["x-positional-params"]["maxItems"] == 1
    # query's legacy [path, data] is kept, but lines up with no named param: by-name
    legacy = method_of(DOCUMENT, "query")["x-positional-params"]["anyOf"]
    assert {branch["maxItems"] for branch in legacy} == {2}


def test_required_params_come_before_optional_ones() -> None:
    for method in DOCUMENT["methods"]:
        flags = [p["required"] for p in method["params"]]
        assert flags == sorted(flags, reverse=True), method["name"]


def _errors(name: str) -> dict[tuple[str, str], dict[str, Any]]:
    found = {}
    for ref in method_of(DOCUMENT, name)["errors"]:
        error = DOCUMENT["components"]["errors"][ref["$ref"].rsplit("/", 1)[1]]
        found[(error["data"]["name"], error["data"]["cause"]["name"])] = error
    return found


@pytest.mark.parametrize("name", list(METHOD_CAUSES))
def test_errors_are_the_catalogue_s(name: str) -> None:
    """Every cause a method answers with (and the request validation ones) is an error object of
    the method, with the catalogue's legacy code and message."""
    errors = _errors(name)
    for cause in (Cause.PARSE_ERROR, Cause.METHOD_NOT_FOUND, *METHOD_CAUSES[name]):
        kind = CATALOGUE[cause]
        error = errors[(kind.name, str(cause))]
        assert (error["code"], error["message"]) == (kind.code, kind.message), (name, cause)
    for (_kind, cause_name), error in errors.items():
        if cause_name in {str(c) for c in Cause}:
            kind = CATALOGUE[Cause(cause_name)]
            assert (error["code"], error["message"]) == (kind.code, kind.message), (name, cause_name)
    assert method_of(DOCUMENT, name)["x-error-schema"]["$ref"].startswith("#/components/schemas/ErrorWrapper_for_")


def test_components_and_examples_are_the_spec_s() -> None:
    assert set(DOCUMENT["components"]["schemas"]) == set(SPEC["components"]["schemas"])
    for name, schema in SPEC["components"]["schemas"].items():
        ours = DOCUMENT["components"]["schemas"][name]
        assert {k: v for k, v in ours.items() if k != "title"} == {k: v for k, v in schema.items() if k != "title"}
    assert {k: v["value"] for k, v in DOCUMENT["components"]["examples"].items()} == {
        k: v["value"] for k, v in SPEC["components"]["examples"].items()
    }


def test_example_pairings_are_the_recorded_answers_and_fit_the_result_schemas() -> None:
    paired = 0
    for method in DOCUMENT["methods"]:
        check = result_validator(DOCUMENT, method["name"])
        names = [p["name"] for p in method["params"]]
        for example in method["examples"]:
            check.validate(example["result"]["value"])
            given = [p["name"] for p in example["params"]]
            assert given == [n for n in names if n in given]  # in the method's order
            paired += 1
    assert paired >= 15
    block = {e["name"]: e for e in method_of(DOCUMENT, "block")["examples"]}
    assert block["positional_height"]["params"][0]["name"] == "block_id"


def test_a_result_schema_refuses_what_it_should() -> None:
    check = result_validator(DOCUMENT, "EXPERIMENTAL_view_account")
    example = method_of(DOCUMENT, "EXPERIMENTAL_view_account")["examples"][0]["result"]["value"]
    check.validate(example)
    with pytest.raises(jsonschema.ValidationError):
        check.validate({**example, "amount": 5})


def test_rpc_discover_is_described_by_its_own_document() -> None:
    check = result_validator(DOCUMENT, "rpc.discover")
    check.validate(json.loads(OPENRPC.read_text(encoding="utf-8")))
    assert method_of(DOCUMENT, "rpc.discover")["params"] == []
