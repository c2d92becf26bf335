"""Generated from spec/openapi.json by `python -m tools.regenerate`. Do not edit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """What the spec says about one JSON-RPC method."""

    name: str
    identifier: str  # the handler's name in RpcHandlers
    path: str
    params_schema: str
    response_schema: str
    result_schema: str
    takes_block_reference: bool
    accepts_positional: bool
    params_members: tuple[str, ...]


METHODS: Final[dict[str, MethodSpec]] = {
    "ping": MethodSpec(
        name="ping",
        identifier="ping",
        path="/ping",
        params_schema="PingParams",
        response_schema="JsonRpcResponse_for_ping",
        result_schema="Pong",
        takes_block_reference=False,
        accepts_positional=False,
        params_members=(),
    ),
    "lookup": MethodSpec(
        name="lookup",
        identifier="lookup",
        path="/lookup",
        params_schema="LookupParams",
        response_schema="JsonRpcResponse_for_lookup",
        result_schema="LookupResult",
        takes_block_reference=True,
        accepts_positional=True,
        params_members=(
            "block_id",
            "finality",
            "key",
        ),
    ),
}
