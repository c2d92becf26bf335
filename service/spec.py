"""Validate JSON values against component schemas of the interface description.

The spec travels with the installed package as `nearrpc/generated/openapi.json` (a byte copy of
`spec/openapi.json` written by `tools.regenerate`), so validation works without the repo.
OpenAPI 3.1 components are plain JSON Schema 2020-12, so jsonschema reads them directly.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

_SPEC_URI = "urn:nearrpc:openapi"


class SchemaViolation(ValueError):
    """A value does not match its schema; the message names the schema and the failing path."""


@cache
def spec_document() -> dict[str, Any]:
    text = resources.files("nearrpc.generated").joinpath("openapi.json").read_text(encoding="utf-8")
    document: dict[str, Any] = json.loads(text)
    return document


@cache
def spec_bytes() -> bytes:
    return resources.files("nearrpc.generated").joinpath("openapi.json").read_bytes()


@cache
def _registry() -> Registry[Any]:
    resource: Resource[Any] = Resource.from_contents(spec_document(), default_specification=DRAFT202012)
    registry: Registry[Any] = Registry().with_resource(_SPEC_URI, resource)
    return registry


@cache
def validator(component: str) -> jsonschema.Draft202012Validator:
    if component not in spec_document()["components"]["schemas"]:
        raise KeyError(f"no component schema named {component!r} in the spec")
    schema = {"$ref": f"{_SPEC_URI}#/components/schemas/{component}"}
    return jsonschema.Draft202012Validator(schema, registry=_registry())


def validate_component(component: str, instance: object) -> None:
    """Raise SchemaViolation when `instance` does not match `#/components/schemas/<component>`."""
    error = jsonschema.exceptions.best_match(validator(component).iter_errors(instance))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise SchemaViolation(f"{component} at {where}: {error.message}")
