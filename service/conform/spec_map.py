"""Which component schemas describe each method's params, result and error, read off the spec.

Each method's path (`POST /<method>`) names its request and response envelopes; the envelopes
name the params, result and error components. Reading them from the document keeps the
checker in step with `spec/openapi.json` when the interface changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from nearrpc.spec import spec_document

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


@cache
def method_schemas() -> dict[str, MethodSchemas]:
    """Per method name, in the spec's path order."""
    document = spec_document()
    components = document["components"]["schemas"]
    found: dict[str, MethodSchemas] = {}
    for path, item in document["paths"].items():
        if path == "/":
            continue
        response = components[_component(_json_schema(item["post"], "200"))]
        shapes = {name: shape["properties"][name] for shape in response["oneOf"] for name in shape["required"]}
        method = path.removeprefix("/")
        found[method] = MethodSchemas(method, _component(shapes["result"]), _component(shapes["error"]))
    return found


def interface_version() -> str:
    return str(spec_document()["info"]["version"])
