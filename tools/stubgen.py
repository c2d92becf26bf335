"""Our small generator: method dispatch table, typed handler interface and FastAPI route stubs.

Everything is derived from the spec's paths: each `POST /<method>` operation names its request
envelope, whose `params` names the params schema, and its 200 response names the response
envelope. The files are Jinja2 templates (tools/templates/) rendered in a fixed order and
formatted by ruff, so the output is byte-deterministic.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

HEADER = '"""Generated from spec/openapi.json by `python -m tools.regenerate`. Do not edit."""\n'
TEMPLATES = Path(__file__).resolve().parent / "templates"
_REF_PREFIX = "#/components/schemas/"


@dataclass(frozen=True)
class MethodInfo:
    name: str
    identifier: str  # the name as a Python identifier
    path: str
    params_schema: str
    response_schema: str
    result_schema: str
    takes_block_reference: bool
    accepts_positional: bool
    params_members: tuple[str, ...]


def _ref_name(node: dict[str, Any], where: str) -> str:
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith(_REF_PREFIX):
        raise ValueError(f"{where}: expected a $ref to a component schema")
    return ref[len(_REF_PREFIX) :]


def _branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return list(schema.get("anyOf", [])) + list(schema.get("oneOf", []))


def _params_branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The params' alternatives, each an `allOf` of parts (query's request types) merged into
    one object, so that their members count like those of a plain branch."""
    merged = []
    for branch in _branches(schema):
        parts = branch.get("allOf")
        if parts:
            properties: dict[str, Any] = {}
            for part in parts:
                properties.update(part.get("properties", {}))
            branch = {**branch, "properties": properties}
        merged.append(branch)
    return merged


def collect_methods(spec: dict[str, Any]) -> list[MethodInfo]:
    schemas: dict[str, Any] = spec["components"]["schemas"]
    methods: list[MethodInfo] = []
    for path, item in spec["paths"].items():
        if path == "/":
            continue
        operation = item["post"]
        where = f"POST {path}"
        request = _ref_name(operation["requestBody"]["content"]["application/json"]["schema"], where)
        response = _ref_name(operation["responses"]["200"]["content"]["application/json"]["schema"], where)
        envelope = schemas[request]
        (name,) = envelope["properties"]["method"]["enum"]
        if path != f"/{name}":
            raise ValueError(f"{where}: path does not match method {name!r}")
        params = _ref_name(envelope["properties"]["params"], f"{request}.params")
        result = next(
            _ref_name(branch["properties"]["result"], f"{response}.result")
            for branch in _branches(schemas[response])
            if "result" in branch.get("properties", {})
        )
        params_branches = _params_branches(schemas[params])
        members = set(schemas[params].get("properties", {}))
        for branch in params_branches:
            members.update(branch.get("properties", {}))
        if any(m.identifier == _identifier(name) for m in methods):
            raise ValueError(f"{where}: another method's handler is already named {_identifier(name)!r}")
        methods.append(
            MethodInfo(
                name=name,
                identifier=_identifier(name),
                path=path,
                params_schema=params,
                response_schema=response,
                result_schema=result,
                takes_block_reference=any("block_id" in b.get("properties", {}) for b in params_branches),
                accepts_positional=any(b.get("type") == "array" for b in params_branches),
                params_members=tuple(sorted(members)),
            )
        )
    return methods


def _identifier(name: str) -> str:
    """The handler's name: the method's, with what Python cannot spell as `_` (rpc.discover ->
    rpc_discover)."""
    identifier = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    if not identifier.isidentifier():
        raise ValueError(f"method {name!r} has no Python name")
    return identifier


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # Python source, not HTML
    )
    env.filters["pyrepr"] = _python_literal
    return env


def _python_literal(value: object) -> str:
    """A Python literal with double quotes (JSON string syntax is valid Python for these)."""
    if isinstance(value, tuple):
        return "(" + "".join(_python_literal(item) + ", " for item in value).rstrip(" ") + ")"
    return json.dumps(value)


def format_source(source: str) -> str:
    """ruff's formatting of generated source, independent of the project's lint settings."""
    command = [_ruff(), "format", "--isolated", "--line-length", "120", "--target-version", "py311", "-"]
    done = subprocess.run(command, input=source, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ValueError(f"ruff could not format generated source: {done.stderr.strip()}")
    return done.stdout


def _ruff() -> str:
    beside = Path(sys.executable).with_name("ruff")
    return str(beside) if beside.exists() else "ruff"


def render_all(spec: dict[str, Any]) -> dict[str, str]:
    """File name (inside generated/) -> text, for every file this generator owns."""
    methods = collect_methods(spec)
    env = _environment()
    files = {}
    for name in ("methods.py", "handlers.py", "routes.py"):
        text = env.get_template(f"{name}.jinja").render(header=HEADER.rstrip("\n"), methods=methods)
        files[name] = format_source(text)
    return files
