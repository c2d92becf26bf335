"""Validate JSON values against component schemas of the interface description.

The spec travels with the installed package as `nearrpc/generated/openapi.json` (a byte copy of
`spec/openapi.json` written by `tools.regenerate`), so validation works without the repo.
OpenAPI 3.1 components are plain JSON Schema 2020-12, so jsonschema reads them directly.

Every write to a store is validated, so validation bounds the rate of imports: jsonschema takes
milliseconds for a block. jsonschema-rs (compiled) decides whether a value is valid in tens of
microseconds; only a value it refuses goes through jsonschema, whose verdict and message (the
best-matching error, with its path) are the ones given. A test holds the two to the
same verdicts (tests/spec/test_validation.py).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
import jsonschema_rs
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
def openrpc_bytes() -> bytes:
    """The same interface as an OpenRPC document (`generated/openrpc.json`, from tools.openrpc)."""
    return resources.files("nearrpc.generated").joinpath("openrpc.json").read_bytes()


@cache
def openrpc_compact() -> bytes:
    """The OpenRPC document as compact JSON, the `result` of rpc.discover."""
    return json.dumps(json.loads(openrpc_bytes()), separators=(",", ":"), ensure_ascii=False).encode()


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


@cache
def _fast_validator(component: str) -> jsonschema_rs.Validator:
    validator(component)  # the same KeyError for a component the spec lacks
    schema = {"$ref": f"{_SPEC_URI}#/components/schemas/{component}"}
    registry = jsonschema_rs.Registry([(_SPEC_URI, spec_document())])
    return jsonschema_rs.validator_for(schema, registry=registry)


def validate_component(component: str, instance: object) -> None:
    """Raise SchemaViolation when `instance` does not match `#/components/schemas/<component>`."""
    if _fast_validator(component).is_valid(instance):
        return
    error = jsonschema.exceptions.best_match(validator(component).iter_errors(instance))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise SchemaViolation(f"{component} at {where}: {error.message}")
