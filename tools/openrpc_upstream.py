"""Read an upstream OpenRPC document (nearcore's openrpc.json) into the OpenAPI shape that
tools.spec_sync works on, so a bump from either format gets the same field-level report.

spec_sync compares documents through each method's request and response envelope schemas
(spec/overlays.json `methods`: `JsonRpcRequest_for_<method>`, `JsonRpcResponse_for_...`). An
OpenRPC document describes a method by its params and result, so those envelopes are built here
in nearcore's OpenAPI shape (`id`, `jsonrpc`, `method`, `params`; `result` or `error`), around:

* params: the document's own params schema when its components have the one spec_sync names
  (nearcore's `RpcBlockRequest`: the alternatives a params list cannot say), else an object of
  the params list; a params list naming other members than that schema is noted;
* result: the method's result schema;
* errors: the method's `x-error-schema` (this project's OpenRPC documents), else none: nearcore's
  OpenRPC document describes no errors, and that is noted, not filled in.

Nothing is dropped silently: every method of ours the document lacks, every method without an
error description and every params disagreement comes back as a note for the report.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

Json = Any
_REF = "#/components/schemas/"


def is_openrpc(document: Json) -> bool:
    return isinstance(document, dict) and "openrpc" in document


@dataclass
class Converted:
    document: dict[str, Json]
    notes: list[str] = field(default_factory=list)
    without_errors: set[str] = field(default_factory=set)  # methods whose errors it does not describe


def _members(schema: Json, schemas: dict[str, Json], seen: frozenset[str] = frozenset()) -> set[str]:
    """The member names an object schema (or its alternatives, or their parts) can have."""
    if not isinstance(schema, dict):
        return set()
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF) and ref[len(_REF) :] not in seen:
        name = ref[len(_REF) :]
        return _members(schemas.get(name), schemas, seen | {name})
    found = set(schema.get("properties", {}))
    for key in ("oneOf", "anyOf", "allOf"):
        for branch in schema.get(key, []):
            found |= _members(branch, schemas, seen)
    return found


def _params_schema(method: dict[str, Json], name: str, schemas: dict[str, Json], notes: list[str]) -> Json:
    listed = {p["name"]: p for p in method.get("params", []) if isinstance(p, dict) and "name" in p}
    if name in schemas:
        members = _members(schemas[name], schemas)
        if members != set(listed):
            notes.append(
                f"{method['name']}: its params list names {sorted(listed) or 'nothing'}, its {name} schema "
                f"{sorted(members) or 'nothing'}; compared by the schema"
            )
        return {"$ref": _REF + name}
    schemas[name] = {
        "properties": {n: copy.deepcopy(p["schema"]) for n, p in listed.items()},
        "required": [n for n, p in listed.items() if p.get("required")],
        "title": name,
        "type": "object",
    }
    return {"$ref": _REF + name}


def as_openapi(document: dict[str, Json], methods: dict[str, dict[str, str]]) -> Converted:
    """`document` (OpenRPC) as an OpenAPI document of `methods` (spec/overlays.json's): a path
    and envelope schemas per method the document has, its component schemas unchanged."""
    schemas: dict[str, Json] = copy.deepcopy(document.get("components", {}).get("schemas", {}))
    converted = Converted({
        "openapi": "3.1.0",
        "info": dict(document.get("info", {})),
        "paths": {},
        "components": {"schemas": schemas},
    })  # fmt: skip
    described = {m["name"]: m for m in document.get("methods", []) if isinstance(m, dict) and "name" in m}
    for name, names in methods.items():
        method = described.get(name)
        if method is None:
            converted.notes.append(f"{name}: not a method of this OpenRPC document")
            continue
        params = _params_schema(method, names["params"], schemas, converted.notes)
        schemas[names["request"]] = {
            "properties": {"id": {"type": "string"}, "jsonrpc": {"type": "string"},
                           "method": {"enum": [name], "type": "string"}, "params": params},
            "required": ["jsonrpc", "id", "params", "method"],
            "title": names["request"],
            "type": "object",
        }  # fmt: skip
        variants = [{"properties": {"result": copy.deepcopy(method["result"]["schema"])}, "required": ["result"],
                     "type": "object"}]  # fmt: skip
        if "x-error-schema" in method:
            variants.append({"properties": {"error": copy.deepcopy(method["x-error-schema"])}, "required": ["error"],
                             "type": "object"})  # fmt: skip
        else:
            converted.without_errors.add(name)
        schemas[names["response"]] = {
            "oneOf": variants,
            "properties": {"id": {"type": "string"}, "jsonrpc": {"type": "string"}},
            "required": ["jsonrpc", "id"],
            "title": names["response"],
            "type": "object",
        }
        converted.document["paths"][f"/{name}"] = {"post": {
            "requestBody": {"content": {"application/json": {"schema": {"$ref": _REF + names["request"]}}}},
            "responses": {"200": {"content": {"application/json": {"schema": {"$ref": _REF + names["response"]}}}}},
        }}  # fmt: skip
    if converted.without_errors:
        converted.notes.append(
            "errors not described (no x-error-schema) for: " + ", ".join(sorted(converted.without_errors))
            + "; their response.error fields are left out of the comparison"
        )
    return converted
