"""Where the checker reads the interface from: the packaged spec, or a file (`--spec FILE`):
an OpenAPI document shaped like spec/openapi.json, or an OpenRPC one (nearcore's openrpc.json,
or this project's spec/openrpc.json), detected by its `openrpc` member.

The checker needs, per method, the schema of its result and of its error (spec_map). An OpenRPC
method names its result schema; its errors only where it has `x-error-schema` (this project's
documents): nearcore's has none, so its errors are held to nearcore's error rules only, and the
methods it does not name (it has no `query`) to those rules alone. Each such gap is a note of
the report, never a silent pass.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# a component no document has: a schema that holds nothing (what a document does not describe)
UNDESCRIBED = "x-conform-undescribed"
_REF = "#/components/schemas/"


class SpecFileError(ValueError):
    """A --spec file that cannot be read as an interface description (the message says why)."""


@dataclass(frozen=True)
class Interface:
    document: dict[str, Any]  # OpenAPI-shaped: POST /<method> paths, components.schemas
    name: str  # the file it was read from
    notes: tuple[str, ...] = field(default=())


def _component(schemas: dict[str, Any], schema: Any, name: str) -> dict[str, str]:
    """A `$ref` to `schema`: itself when it is one, else to a component made for it."""
    if isinstance(schema, dict) and set(schema) == {"$ref"} and str(schema["$ref"]).startswith(_REF):
        return {"$ref": str(schema["$ref"])}
    schemas[name] = copy.deepcopy(schema)
    return {"$ref": _REF + name}


def from_openrpc(document: dict[str, Any], name: str) -> Interface:
    schemas: dict[str, Any] = copy.deepcopy(document.get("components", {}).get("schemas", {}))
    paths: dict[str, Any] = {}
    without_errors = []
    for method in document.get("methods", []):
        if not isinstance(method, dict) or not isinstance(method.get("result"), dict):
            continue  # a $ref'd method or a notification: nothing to check answers against
        method_name = str(method["name"])
        result = _component(schemas, method["result"].get("schema", {}), f"x-conform-result-{method_name}")
        if "x-error-schema" in method:
            error = _component(schemas, method["x-error-schema"], f"x-conform-error-{method_name}")
        else:
            error = {"$ref": _REF + UNDESCRIBED}
            without_errors.append(method_name)
        envelope = f"x-conform-response-{method_name}"
        schemas[envelope] = {"oneOf": [
            {"properties": {"result": result}, "required": ["result"]},
            {"properties": {"error": error}, "required": ["error"]},
        ]}  # fmt: skip
        paths[f"/{method_name}"] = {"post": {"responses": {"200": {"content": {"application/json": {
            "schema": {"$ref": _REF + envelope}}}}}}}  # fmt: skip
    schemas[UNDESCRIBED] = {}
    notes = [f"{name} is OpenRPC {document['openrpc']}: every answer is held to its methods' result schemas"]
    if without_errors and len(without_errors) == len(paths):
        notes.append("it describes no errors (no method has x-error-schema): errors are held to nearcore's error "
                     "rules only")  # fmt: skip
    elif without_errors:
        notes.append(f"it describes no errors of {', '.join(without_errors)}: their errors are held to nearcore's "
                     "error rules only")  # fmt: skip
    converted = {"info": dict(document.get("info", {})), "paths": paths, "components": {"schemas": schemas}}
    return Interface(converted, name, tuple(notes))


def read_interface(path: Path) -> Interface:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SpecFileError(f"cannot read {path}: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("components", {}).get("schemas"), dict):
        raise SpecFileError(f"{path} is neither an OpenAPI nor an OpenRPC document (no components.schemas)")
    if "openrpc" in document:
        return from_openrpc(document, path.name)
    if "openapi" in document and isinstance(document.get("paths"), dict):
        document["components"]["schemas"].setdefault(UNDESCRIBED, {})
        return Interface(document, path.name)
    raise SpecFileError(f"{path} is neither an OpenAPI nor an OpenRPC document (no `openapi` or `openrpc` member)")
