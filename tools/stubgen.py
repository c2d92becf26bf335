"""Our small generator: method dispatch table, typed handler interface and FastAPI route stubs.

Everything is derived from the spec's paths: each `POST /<method>` operation names its request
envelope, whose `params` names the params schema, and its 200 response names the response
envelope. The output is plain text built in a fixed order, so it is byte-deterministic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

HEADER = '"""Generated from spec/openapi.json by `python -m tools.regenerate`. Do not edit."""\n'
_REF_PREFIX = "#/components/schemas/"


@dataclass(frozen=True)
class MethodInfo:
    name: str
    path: str
    request_schema: str
    params_schema: str
    response_schema: str
    result_schema: str
    params_required: bool
    takes_block_reference: bool
    accepts_positional: bool
    params_members: tuple[str, ...]
    description: str


def _ref_name(node: dict[str, Any], where: str) -> str:
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith(_REF_PREFIX):
        raise ValueError(f"{where}: expected a $ref to a component schema")
    return ref[len(_REF_PREFIX) :]


def _branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return list(schema.get("anyOf", [])) + list(schema.get("oneOf", []))


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
        params_branches = _branches(schemas[params])
        members = set(schemas[params].get("properties", {}))
        for branch in params_branches:
            members.update(branch.get("properties", {}))
        methods.append(
            MethodInfo(
                name=name,
                path=path,
                request_schema=request,
                params_schema=params,
                response_schema=response,
                result_schema=result,
                params_required="params" in envelope.get("required", []),
                takes_block_reference=any("block_id" in b.get("properties", {}) for b in params_branches),
                accepts_positional=any(b.get("type") == "array" for b in params_branches),
                params_members=tuple(sorted(members)),
                description=operation.get("description", ""),
            )
        )
    return methods


def _q(text: str) -> str:
    """A double-quoted Python string literal (JSON string syntax is valid Python for these)."""
    return json.dumps(text)


def _identifier(name: str) -> str:
    return name if name.isidentifier() else "_" + "".join(c if c.isalnum() else "_" for c in name)


def render_methods(methods: list[MethodInfo]) -> str:
    lines = [
        HEADER,
        "from __future__ import annotations",
        "",
        "from dataclasses import dataclass",
        "from typing import Final",
        "",
        "",
        "@dataclass(frozen=True, slots=True)",
        "class MethodSpec:",
        '    """What the spec says about one JSON-RPC method."""',
        "",
        "    name: str",
        "    path: str",
        "    request_schema: str",
        "    params_schema: str",
        "    response_schema: str",
        "    result_schema: str",
        "    params_required: bool",
        "    takes_block_reference: bool",
        "    accepts_positional: bool",
        "    params_members: tuple[str, ...]",
        "",
        "",
        'ROOT_PATH: Final = "/"',
        "",
        "METHODS: Final[dict[str, MethodSpec]] = {",
    ]
    for m in methods:
        lines += [
            f"    {_q(m.name)}: MethodSpec(",
            f"        name={_q(m.name)},",
            f"        path={_q(m.path)},",
            f"        request_schema={_q(m.request_schema)},",
            f"        params_schema={_q(m.params_schema)},",
            f"        response_schema={_q(m.response_schema)},",
            f"        result_schema={_q(m.result_schema)},",
            f"        params_required={m.params_required!r},",
            f"        takes_block_reference={m.takes_block_reference!r},",
            f"        accepts_positional={m.accepts_positional!r},",
            f"        params_members=({''.join(_q(p) + ', ' for p in m.params_members).rstrip()}),",
            "    ),",
        ]
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_handlers(methods: list[MethodInfo]) -> str:
    lines = [
        HEADER,
        "from __future__ import annotations",
        "",
        "from typing import Protocol",
        "",
        "from generated import models",
        "",
        "",
        "class RpcHandlers(Protocol):",
        '    """The typed interface service/ implements: one method per JSON-RPC method.',
        "",
        "    Each receives its params as the generated model and returns the serialized `result`",
        "    (compact JSON bytes of the result schema), so immutable answers can be cached as bytes.",
        "    Handler errors are raised as exceptions that the service's error layer renders.",
        '    """',
    ]
    for m in methods:
        lines += [
            "",
            f"    def {_identifier(m.name)}(self, params: models.{m.params_schema}) -> bytes:",
            f'        """Result schema: {m.result_schema}."""',
            "        ...",
        ]
    return "\n".join(lines) + "\n"


def render_routes(methods: list[MethodInfo]) -> str:
    lines = [
        HEADER,
        "from __future__ import annotations",
        "",
        "from typing import Protocol",
        "",
        "from fastapi import APIRouter, Request, Response",
        "",
        "",
        "class JsonRpcEndpoint(Protocol):",
        '    """Turns one HTTP request into one HTTP response; `path_method` is None for POST /."""',
        "",
        "    async def __call__(self, request: Request, path_method: str | None) -> Response: ...",
        "",
        "",
        "def build_router(endpoint: JsonRpcEndpoint) -> APIRouter:",
        '    """One POST route for the shared endpoint and one per method, all delegating.',
        "",
        "    Registered as plain routes: the endpoint parses and validates the JSON-RPC body itself,",
        "    so FastAPI's per-request dependency and validation machinery would only cost time.",
        '    """',
        "    router = APIRouter()",
        "",
        "    async def jsonrpc(request: Request) -> Response:",
        "        return await endpoint(request, None)",
        "",
        '    router.add_route("/", jsonrpc, methods=["POST"], name="jsonrpc", include_in_schema=False)',
    ]
    for m in methods:
        fn = _identifier(m.name)
        lines += [
            "",
            f"    async def {fn}(request: Request) -> Response:",
            f"        return await endpoint(request, {_q(m.name)})",
            "",
            f"    router.add_route({_q(m.path)}, {fn}, methods=[\"POST\"], name={_q(m.name)}, include_in_schema=False)",
        ]
    lines += ["", "    return router"]
    return "\n".join(lines) + "\n"


def render_all(spec: dict[str, Any]) -> dict[str, str]:
    """File name (inside generated/) -> text, for every file this generator owns."""
    methods = collect_methods(spec)
    return {
        "methods.py": render_methods(methods),
        "handlers.py": render_handlers(methods),
        "routes.py": render_routes(methods),
    }
