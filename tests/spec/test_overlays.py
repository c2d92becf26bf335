"""Each overlay in spec/overlays.json is registered in DEVIATIONS.md and visible in the spec."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonpointer import JsonPointerException, resolve_pointer

from tests.conftest import REPO
from tools.spec_sync import METHODS, OverlayError, _expand

OVERLAYS = json.loads((REPO / "spec" / "overlays.json").read_text(encoding="utf-8"))
SPEC = json.loads((REPO / "spec" / "openapi.json").read_text(encoding="utf-8"))
REGISTER = (REPO / "spec" / "DEVIATIONS.md").read_text(encoding="utf-8")
IDS = [overlay["id"] for overlay in OVERLAYS["overlays"]]


def _contains(actual: Any, expected: Any) -> bool:
    """`expected` is in `actual`, allowing extra object members and list items that later
    overlays add; `description` texts are ours, replaced after the overlays."""
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
            assert op["value"] in resolve_pointer(SPEC, path)
        else:
            assert _contains(resolve_pointer(SPEC, path), op["value"]), path


def test_templated_overlays_cover_every_method() -> None:
    assert set(OVERLAYS["methods"]) == set(METHODS)


def test_a_generated_value_is_named_and_must_exist() -> None:
    op = {"op": "set", "path": "/components/schemas/CryptoHash/pattern", "value_from": "crypto_hash_pattern"}
    (expanded,) = _expand({"id": "x", "ops": [op]}, OVERLAYS["methods"])
    assert "value_from" not in expanded and expanded["value"].startswith("^(?:")
    with pytest.raises(OverlayError, match="overlay 'x': value_from 'nonexistent' is not a known generated value"):
        list(_expand({"id": "x", "ops": [{**op, "value_from": "nonexistent"}]}, OVERLAYS["methods"]))
