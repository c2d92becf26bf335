"""Each overlay in spec/overlays.json is registered in DEVIATIONS.md and visible in the spec."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonpointer import JsonPointerException, resolve_pointer, set_pointer

from tests.conftest import REPO
from tests.spec.equivalence import normal_form
from tools.spec_sync import METHODS, OverlayError, Redundancy, _expand, apply_op, build_spec, inline_variant_objects

OVERLAYS = json.loads((REPO / "spec" / "overlays.json").read_text(encoding="utf-8"))
SPEC = json.loads((REPO / "spec" / "openapi.json").read_text(encoding="utf-8"))
REGISTER = (REPO / "spec" / "DEVIATIONS.md").read_text(encoding="utf-8")
IDS = [overlay["id"] for overlay in OVERLAYS["overlays"]]


def _contains(actual: Any, expected: Any) -> bool:
    """`expected` is in `actual`, allowing extra object members and list items that later
    overlays add; `description` texts are ours, replaced after the overlays. Later `form-*`
    overlays restate: a one-member `allOf` of a `$ref` is found as that `$ref`, and an inline
    schema also where a `$ref` in its place leads (a schema moved to a component)."""
    if isinstance(expected, dict) and isinstance(actual, dict) and "allOf" not in actual:
        members = expected.get("allOf")
        if isinstance(members, list) and len(members) == 1 and set(members[0]) == {"$ref"}:
            expected = {("$ref" if k == "allOf" else k): (members[0]["$ref"] if k == "allOf" else v)
                        for k, v in expected.items()}  # fmt: skip
    if isinstance(actual, dict) and isinstance(expected, dict) and "$ref" in actual and "$ref" not in expected:
        actual = resolve_pointer(SPEC, actual["$ref"].removeprefix("#"))
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k == "description" or (k in actual and _contains(actual[k], v)) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) >= len(expected)
            and all(_contains(a, e) for a, e in zip(actual, expected, strict=False))
        )
    return bool(actual == expected)


def test_overlay_ids_are_unique() -> None:
    assert len(IDS) == len(set(IDS))


@pytest.mark.parametrize("overlay_id", IDS)
def test_overlay_is_registered(overlay_id: str) -> None:
    assert f"`{overlay_id}`" in REGISTER


@pytest.mark.parametrize("overlay", OVERLAYS["overlays"], ids=IDS)
def test_overlay_is_visible_in_the_spec(overlay: dict[str, Any]) -> None:
    for op in _expand(overlay, OVERLAYS["methods"]):
        path = op["path"]
        if op["op"] == "remove":
            with pytest.raises(JsonPointerException):
                resolve_pointer(SPEC, path)
        elif op["op"] == "remove_item":
            assert op["value"] not in resolve_pointer(SPEC, path)
        elif op["op"] == "append":
            assert any(_contains(item, op["value"]) for item in resolve_pointer(SPEC, path)), path
        elif op["op"] == "ref_for_single_allof":
            assert _one_member_allofs(resolve_pointer(SPEC, path)) == [], path
        elif op["op"] == "name_nested_objects":
            assert list(inline_variant_objects(path.rsplit("/", 1)[1], resolve_pointer(SPEC, path))) == [], path
        else:
            assert _contains(resolve_pointer(SPEC, path), op["value"]), path


def _one_member_allofs(node: Any, where: str = "") -> list[str]:
    """Where a one-member `allOf` is, under `node`, wherever it stands."""
    found: list[str] = []
    if isinstance(node, dict):
        if isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
            found.append(where)
        for key, value in node.items():
            found += _one_member_allofs(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            found += _one_member_allofs(item, f"{where}/{index}")
    return found


def test_templated_overlays_cover_every_method() -> None:
    assert set(OVERLAYS["methods"]) == set(METHODS)


# The `form-*` overlays restate schemas in forms the client generators take whole
# (tests/clientgen); they must not change what the document accepts, nor any default.
FORM_IDS = [overlay_id for overlay_id in IDS if overlay_id.startswith("form-")]


def _normal_paths(doc: dict[str, Any]) -> Any:
    return normal_form(doc["paths"], doc["components"]["schemas"])


def test_form_overlays_change_no_meaning(reference: Path) -> None:
    upstream = json.loads((reference / "nearcore-openapi.json").read_text(encoding="utf-8"))
    descriptions = json.loads((REPO / "spec" / "descriptions.json").read_text(encoding="utf-8"))
    examples = json.loads((REPO / "spec" / "examples.json").read_text(encoding="utf-8"))
    content_only = {**OVERLAYS, "overlays": [o for o in OVERLAYS["overlays"] if o["id"] not in FORM_IDS]}
    before, _ = build_spec(upstream, content_only, descriptions, examples)
    assert FORM_IDS and before != SPEC
    assert _normal_paths(before) == _normal_paths(SPEC)


@pytest.mark.parametrize(
    ("pointer", "value"),
    [
        ("/components/schemas/GCConfig/properties/gc_step_period/default/secs", 7),  # a default
        ("/components/schemas/RpcViewAccountError_UNKNOWN_ACCOUNT_info/required", ["block_hash"]),  # a hoisted object
        ("/components/schemas/ValidatorStakeView/allOf/1/required", []),
        ("/components/schemas/RpcViewAccountRequest/anyOf/1/required", ["finality"]),
        (
            "/components/schemas/JsonRpcResponse_for_RpcBlockResponse_and_RpcBlockError/oneOf/0/properties/jsonrpc",
            {"const": "1.0", "type": "string"},
        ),
    ],
)
def test_the_normal_form_sees_a_change_of_meaning(pointer: str, value: Any) -> None:
    changed = copy.deepcopy(SPEC)
    set_pointer(changed, pointer, value)
    assert _normal_paths(changed) != _normal_paths(SPEC)


SHARD_SPLIT = "/components/schemas/BlockHeaderView/properties/shard_split"


def test_the_normal_form_sees_a_tuple_opened() -> None:
    """A closed tuple's `items` is dropped only while `maxItems` keeps the array as short."""
    changed = copy.deepcopy(SPEC)
    del resolve_pointer(changed, SHARD_SPLIT)["items"]
    assert _normal_paths(changed) == _normal_paths(SPEC)
    set_pointer(changed, f"{SHARD_SPLIT}/maxItems", 3)
    assert _normal_paths(changed) != _normal_paths(SPEC)
    closed = copy.deepcopy(SPEC)
    set_pointer(closed, f"{SHARD_SPLIT}/maxItems", 3)  # `items` still stops the third member
    assert resolve_pointer(closed, f"{SHARD_SPLIT}/items") == {"not": {}}
    assert _normal_paths(closed) != _normal_paths(changed)


