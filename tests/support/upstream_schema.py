"""Answers held to nearcore's own published description (the upstream OpenAPI document 1.2.13
in the reference data), not only to this project's spec: what a client generated from the
upstream document must accept."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

UPSTREAM_1_2_13 = Path("upstream") / "nearcore-openapi-1.2.13.json"
_URI = "urn:nearcore:openapi-1.2.13"


@cache
def _document(reference: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((reference / UPSTREAM_1_2_13).read_text(encoding="utf-8"))
    return document


@cache
def _validator(reference: Path, method: str) -> jsonschema.Draft202012Validator:
    document = _document(reference)
    response = document["paths"][f"/{method}"]["post"]["responses"]["200"]["content"]["application/json"]
    registry: Registry[Any] = Registry().with_resource(
        _URI, Resource.from_contents(document, default_specification=DRAFT202012)
    )
    return jsonschema.Draft202012Validator({"$ref": _URI + response["schema"]["$ref"]}, registry=registry)


def check_upstream(reference: Path, method: str, body: Any) -> None:
    """Fail with the best-matching error when `body` is no answer of `method` upstream allows."""
    error = jsonschema.exceptions.best_match(_validator(reference, method).iter_errors(body))
    where = None if error is None else list(error.absolute_path)
    assert error is None, f"{method}: upstream 1.2.13 refuses the answer at {where}: {error.message}"


@cache
def _component_validator(reference: Path, name: str) -> jsonschema.Draft202012Validator:
    document = _document(reference)
    if name not in document["components"]["schemas"]:
        raise KeyError(f"upstream 1.2.13 has no component {name}")
    registry: Registry[Any] = Registry().with_resource(
        _URI, Resource.from_contents(document, default_specification=DRAFT202012)
    )
    return jsonschema.Draft202012Validator({"$ref": f"{_URI}#/components/schemas/{name}"}, registry=registry)


def check_component(reference: Path, name: str, value: Any) -> None:
    """Fail with the best-matching error when `value` is no `name` (a component schema) upstream allows."""
    error = jsonschema.exceptions.best_match(_component_validator(reference, name).iter_errors(value))
    where = None if error is None else list(error.absolute_path)
    assert error is None, f"{name}: upstream 1.2.13 refuses the value at {where}: {error.message}"
