"""spec/openrpc.json: the interface of spec/openapi.json as an OpenRPC 1.3.2 document.

OpenAPI needs a path per JSON-RPC method; OpenRPC describes the method itself, which is what
JSON-RPC tooling reads (the OpenRPC generator, playground and inspector). Everything here is
read off the OpenAPI spec, so `tools.regenerate` writes it and `--check` holds it fresh:

* a method per `POST /<method>` path, in the spec's order; its tags, summary and description;
  `x-extension: true` (and the `extension` tag) on the methods beyond interface 1.2.14;
* params by name: the members of the params schema merged over its alternatives (query's
  request types merge their parts), each `required` only when every alternative requires it;
  `paramStructure` "by-name", or "either" where the params schema also takes the leading
  named param by position (block's and gas_price's `[block_id]`); every array form is kept
  whole in `x-positional-params`, query's legacy `[path, data]` too, which lines up with no
  named param (a client sending query's named params by position would be refused);
* the result: the `result` member's schema; the errors: one error object per cause the
  method's error wrapper names, in components.errors (code and message as nearcore writes
  them; `data` names the `name` and `cause.name` that the wire error carries beside them), and
  the wrapper schema itself in `x-error-schema`;
* the same component schemas and examples; examples pairs from the request and response
  examples that share a name and answer a result.

Component schemas are copied, each titled (`_titled`: clients generated from OpenRPC name types
by title); OpenRPC's `#/components/schemas/` pointers are the OpenAPI ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin, urlsplit

Json = Any
OPENRPC_VERSION = "1.3.2"
_REF_PREFIX = "#/components/schemas/"
_EXAMPLE_PREFIX = "#/components/examples/"
EXTENSION_TAG = "extension"
# OpenRPC wants an absolute server URL (format uri) where OpenAPI's is relative to the document:
# a relative one is resolved against `nearrpc serve`'s default address
DEFAULT_BASE = "http://127.0.0.1:3030"

# nearcore's legacy code and message per cause (methods/errors.py's catalogue; a test holds
# the two together): request validation errors have their own, every other cause -32000.
_LEGACY = {"PARSE_ERROR": (-32700, "Parse error"), "METHOD_NOT_FOUND": (-32601, "Method not found")}
_SERVER_ERROR = (-32000, "Server error")


class OpenRpcError(ValueError):
    """The OpenAPI spec has a shape this conversion was not written for."""


def _ref_name(node: Json, where: str) -> str:
    ref = node.get("$ref") if isinstance(node, dict) else None
    if not isinstance(ref, str) or not ref.startswith(_REF_PREFIX):
        raise OpenRpcError(f"{where}: expected a $ref to a component schema")
    return ref[len(_REF_PREFIX) :]


def _branches(schema: Json) -> list[Json]:
    return [*schema.get("anyOf", []), *schema.get("oneOf", [])] if isinstance(schema, dict) else []


def _object_branches(schema: Json) -> list[dict[str, Json]]:
    """The object alternatives of a params schema, each `allOf` merged into one object."""
    if not isinstance(schema, dict):
        return []
    # members beside the alternatives (view_access_key's account_id) belong to every one of them
    shared: dict[str, Json] = schema.get("properties", {})
    branches = _branches(schema) or ([schema] if "properties" in schema else [])
    merged = []
    for branch in branches:
        if branch.get("type") == "array" or "prefixItems" in branch:
            continue
        properties: dict[str, Json] = {**shared, **branch.get("properties", {})}
        required: list[str] = [*schema.get("required", []), *branch.get("required", [])]
        for part in branch.get("allOf", []):
            properties.update(part.get("properties", {}))
            required.extend(part.get("required", []))
        merged.append({"properties": properties, "required": required})
    return merged


def _array_branches(schema: Json) -> list[Json]:
    return [b for b in _branches(schema) if b.get("type") == "array" or "prefixItems" in b]


def _params(schema: Json) -> tuple[list[dict[str, Json]], list[Json]]:
    """The content descriptors of a params schema, and its array alternatives."""
    objects = _object_branches(schema)
    arrays = _array_branches(schema)
    order: list[str] = []
    schemas: dict[str, list[Json]] = {}
    for branch in objects:
        for name, member in branch["properties"].items():
            if name not in schemas:
                order.append(name)
                schemas[name] = []
            if member not in schemas[name]:
                schemas[name].append(member)
    # a positional form of one member (block's and gas_price's [block_id]) puts it first, so
    # by-position params line up with the named ones
    leading = [n for n in order if n == "block_id"] if any(len(a.get("prefixItems", [])) == 1 for a in arrays) else []
    descriptors = []
    for name in order:
        options = schemas[name]
        required = bool(objects) and all(name in b["required"] for b in objects)
        descriptors.append({
            "name": name,
            "required": required,
            "schema": options[0] if len(options) == 1 else {"anyOf": options},
        })  # fmt: skip
    # by position, a required param cannot follow an optional one: the leading positional one,
    # then the required ones, then the rest, each by name
    descriptors.sort(key=lambda d: (d["name"] not in leading, not d["required"], d["name"]))
    return descriptors, arrays


def _cause_names(schema: Json, schemas: dict[str, Json]) -> Iterator[str]:
    """The `name` values of an error cause schema (a $ref, a union of variants, or one)."""
    if not isinstance(schema, dict):
        return
    if "$ref" in schema:
        yield from _cause_names(schemas[_ref_name(schema, "cause")], schemas)
        return
    for branch in _branches(schema):
        yield from _cause_names(branch, schemas)
    name = schema.get("properties", {}).get("name", {})
    yield from name.get("enum", [])


def _error_key(kind: str, cause: str) -> str:
    return f"{kind}.{cause}"


def _errors(wrapper: Json, schemas: dict[str, Json]) -> list[tuple[str, dict[str, Json]]]:
    """(component key, error object) for every cause an error wrapper names, in its order."""
    found = []
    for variant in _branches(wrapper):
        properties = variant.get("properties", {})
        kinds = properties.get("name", {}).get("enum", [])
        if len(kinds) != 1 or "cause" not in properties:
            continue  # not nearcore's error shape: no cause to name
        (kind,) = kinds
        for cause in dict.fromkeys(_cause_names(properties["cause"], schemas)):
            code, message = _LEGACY.get(cause, _SERVER_ERROR)
            error = {"code": code, "message": message, "data": {"name": kind, "cause": {"name": cause}}}
            found.append((_error_key(kind, cause), error))
    return found


def _example_value(spec: dict[str, Json], example: Json) -> Json:
    ref = example.get("$ref")
    if isinstance(ref, str) and ref.startswith(_EXAMPLE_PREFIX):
        return spec["components"]["examples"][ref[len(_EXAMPLE_PREFIX) :]]["value"]
    return example.get("value")


def _pairings(
    spec: dict[str, Json], operation: dict[str, Json], params: list[dict[str, Json]], structure: str
) -> list[dict[str, Json]]:
    """Example pairings: a request example and the result of the response example of its name."""
    requests = operation["requestBody"]["content"]["application/json"].get("examples", {})
    responses = operation["responses"]["200"]["content"]["application/json"].get("examples", {})
    names = [p["name"] for p in params]
    pairings = []
    for key, example in requests.items():
        answer = responses.get(key)
        request = _example_value(spec, example)
        response = _example_value(spec, answer) if answer else None
        if not isinstance(response, dict) or "result" not in response:
            continue
        given = request.get("params")
        if given is None or given == [] or given == {}:
            values: list[dict[str, Json]] | None = []
        elif isinstance(given, dict):
            values = [{"name": n, "value": given[n]} for n in names if n in given]
        elif structure == "either" and len(given) <= len(names) and all(
            n == "block_id" for n in names[: len(given)]
        ):
            values = [{"name": n, "value": v} for n, v in zip(names, given, strict=False)]
        else:
            values = None  # query's legacy [path, data]: no named params to pair it with
        if values is None:
            continue
        pairings.append({
            "name": key,
            "description": example.get("summary", key),
            "params": values,
            "result": {"name": "result", "value": response["result"]},
        })  # fmt: skip
    return pairings


def _method(spec: dict[str, Json], path: str, operation: dict[str, Json], errors: dict[str, Json]) -> dict[str, Json]:
    schemas: dict[str, Json] = spec["components"]["schemas"]
    where = f"POST {path}"
    request = schemas[_ref_name(operation["requestBody"]["content"]["application/json"]["schema"], where)]
    response = schemas[_ref_name(operation["responses"]["200"]["content"]["application/json"]["schema"], where)]
    (name,) = request["properties"]["method"]["enum"]
    params_schema = schemas[_ref_name(request["properties"]["params"], f"{where} params")]
    params, arrays = _params(params_schema)
    # "either" where the array form is the leading named params by position (block's and
    # gas_price's [block_id]); query's legacy [path, data] is not, nor chunk's [chunk_hash] or
    # validators' [block_id or null] (a null there is the latest epoch, not a named block_id)
    lined_up = bool(arrays and params and params[0]["name"] == "block_id")
    by_position = lined_up and all(a.get("prefixItems") == [params[0]["schema"]] for a in arrays)
    structure = "either" if by_position else "by-name"
    result = next(b["properties"]["result"] for b in _branches(response) if "result" in b.get("properties", {}))
    wrapper = next((b["properties"]["error"] for b in _branches(response) if "error" in b.get("properties", {})), None)
    wrapper_schema = schemas[_ref_name(wrapper, f"{where} error")] if wrapper and "$ref" in wrapper else wrapper
    method_errors = []
    for key, error in _errors(wrapper_schema, schemas):
        errors.setdefault(key, error)
        method_errors.append({"$ref": f"#/components/errors/{key}"})
    tags = list(operation.get("tags", []))
    method: dict[str, Json] = {"name": name}
    for key in ("summary", "description"):
        if key in operation:
            method[key] = operation[key]
    method.update({
        "tags": [{"$ref": f"#/components/tags/{tag}"} for tag in tags],
        "paramStructure": structure,
        "params": params,
        "result": {"name": _ref_name(result, f"{where} result") if "$ref" in result else "result", "schema": result},
        "errors": method_errors,
        "examples": _pairings(spec, operation, params, structure),
    })  # fmt: skip
    if wrapper is not None:
        method["x-error-schema"] = wrapper
    if arrays:
        method["x-positional-params"] = arrays[0] if len(arrays) == 1 else {"anyOf": arrays}
    if EXTENSION_TAG in tags:
        method["x-extension"] = True
    return method


def _info(spec: dict[str, Json]) -> dict[str, Json]:
    info = spec["info"]
    out = {key: info[key] for key in ("title", "description", "version") if key in info}
    if "contact" in info:
        out["contact"] = {k: v for k, v in info["contact"].items() if k in ("name", "email", "url")}
    if "license" in info:
        out["license"] = {k: v for k, v in info["license"].items() if k in ("name", "url")}
    return out


def _pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.replace(".", "_").split("_"))


def _titled(schemas: dict[str, Json], method_types: set[str]) -> dict[str, Json]:
    """The component schemas, each titled: a schema's title names its type in clients generated
    from OpenRPC, where OpenAPI names it by its key. The OpenRPC generator also names a type
    after each method (genesis_config: GenesisConfig), so a title equal to one gets `_schema`."""
    titled = {}
    for name, schema in schemas.items():
        if isinstance(schema, dict):
            title = schema.get("title", name)
            schema = {**schema, "title": f"{title}_schema" if title in method_types else title}
        titled[name] = schema
    return titled


def _server(server: dict[str, Json]) -> dict[str, Json]:
    url = server["url"]
    if urlsplit(url).scheme:
        return {k: v for k, v in server.items() if k in ("url", "description")}
    return {
        "url": urljoin(DEFAULT_BASE + "/", url),
        "description": f"`nearrpc serve` at its default address; a server elsewhere answers at {url} of its own.",
    }


def openrpc_document(spec: dict[str, Json]) -> dict[str, Json]:
    """The OpenRPC document of an OpenAPI spec of JSON-RPC methods (one `POST /<method>` each)."""
    errors: dict[str, Json] = {}
    methods = [
        _method(spec, path, item["post"], errors)
        for path, item in spec["paths"].items()
        if path != "/" and "post" in item
    ]
    tags = {
        tag["name"]: {k: v for k, v in tag.items() if k in ("name", "description")}
        for tag in spec.get("tags", [])
    }
    examples = {
        key: {"name": key, **{k: v for k, v in example.items() if k in ("summary", "description", "value")}}
        for key, example in spec["components"].get("examples", {}).items()
    }
    servers = [{"name": "nearrpc", **_server(server)} for server in spec.get("servers", [])]
    schemas = _titled(spec["components"]["schemas"], {_pascal(m["name"]) for m in methods})
    return {
        "openrpc": OPENRPC_VERSION,
        "info": _info(spec),
        "servers": servers,
        "methods": methods,
        "components": {
            "schemas": schemas,
            "errors": dict(sorted(errors.items())),
            "examples": examples,
            "tags": tags,
        },
    }


def render(spec_bytes: bytes) -> bytes:
    """spec/openrpc.json's bytes from spec/openapi.json's: indent 2, trailing newline."""
    return (json.dumps(openrpc_document(json.loads(spec_bytes)), indent=2, ensure_ascii=False) + "\n").encode()