def test_a_generated_value_is_named_and_must_exist() -> None:
    op = {"op": "set", "path": "/components/schemas/CryptoHash/pattern", "value_from": "crypto_hash_pattern"}
    (expanded,) = _expand({"id": "x", "ops": [op]}, OVERLAYS["methods"])
    assert "value_from" not in expanded and expanded["value"].startswith("^(?:")
    with pytest.raises(OverlayError, match="overlay 'x': value_from 'nonexistent' is not a known generated value"):
        list(_expand({"id": "x", "ops": [{**op, "value_from": "nonexistent"}]}, OVERLAYS["methods"]))


def test_ref_for_single_allof_rewrites_schemas_alone_and_refuses_other_members() -> None:
    op = {"op": "ref_for_single_allof", "path": "/components/schemas"}
    ref = {"$ref": "#/components/schemas/B"}
    data = {"allOf": [ref]}  # in `default` and `examples` it is a value, not a schema
    doc: dict[str, Any] = {"components": {"schemas": {
        "A": {"properties": {"x": {"allOf": [ref], "default": 1}, "y": {"items": {"allOf": [ref]}}},
              "anyOf": [{"allOf": [ref]}, {"allOf": [ref, {"type": "integer"}]}],
              "default": data, "examples": [data]},
        "B": {"type": "integer"},
    }}}  # fmt: skip
    assert apply_op(doc, op, "x") is None
    assert doc["components"]["schemas"]["A"] == {
        "properties": {"x": {**ref, "default": 1}, "y": {"items": ref}},
        "anyOf": [ref, {"allOf": [ref, {"type": "integer"}]}],
        "default": data, "examples": [data],
    }  # fmt: skip
    assert apply_op(doc, op, "x") == Redundancy("ref_for_single_allof /components/schemas")
    doc["components"]["schemas"]["C"] = {"properties": {"z": {"allOf": [{"type": "string"}]}}}
    with pytest.raises(OverlayError, match="overlay 'x', ref_for_single_allof /components/schemas: a one-member"):
        apply_op(doc, op, "x")
