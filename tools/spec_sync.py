"""Build `spec/openapi.json` from a full upstream nearcore OpenAPI document.

Either document may also be nearcore's OpenRPC one (openrpc.json, detected by its `openrpc`
member): `tools.openrpc_upstream` reads it into the same shape, and the report notes what it
does not describe (nearcore's has no errors and no `query`) instead of listing it as changed.

    python -m tools.spec_sync UPSTREAM_OPENAPI_JSON [--out spec/openapi.json] [--check]
    python -m tools.spec_sync UPSTREAM_OPENAPI_JSON --report-only [--against OLD_JSON] [--json]

Steps, in order, each a pure function of its input so the output is byte-deterministic:
1. keep the methods' paths (the five of the interface and the declared extension) and every
   component schema (pruned in step 5);
2. normalise OpenAPI 3.0 idioms to 3.1 / JSON Schema 2020-12 and drop upstream prose
   (`description`, `$schema`); our own descriptions come back in step 4;
3. apply the overlays in `spec/overlays.json`: explicit, reasoned edits (the 1.2.14 delta and
   the wire-reality fixes), each listed in `spec/DEVIATIONS.md`;
4. apply our descriptions from `spec/descriptions.json`;
5. prune components to the transitive closure of what the paths reference;
   then put in the examples of `spec/examples.json` (`tools.spec_examples`: requests and the
   answers the sample chain gives them, from the recorded round trips);
6. report, for every method, what changes against the current spec field by field
   (`tools.bump_report`), and which overlays upstream now makes redundant;
7. hold the result to the declared interface (spec/interface.json, `tools.interface_check`):
   a departure spec/DEVIATIONS.md does not declare (e.g. a field of interface 1.2.14 that
   upstream dropped) stops the sync, and nothing is written;
8. write compact-but-readable JSON (indent 2, sorted component names, trailing newline).

An overlay that no longer applies (its `expect` guard fails, its target or the target's parent
is gone) stops the sync with a message naming it; exit status 2 for every refusal.

`--report-only` prints step 6's report (each change classed by whom it breaks, see
`tools.bump_report`; `--json` for a machine-readable one) and writes nothing, not even when the
interface gate of step 7 would refuse. It compares the rebuilt document with `--out`, or, with
`--against OLD_JSON`, compares two documents as they stand: both go through steps 1, 2 and 5
only (selection, normalisation, pruning) and no overlay. Overlays are our edits, not upstream's:
applied to both sides of an upstream-to-upstream comparison they would hide what upstream itself
changed (1.2.13's sha3 costs, which an overlay adds to 1.2.11 too), fail on an older document
their guards were not written for, and make a past bump's record depend on today's overlays. A
built spec can be either side (`spec/openapi.json --against UPSTREAM`: what the interface
changes against that upstream document); for it the same steps change nothing but descriptions.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from jsonpointer import JsonPointer, JsonPointerException

from tools import openrpc_upstream
from tools.bump_report import Change, as_json, changelog, report
from tools.crypto_hash_pattern import crypto_hash_pattern, public_key_pattern
from tools.interface_check import DECLARED_HEADING, declared_paths, departures, undeclared
from tools.spec_examples import EXAMPLES, ExampleMisfit, apply_examples
from tools.spec_fields import flatten

REPO = Path(__file__).resolve().parent.parent
SPEC_DIR = REPO / "spec"
DEFAULT_OUT = SPEC_DIR / "openapi.json"
OVERLAYS = SPEC_DIR / "overlays.json"
DESCRIPTIONS = SPEC_DIR / "descriptions.json"
INTERFACE = SPEC_DIR / "interface.json"
DEVIATIONS = SPEC_DIR / "DEVIATIONS.md"

# The brief's five methods: interface 1.2.14, held to spec/interface.json.
INTERFACE_METHODS = (
    "genesis_config",
    "EXPERIMENTAL_protocol_config",
    "EXPERIMENTAL_view_account",
    "client_config",
    "block",
)
# Served beyond interface 1.2.14 (spec/DEVIATIONS.md): the calls clients make first.
EXTENSION_METHODS = (
    "status",
    "gas_price",
    "query",
    "EXPERIMENTAL_view_access_key",
    "EXPERIMENTAL_view_access_key_list",
    "EXPERIMENTAL_view_code",
    "EXPERIMENTAL_call_function",
    "EXPERIMENTAL_view_state",
    # a client's other reads (issue 30): transactions, chunks, receipts, validators, changes
    "chunk",
    "tx",
    "EXPERIMENTAL_tx_status",
    "EXPERIMENTAL_receipt",
    "validators",
    "EXPERIMENTAL_validators_ordered",
    "EXPERIMENTAL_changes_in_block",
    "EXPERIMENTAL_changes",
    "block_effects",
    "changes",
    "health",
    # writing (issue 45): answered by `serve --sandbox`, refused by a read-only server
    "send_tx",
    "broadcast_tx_commit",
    "broadcast_tx_async",
)
# Every method the spec has a path for; the bump report and the changelog cover them all.
METHODS = INTERFACE_METHODS + EXTENSION_METHODS
# Served beyond any upstream document (spec/DEVIATIONS.md): the overlays add their paths whole
# (ext-rpc-discover; ext-sandbox: nearcore's sandbox methods, which its documents leave out, and
# the snapshot and revert of the whole chain); no bump report covers them.
SERVICE_METHODS = (
    "rpc.discover",
    "sandbox_patch_state",
    "sandbox_fast_forward",
    "sandbox_snapshot",
    "sandbox_revert",
)

Json = Any


class OverlayError(Exception):
    """An overlay no longer fits the upstream document (upstream changed under it)."""


# ---------------------------------------------------------------- step 1


def select_methods(upstream: dict[str, Json], partial: bool = False) -> dict[str, Json]:
    """The methods' paths and every component; `partial`: a document without some of the
    methods (an OpenRPC one, whose converter notes each) gives those it has."""
    missing = [m for m in METHODS if f"/{m}" not in upstream.get("paths", {})]
    if missing and not partial:
        raise OverlayError(f"upstream document lacks the paths for: {', '.join(missing)}")
    return {
        "openapi": upstream["openapi"],
        "info": dict(upstream["info"]),
        "paths": {f"/{m}": copy.deepcopy(upstream["paths"][f"/{m}"]) for m in METHODS if m not in missing},
        "components": {"schemas": copy.deepcopy(upstream["components"]["schemas"])},
    }


# ---------------------------------------------------------------- step 2

_DROPPED_KEYWORDS = frozenset({"description", "$schema"})


def normalise_to_31(node: Json, in_properties: bool = False) -> Json:
    """Rewrite the OpenAPI 3.0 dialect into 3.1 (plain JSON Schema 2020-12).

    `in_properties` marks a mapping whose keys are property names, not keywords, so a
    property that happens to be called `description` survives.
    """
    if isinstance(node, list):
        return [normalise_to_31(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Json] = {}
    for key, value in node.items():
        if not in_properties and key in _DROPPED_KEYWORDS:
            continue
        out[key] = normalise_to_31(value, in_properties=(key == "properties" and not in_properties))
    if in_properties:
        return out
    if out.pop("nullable", False):
        if out.get("enum") == [None]:
            # upstream's way of spelling "null" inside an anyOf
            out.pop("enum")
            out["type"] = "null"
        elif isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        else:
            raise OverlayError(f"nullable schema without a type: {out}")
    if isinstance(out.get("items"), list):
        # 3.0 tuple form -> 2020-12 prefixItems
        out["prefixItems"] = out.pop("items")
    return out


# ---------------------------------------------------------------- step 3


def _substitute(value: Json, variables: dict[str, str]) -> Json:
    if isinstance(value, str):
        for name, text in variables.items():
            value = value.replace("{" + name + "}", text)
        return value
    if isinstance(value, list):
        return [_substitute(v, variables) for v in value]
    if isinstance(value, dict):
        return {_substitute(k, variables): _substitute(v, variables) for k, v in value.items()}
    return value


# Values too long to write by hand, computed by code in tools/: an op names one with
# "value_from" instead of giving a "value".
GENERATED_VALUES = {
    "crypto_hash_pattern": crypto_hash_pattern,
    "public_key_pattern": public_key_pattern,
}


def _with_value(op: dict[str, Json], overlay_id: str) -> dict[str, Json]:
    name = op.get("value_from")
    if name is None:
        return op
    if name not in GENERATED_VALUES or "value" in op:
        raise OverlayError(f"overlay {overlay_id!r}: value_from {name!r} is not a known generated value")
    return {**{k: v for k, v in op.items() if k != "value_from"}, "value": GENERATED_VALUES[name]()}


def _expand(overlay: dict[str, Json], methods: dict[str, dict[str, str]]) -> Iterator[dict[str, Json]]:
    """Yield the concrete operations of one overlay (templated ones once per method)."""
    scope = overlay.get("for_each_method")
    if not scope:
        for op in overlay["ops"]:
            yield _with_value(op, overlay["id"])
        return
    names = METHODS if scope is True else scope
    seen: list[Json] = []
    for method in names:
        variables = {"method": method, **methods[method]}
        for op in overlay["ops"]:
            concrete = _substitute(op, variables)
            # methods that share a schema (tx and EXPERIMENTAL_tx_status share their response)
            # have its edit made once: a second time its `expect` guard would see the first
            if concrete in seen:
                continue
            seen.append(concrete)
            yield _with_value(cast(dict[str, Json], concrete), overlay["id"])


@dataclass(frozen=True)
class Redundancy:
    """What of one op upstream already has: all of it (`whole`) or some members of a merge."""

    what: str
    whole: bool = True


def apply_op(doc: dict[str, Json], op: dict[str, Json], overlay_id: str) -> Redundancy | None:
    """Apply one op; return what of it upstream already has (None: the op changed the document).

    An op that cannot apply (a guard that fails, a target or parent that upstream no longer
    has) raises OverlayError naming the overlay.
    """
    kind, path = op["op"], op["path"]
    where = f"overlay {overlay_id!r}, {kind} {path}"
    try:
        return _apply_op(doc, op, kind, JsonPointer(path), where)
    except JsonPointerException as exc:
        # a target (or its parent) upstream no longer has: fail rather than create a fragment
        raise OverlayError(f"{where}: {exc}") from None


def _resolves(pointer: JsonPointer, doc: dict[str, Json]) -> bool:
    try:
        pointer.resolve(doc)
    except JsonPointerException:
        return False
    return True


def _apply_op(
    doc: dict[str, Json], op: dict[str, Json], kind: str, pointer: JsonPointer, where: str
) -> Redundancy | None:
    path = op["path"]
    if "expect" in op:
        # guards against silently rewriting something upstream has changed
        try:
            actual = pointer.resolve(doc)
        except JsonPointerException:
            raise OverlayError(f"{where}: expected {op['expect']!r}, found nothing") from None
        if actual != op["expect"]:
            raise OverlayError(f"{where}: expected {op['expect']!r}, found {actual!r}")
    if kind == "set":
        if _resolves(pointer, doc) and pointer.resolve(doc) == op["value"]:
            return Redundancy(f"set {path}")
        pointer.set(doc, copy.deepcopy(op["value"]))
    elif kind == "merge":
        target = pointer.resolve(doc)
        if not isinstance(target, dict):
            raise OverlayError(f"{where}: target is not an object")
        present = sorted(k for k, v in op["value"].items() if k in target and target[k] == v)
        target.update(copy.deepcopy(op["value"]))
        if present:
            whole = len(present) == len(op["value"])
            return Redundancy(f"merge {path}" if whole else f"merge {path}: {', '.join(present)}", whole)
    elif kind == "remove":
        parent, key = pointer.to_last(doc)
        if not isinstance(parent, dict):
            raise OverlayError(f"{where}: can only remove object members")
        if key not in parent:
            return Redundancy(f"remove {path}")  # upstream dropped it itself
        del parent[key]
    elif kind == "remove_item":
        target = pointer.resolve(doc)
        if not isinstance(target, list):
            raise OverlayError(f"{where}: target is not a list")
        if op["value"] not in target:
            return Redundancy(f"remove_item {path}: {op['value']!r}")
        target.remove(op["value"])
    elif kind == "append":
        target = pointer.resolve(doc)
        if not isinstance(target, list):
            raise OverlayError(f"{where}: target is not a list")
        if op["value"] in target:
            return Redundancy(f"append {path}")
        target.append(copy.deepcopy(op["value"]))
    elif kind == "ref_for_single_allof":
        target = pointer.resolve(doc)
        if not isinstance(target, dict):
            raise OverlayError(f"{where}: target is not a map of schemas")
        if not sum(_ref_for_single_allof(schema, where) for schema in target.values()):
            return Redundancy(f"ref_for_single_allof {path}")
    elif kind == "name_nested_objects":
        target = pointer.resolve(doc)
        if not isinstance(target, dict):
            raise OverlayError(f"{where}: target is not a schema")
        union = path.rsplit("/", 1)[1]
        if not name_nested_objects(union, target, doc["components"]["schemas"], where):
            return Redundancy(f"name_nested_objects {path}")
    else:
        raise OverlayError(f"{where}: unknown op {kind!r}")
    return None


# Where a JSON Schema 2020-12 keyword holds subschemas: one, a list, or a map of them. Values of
# other keywords (`default`, `examples`, `enum`, `const`) are data, never rewritten as schemas.
_ONE_SCHEMA = frozenset(
    {"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else",
     "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
)  # fmt: skip
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas", "$defs"})


def _subschemas(schema: dict[str, Json]) -> Iterator[Json]:
    for key, value in schema.items():
        if key in _ONE_SCHEMA:
            yield value
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            yield from value
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            yield from value.values()


def _ref_for_single_allof(schema: Json, where: str) -> int:
    """Rewrite, in `schema` and every schema in it, `{"allOf": [{"$ref": R}], ...}` into
    `{"$ref": R, ...}` (2020-12: a `$ref` applies beside its siblings as an `allOf` member does);
    return how many were rewritten. A one-member `allOf` of anything but a plain `$ref`, or beside
    a `$ref`, is not what the op was written for: it stops the sync."""
    if not isinstance(schema, dict):
        return 0
    count = sum(_ref_for_single_allof(sub, where) for sub in _subschemas(schema))
    members = schema.get("allOf")
    if isinstance(members, list) and len(members) == 1:
        (member,) = members
        if not isinstance(member, dict) or set(member) != {"$ref"} or "$ref" in schema:
            raise OverlayError(f"{where}: a one-member allOf that is not a lone $ref: {schema!r}")
        rewritten = {("$ref" if key == "allOf" else key): (member["$ref"] if key == "allOf" else value)
                     for key, value in schema.items()}  # fmt: skip
        schema.clear()
        schema.update(rewritten)
        count += 1
    return count


def inline_variant_objects(union: str, schema: dict[str, Json]) -> Iterator[tuple[str, dict[str, Json], str]]:
    """(component name, variant properties, member) of every inline object that is a member of
    an inline `oneOf`/`anyOf` variant of `schema`: named `<union>_<NAME>_<member>` in a variant
    tagged by a one-value `name` enum (an error cause) or, failing that, `type` enum (a state
    change), else `<union>_<member>` (an externally tagged variant)."""
    for variant in [*schema.get("oneOf", []), *schema.get("anyOf", [])]:
        properties = variant.get("properties") if isinstance(variant, dict) else None
        if not isinstance(properties, dict):
            continue
        tag_member, tag = next(
            ((key, properties[key]["enum"]) for key in ("name", "type")
             if isinstance(properties.get(key), dict) and len(properties[key].get("enum", [])) == 1),
            (None, None),
        )  # fmt: skip
        prefix = f"{union}_{tag[0]}" if tag is not None else union
        for member, value in properties.items():
            if member != tag_member and isinstance(value, dict) and value.get("type") == "object":
                yield f"{prefix}_{member}", properties, member


def name_nested_objects(union: str, schema: dict[str, Json], schemas: dict[str, Json], where: str) -> int:
    """Move each inline object of `inline_variant_objects` unchanged to its own component and
    `$ref` it there (a bare `{"type": "object"}` says `additionalProperties: true` out loud);
    return how many moved. A name already taken by another schema stops the sync."""
    moved = list(inline_variant_objects(union, schema))
    for name, properties, member in moved:
        value = properties[member]
        if value == {"type": "object"}:
            value = {"additionalProperties": True, "type": "object"}
        if name in schemas and schemas[name] != value:
            raise OverlayError(f"{where}: component {name} exists and differs")
        schemas[name] = value
        properties[member] = {"$ref": _REF_PREFIX + name}
    return len(moved)


def apply_overlays(doc: dict[str, Json], overlays: dict[str, Json]) -> list[str]:
    """Apply every overlay in order; return one line per overlay upstream makes redundant, in
    whole or in part (what it already has), so the maintainer can drop or trim it."""
    methods = overlays["methods"]
    notes = []
    for overlay in overlays["overlays"]:
        ops = list(_expand(overlay, methods))
        redundant = [found for op in ops if (found := apply_op(doc, op, overlay["id"])) is not None]
        if redundant and len(redundant) == len(ops) and all(found.whole for found in redundant):
            notes.append(f"overlay {overlay['id']!r} is redundant: upstream already has all of it; drop it")
        elif redundant:
            what = "; ".join(found.what for found in redundant)
            notes.append(f"overlay {overlay['id']!r} is partly redundant; upstream already has: {what}")
    return notes


# ---------------------------------------------------------------- step 4


def apply_descriptions(doc: dict[str, Json], descriptions: dict[str, Json]) -> None:
    for path, text in descriptions["pointers"].items():
        try:
            target = JsonPointer(path).resolve(doc)
        except JsonPointerException as exc:
            raise OverlayError(f"description target {path}: {exc}") from None
        if not isinstance(target, dict):
            raise OverlayError(f"description target {path} is not an object")
        target["description"] = text
    # OpenAPI requires a description on every response object
    for item in doc["paths"].values():
        for operation in item.values():
            for status, response in operation["responses"].items():
                if status not in descriptions["responses"]:
                    raise OverlayError(f"no description for HTTP status {status}")
                response["description"] = descriptions["responses"][status]


# ---------------------------------------------------------------- step 5

_REF_PREFIX = "#/components/schemas/"


def _refs(node: Json) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(_REF_PREFIX):
                yield value[len(_REF_PREFIX) :]
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def reachable_schemas(doc: dict[str, Json]) -> set[str]:
    schemas = doc["components"]["schemas"]
    seen: set[str] = set()
    todo = list(_refs(doc["paths"]))
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in schemas:
            raise OverlayError(f"dangling reference to schema {name!r}")
        seen.add(name)
        todo.extend(_refs(schemas[name]))
    return seen


def prune(doc: dict[str, Json]) -> None:
    keep = reachable_schemas(doc)
    schemas = doc["components"]["schemas"]
    doc["components"]["schemas"] = {name: schemas[name] for name in sorted(keep)}
    # the shared endpoint first, then the methods in their fixed order
    doc["paths"] = dict(sorted(doc["paths"].items(), key=lambda item: item[0] != "/"))


# ---------------------------------------------------------------- driver


def build_spec(
    upstream: dict[str, Json],
    overlays: dict[str, Json],
    descriptions: dict[str, Json],
    examples: dict[str, Json] | None = None,
) -> tuple[dict[str, Json], list[str]]:
    """The spec built from `upstream`, and the notes on overlays upstream makes redundant;
    `examples` (spec/examples.json) are put in last, when given."""
    doc = select_methods(upstream)
    doc = cast(dict[str, Json], normalise_to_31(doc))
    redundant = apply_overlays(doc, overlays)
    apply_descriptions(doc, descriptions)
    prune(doc)
    missing = [method for method in SERVICE_METHODS if f"/{method}" not in doc["paths"]]
    if missing:
        raise OverlayError(f"the overlays no longer add the paths of: {', '.join(missing)}")
    if examples is not None:
        try:
            apply_examples(doc, examples)
        except ExampleMisfit as exc:
            raise OverlayError(f"spec/examples.json: {exc}") from None
    return doc, redundant


def as_it_stands(document: dict[str, Json], partial: bool = False) -> dict[str, Json]:
    """`document` through selection, normalisation and pruning (steps 1, 2, 5), no overlay."""
    doc = cast(dict[str, Json], normalise_to_31(select_methods(document, partial)))
    prune(doc)
    return doc


def render(doc: dict[str, Json]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


class InputError(Exception):
    """A document named on the command line (or one of spec/'s inputs) cannot be read as JSON."""


def load_json(path: Path) -> Json:
    try:
        with path.open(encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError) as exc:  # a missing file, a folder, broken JSON or text
        raise InputError(f"cannot read {path}: {exc}") from None


def bump_report(old: dict[str, Json], new: dict[str, Json], methods: dict[str, Json]) -> dict[str, list[Change]]:
    """The field-level changes of every method from `old` to `new`, each classed."""
    return report(METHODS, flatten(old, methods), flatten(new, methods), load_json(INTERFACE))


def interface_problems(doc: dict[str, Json], methods: dict[str, Json]) -> list[str]:
    """The departures from the declared interface that spec/DEVIATIONS.md does not declare."""
    found = departures(flatten(doc, methods), load_json(INTERFACE))
    declared = declared_paths(DEVIATIONS.read_text(encoding="utf-8"))
    return [str(departure) for departure in undeclared(found, declared)]


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tools.spec_sync", description=__doc__.splitlines()[0])
    parser.add_argument(
        "upstream", type=Path, help="a full nearcore OpenAPI document (openapi.json), or its OpenRPC one (openrpc.json)"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write (default: spec/openapi.json)")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 with a diff if --out differs")
    parser.add_argument("--report-only", action="store_true", help="print the bump report; write nothing")
    parser.add_argument(
        "--against", type=Path, help="with --report-only: compare UPSTREAM with this document, both as they stand"
    )
    parser.add_argument("--json", action="store_true", help="with --report-only: the report as JSON")
    args = parser.parse_args(argv)
    if (args.against or args.json) and not args.report_only:
        parser.error("--against and --json go with --report-only")
    return args


def _version(doc: dict[str, Json]) -> str:
    return str(doc.get("info", {}).get("version", "?"))


def _print_report(
    old: dict[str, Json],
    new: dict[str, Json],
    methods: dict[str, Json],
    as_json_text: bool,
    heading: str,
    read: Readable | None = None,
) -> None:
    notes: list[str] = []
    if read is not None:
        old, new = read.comparable(old, methods), read.comparable(new, methods)
        notes = read.notes
    changes = bump_report(old, new, methods)
    if as_json_text:
        report_json = as_json(changes, _version(old), _version(new))
        print(json.dumps({**report_json, "notes": notes} if notes else report_json, indent=2))
        return
    print(heading)
    for note in notes:
        print(f"  note: {note}")
    for line in changelog(changes):
        print(f"  {line}")


@dataclass
class Readable:
    """What an OpenRPC document on either side of a comparison left undescribed (the notes of
    tools.openrpc_upstream), so the report says so instead of listing it as removed or added."""

    notes: list[str]
    without_errors: set[str]

    def comparable(self, doc: dict[str, Json], methods: dict[str, Json]) -> dict[str, Json]:
        """`doc` without the error member of the responses of the methods whose errors one side
        does not describe (one side saying nothing is no change)."""
        doc = copy.deepcopy(doc)
        schemas = doc["components"]["schemas"]
        for method in self.without_errors:
            response = schemas.get(methods[method]["response"])
            if not isinstance(response, dict):
                continue
            for key in ("oneOf", "anyOf"):
                if key in response:
                    response[key] = [v for v in response[key] if "error" not in v.get("properties", {})]
        return doc


def read_document(path: Path, methods: dict[str, Json], readable: Readable) -> dict[str, Json]:
    """The document at `path`, an OpenAPI one as it is, an OpenRPC one (detected by its
    `openrpc` member) converted by tools.openrpc_upstream, its notes added to `readable`."""
    document = load_json(path)
    if not openrpc_upstream.is_openrpc(document):
        return cast(dict[str, Json], document)
    converted = openrpc_upstream.as_openapi(document, methods)
    readable.notes.extend(f"{path.name} (OpenRPC {document['openrpc']}): {note}" for note in converted.notes)
    readable.without_errors |= converted.without_errors
    return converted.document


def _report_against(args: argparse.Namespace, methods: dict[str, Json]) -> int:
    """--report-only --against: two documents compared as they stand, no overlay on either."""
    read = Readable([], set())
    try:
        old_doc, new_doc = read_document(args.against, methods, read), read_document(args.upstream, methods, read)
        partial = bool(read.notes)  # an OpenRPC side: the methods it lacks are noted, not refused
        old, new = as_it_stands(old_doc, partial), as_it_stands(new_doc, partial)
    except (OverlayError, KeyError, TypeError) as exc:
        print(f"spec_sync: {exc}", file=sys.stderr)
        return 2
    heading = (
        f"spec_sync: changes from {_version(old)} ({args.against.name}) to {_version(new)} "
        f"({args.upstream.name}), both as they stand:"
    )
    _print_report(old, new, methods, args.json, heading, read)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    try:
        return _sync(args)
    except InputError as exc:
        print(f"spec_sync: {exc}", file=sys.stderr)
        return 2


def _sync(args: argparse.Namespace) -> int:
    overlays = load_json(OVERLAYS)
    if args.against:
        return _report_against(args, overlays["methods"])
    read = Readable([], set())
    upstream = read_document(args.upstream, overlays["methods"], read)
    for note in read.notes:
        print(f"spec_sync: {note}")
    try:
        doc, redundant = build_spec(upstream, overlays, load_json(DESCRIPTIONS), load_json(EXAMPLES))
    except (OverlayError, KeyError) as exc:
        print(f"spec_sync: {exc}", file=sys.stderr)
        return 2
    text = render(doc)
    current = args.out.read_text(encoding="utf-8") if args.out.exists() else None
    heading = f"spec_sync: changes from upstream {_version(upstream)} ({args.upstream.name}) against {args.out}:"
    if current is None:
        print(f"{heading}\n  no current spec to compare with")
    else:
        _print_report(json.loads(current), doc, overlays["methods"], args.json, heading)
    if args.json:
        return 0
    for note in redundant:
        print(f"spec_sync: {note}")
    if args.report_only:
        return 0
    problems = interface_problems(doc, overlays["methods"])
    if problems:
        for problem in problems:
            print(f"spec_sync: interface departure not declared in spec/DEVIATIONS.md: {problem}", file=sys.stderr)
        print(
            "spec_sync: not written; keep the field with an overlay, or declare the departure in "
            f"spec/DEVIATIONS.md ({DECLARED_HEADING.lstrip('# ')})",
            file=sys.stderr,
        )
        return 2
    if args.check:
        if current == text:
            print(f"spec_sync: {args.out} is up to date")
            return 0
        sys.stdout.writelines(
            difflib.unified_diff((current or "").splitlines(True), text.splitlines(True), str(args.out), "synced")
        )
        return 1
    args.out.write_text(text, encoding="utf-8")
    print(f"spec_sync: wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
