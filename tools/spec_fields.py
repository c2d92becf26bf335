"""The fields of the methods, flattened: what a bump report compares and the interface checks.

A field is named by its path from a method's request or response envelope, members joined by
dots, `[]` for array items (none past a closed tuple's `prefixItems`), `{}` for the values of a
map: `client_config.response.result.gc`, `block.response.result.chunks[].shard_id`,
`block.request.params.block_id`. `$ref`s are
followed, and the branches of `anyOf`/`oneOf`/`allOf` are merged into the same path (a
nullable field is its non-null type plus "null"; the variants of ShardLayout or of an error
cause contribute their members side by side). For each path the flat view keeps:

* the kinds of value it can hold (`integer/uint64`, `string`, `null`, `object`, `array`, ...);
* for objects, the members the schema requires (merged over branches);
* the values an `enum` or `const` allows (merged over branches).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

Json = Any
_REF_PREFIX = "#/components/schemas/"


@dataclass
class FlatSpec:
    kinds: dict[str, set[str]] = field(default_factory=dict)
    required: dict[str, set[str]] = field(default_factory=dict)
    enums: dict[str, set[str]] = field(default_factory=dict)


def _kind(schema: dict[str, Json]) -> Iterable[str]:
    declared = schema.get("type")
    types = [declared] if isinstance(declared, str) else list(declared or [])
    for name in types:
        fmt = schema.get("format")
        yield f"{name}/{fmt}" if fmt and name in ("integer", "number", "string") else name


def _enum_text(value: Json) -> str:
    return value if isinstance(value, str) else repr(value)


def _admits_nothing(schema: Json) -> bool:
    """`{"not": {}}`, the object spelling of the `false` schema: where it closes a tuple's
    `items`, the array has no member beyond its `prefixItems`, so no `[]` field."""
    return schema is False or schema == {"not": {}}


class _Flattener:
    def __init__(self, doc: dict[str, Json]) -> None:
        self.schemas: dict[str, Json] = doc["components"]["schemas"]
        self.flat = FlatSpec()

    def walk(self, schema: Json, path: str, refs: tuple[str, ...] = ()) -> None:
        if not isinstance(schema, dict):
            return
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
            name = ref[len(_REF_PREFIX) :]
            if name in refs:  # a recursive type: its fields are listed where it first appears
                self.flat.kinds.setdefault(path, set()).add(f"recursive {name}")
                return
            self.walk(self.schemas[name], path, (*refs, name))
            return
        kinds = self.flat.kinds.setdefault(path, set())
        kinds.update(_kind(schema))
        if schema == {} or set(schema) <= {"title", "description"}:
            kinds.add("any")
        if "enum" in schema or "const" in schema:
            values = schema.get("enum", [schema.get("const")])
            self.flat.enums.setdefault(path, set()).update(_enum_text(v) for v in values)
        for combinator in ("anyOf", "oneOf", "allOf"):
            for branch in schema.get(combinator, []):
                self.walk(branch, path, refs)
        properties = schema.get("properties")
        if isinstance(properties, dict):
            kinds.add("object")
            self.flat.required.setdefault(path, set()).update(schema.get("required", []))
            for name, member in properties.items():
                self.walk(member, f"{path}.{name}", refs)
        if isinstance(schema.get("items"), dict) and not _admits_nothing(schema["items"]):
            self.walk(schema["items"], f"{path}[]", refs)
        for index, item in enumerate(schema.get("prefixItems", [])):
            self.walk(item, f"{path}[{index}]", refs)
        if isinstance(schema.get("additionalProperties"), dict):
            self.walk(schema["additionalProperties"], f"{path}{{}}", refs)
        if not kinds:
            kinds.add("any")


def flatten(doc: dict[str, Json], methods: dict[str, dict[str, str]]) -> FlatSpec:
    """The flat view of every method's request and response (`methods`: spec/overlays.json's).
    A method the document has no request for (an older spec, before the method was served) has
    no field: a report shows it added whole."""
    walker = _Flattener(doc)
    for method, names in methods.items():
        if names["request"] not in walker.schemas:
            continue
        walker.walk({"$ref": _REF_PREFIX + names["request"]}, f"{method}.request")
        walker.walk({"$ref": _REF_PREFIX + names["response"]}, f"{method}.response")
    return walker.flat
