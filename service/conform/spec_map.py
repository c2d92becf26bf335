"""Which component schemas describe each method's params, result and error, read off the spec.

Each method's path (`POST /<method>`) names its request and response envelopes; the envelopes
name the params, result and error components. Reading them from the document keeps the
checker in step with `spec/openapi.json` when the interface changes. The document is the
packaged spec unless `use_interface` names another (`nearrpc conform --spec FILE`); a method it
does not describe is held to no schema (`UNDESCRIBED`), which the report's notes say.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import jsonschema
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from nearrpc.conform.spec_source import UNDESCRIBED, Interface
from nearrpc.spec import spec_document, validator

_ACTIVE: list[Interface] = []  # the interface named by --spec, if any (one run per process)
_FILE_URI = "urn:nearrpc:conform-spec"

_REF_PREFIX = "#/components/schemas/"


@dataclass(frozen=True, slots=True)
class MethodSchemas:
    method: str
    result: str  # e.g. RpcBlockResponse
    error: str  # e.g. ErrorWrapper_for_RpcBlockError


def _component(ref_holder: dict[str, Any]) -> str:
    ref = ref_holder["$ref"]
    if not ref.startswith(_REF_PREFIX):
        raise ValueError(f"unexpected reference {ref!r} in the spec")
    return str(ref[len(_REF_PREFIX) :])


def _json_schema(operation: dict[str, Any], status: str) -> dict[str, Any]:
    schema: dict[str, Any] = operation["responses"][status]["content"]["application/json"]["schema"]
    return schema


class _Schemas(dict[str, MethodSchemas]):
    def __init__(self) -> None:
        super().__init__()
        self.undescribed: set[str] = set()  # methods asked for that the document lacks

    def __missing__(self, method: str) -> MethodSchemas:
        self.undescribed.add(method)
        return MethodSchemas(method, UNDESCRIBED, UNDESCRIBED)


def undescribed_methods() -> list[str]:
    """The methods the checker asked the interface in use for and found no description of."""
    schemas = method_schemas()
    return sorted(schemas.undescribed) if isinstance(schemas, _Schemas) else []


def use_interface(interface: Interface) -> None:
    """Judge answers by `interface` from now on (instead of the packaged spec)."""
    _ACTIVE[:] = [interface]
    method_schemas.cache_clear()
    component_validator.cache_clear()


def _document() -> dict[str, Any]:
    return _ACTIVE[0].document if _ACTIVE else spec_document()


@cache
def component_validator(component: str) -> jsonschema.Draft202012Validator:
    """The validator of `#/components/schemas/<component>` of the interface in use."""
    if not _ACTIVE:
        return validator(component)
    if component == UNDESCRIBED:
        return jsonschema.Draft202012Validator({})
    resource = DRAFT202012.create_resource(_ACTIVE[0].document)
    registry: Registry[Any] = Registry().with_resource(_FILE_URI, resource)
    return jsonschema.Draft202012Validator({"$ref": f"{_FILE_URI}#/components/schemas/{component}"}, registry=registry)


@cache
def method_schemas() -> dict[str, MethodSchemas]:
    """Per method name, in the spec's path order; a method it does not have: UNDESCRIBED."""
    document = _document()
    components = document["components"]["schemas"]
    found = _Schemas()
    for path, item in document["paths"].items():
        if path == "/":
            continue
        response = components[_component(_json_schema(item["post"], "200"))]
        shapes = {name: shape["properties"][name] for shape in response["oneOf"] for name in shape["required"]}
        method = path.removeprefix("/")
        found[method] = MethodSchemas(method, _component(shapes["result"]), _component(shapes["error"]))
    return found


def interface_version() -> str:
    return str(_document().get("info", {}).get("version", "?"))
