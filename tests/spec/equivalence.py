"""A normal form for the schemas of an OpenAPI 3.1 document, to show that two spellings accept the
same JSON and carry the same defaults (tests/spec/test_overlays.py, the `form-*` overlays).

Only rewrites that keep meaning, each a JSON Schema 2020-12 equivalence:
- `$ref`s are inlined (a `$ref` with siblings is `allOf: [$ref]` plus the siblings);
- the siblings of a non-empty `allOf` become one more `allOf` member; `allOf`, `oneOf` and `anyOf`
  of a single member are that member; nested `allOf`s are flattened;
- `properties`/`required` beside a `oneOf`/`anyOf` of objects move into every member (A and
  (B or C) is (A and B) or (A and C)), merging `required` as a set;
- `const: x` is `enum: [x]`; `additionalProperties: true` is the default and is dropped;
- `items` that admits nothing (`false`, `{"not": {}}`) beside `prefixItems` at least as long as
  `maxItems` allows is dropped: no array member is past the tuple anyway.
Annotations (`description`, `default`, `title`) are kept where they stand, so a moved default shows.
"""

from __future__ import annotations

from typing import Any

Json = Any
_PREFIX = "#/components/schemas/"
_UNIONS = ("oneOf", "anyOf")


def normal_form(node: Json, schemas: dict[str, Json], inlining: tuple[str, ...] = ()) -> Json:
    if isinstance(node, list):
        return [normal_form(item, schemas, inlining) for item in node]
    if not isinstance(node, dict):
        return node
    node = dict(node)
    ref = node.pop("$ref", None)
    if isinstance(ref, str) and ref.startswith(_PREFIX):
        if node:
            return normal_form({"allOf": [{"$ref": ref}], **node}, schemas, inlining)
        name = ref.removeprefix(_PREFIX)
        if name in inlining:  # a recursive schema: stop at the second visit
            return {"$recursive": name}
        return normal_form(schemas[name], schemas, (*inlining, name))
    elif ref is not None:
        node["$ref"] = ref

    out: dict[str, Json] = {}
    for key, value in node.items():
        # keys of `properties` (and friends) are names, not keywords: keep them, normalise values
        if key in ("properties", "patternProperties", "$defs") and isinstance(value, dict):
            out[key] = {name: normal_form(schema, schemas, inlining) for name, schema in value.items()}
        else:
            out[key] = normal_form(value, schemas, inlining)
    return _simplify(out)


def _simplify(node: dict[str, Json]) -> Json:
    if "const" in node:
        node["enum"] = [node.pop("const")]
    if node.get("additionalProperties") is True:
        del node["additionalProperties"]
    if isinstance(node.get("required"), list):
        node["required"] = sorted(set(node["required"]))
    if node.get("items") in (False, {"not": {}}) and len(node.get("prefixItems", [])) >= node.get("maxItems", -1) >= 0:
        del node["items"]
    if "allOf" in node:
        members = [m for item in node.pop("allOf") for m in (item["allOf"] if set(item) == {"allOf"} else [item])]
        if node:
            members.append(node)
        return members[0] if len(members) == 1 else {"allOf": members}
    for union in _UNIONS:
        found = node.get(union)
        if not isinstance(found, list):
            continue
        shared: dict[str, Json] = {key: node.pop(key) for key in ("properties", "required") if key in node}
        variants: list[Json] = [_conjoin(member, shared) for member in found] if shared else found
        node[union] = variants
        if len(variants) == 1 and set(node) == {union}:
            return variants[0]
    return node


def _conjoin(member: Json, shared: dict[str, Json]) -> Json:
    """`member` and an object's `properties`/`required`, as one schema (no `additionalProperties`
    may constrain either, or the merge would change what is accepted)."""
    if not isinstance(member, dict) or "additionalProperties" in member or "allOf" in member:
        raise ValueError(f"cannot merge {shared} into {member}")
    merged = dict(member)
    properties = dict(merged.get("properties", {}))
    for name, schema in shared.get("properties", {}).items():
        if name in properties and properties[name] != schema:
            properties[name] = {"allOf": [properties[name], schema]}
        else:
            properties[name] = schema
    merged["properties"] = properties
    merged["required"] = sorted(set(merged.get("required", [])) | set(shared.get("required", [])))
    return merged
