"""Render a parameter table through a layout into a view (an insertion-ordered JSON dict)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

from .errors import DataFormatError, MissingParameterError
from .layout import Const, Field, Kind, Obj
from .values import JsonValue, ParamValue, describe, is_int

VM_KINDS: Final = frozenset({"Wasmer0", "Wasmtime", "Wasmer2", "NearVm"})

# Platform rule for `vm_kind`: a nearcore binary built for any architecture other than x86_64
# supports only Wasmtime, so it reports every configured VM kind as "Wasmtime". Mainnet
# validators (and the reference snapshots) are x86_64, so we render as an x86_64 node does:
# the kind written in the parameter files (Wasmer0 -> Wasmer2 at 48 -> NearVm at 62 ->
# Wasmtime at 84) is reported unchanged.
RENDER_TARGET_ARCH: Final = "x86_64"


def effective_vm_kind(configured: str, target_arch: str = RENDER_TARGET_ARCH) -> str:
    if configured not in VM_KINDS:
        raise DataFormatError(f"vm_kind {configured!r} is not one of {sorted(VM_KINDS)}")
    return configured if target_arch == "x86_64" else "Wasmtime"


def _uint(value: ParamValue, where: str) -> int:
    if is_int(value):
        assert isinstance(value, int)
        if value >= 0:
            return value
    raise DataFormatError(f"{where}: expected a non-negative integer, got {describe(value)}")


def _cost_gas(value: ParamValue, where: str) -> int:
    """A plain integer, or the `gas` part of a `{gas, compute}` cost."""
    if isinstance(value, dict):
        if set(value) != {"gas", "compute"}:
            raise DataFormatError(f"{where}: expected {{gas, compute}}, got {describe(value)}")
        return _uint(value["gas"], f"{where}.gas")
    return _uint(value, where)


def _ratio(value: ParamValue, where: str) -> tuple[int, int]:
    if not (isinstance(value, dict) and set(value) == {"numerator", "denominator"}):
        raise DataFormatError(f"{where}: expected {{numerator, denominator}}, got {describe(value)}")
    numerator, denominator = value["numerator"], value["denominator"]
    if not (is_int(numerator) and is_int(denominator)) or denominator == 0:
        raise DataFormatError(f"{where}: invalid ratio {describe(value)}")
    assert isinstance(numerator, int) and isinstance(denominator, int)
    return numerator, denominator


def _lowest_terms(numerator: int, denominator: int) -> list[int]:
    """nearcore stores ratios as reduced rationals with a positive denominator."""
    divisor = math.gcd(numerator, denominator)
    if denominator < 0:
        divisor = -divisor
    return [numerator // divisor, denominator // divisor]


def _render_field(field: Field, value: ParamValue, where: str) -> JsonValue:
    kind = field.kind
    if kind is Kind.UINT:
        return _uint(value, where)
    if kind is Kind.COST:
        return _cost_gas(value, where)
    if kind is Kind.BALANCE:
        return str(_uint(value, where))
    if kind is Kind.BOOL or kind is Kind.STORAGE_GET_MODE:
        if not isinstance(value, bool):
            raise DataFormatError(f"{where}: expected a boolean, got {describe(value)}")
        if kind is Kind.STORAGE_GET_MODE:
            return "FlatStorage" if value else "Trie"
        return value
    if kind is Kind.STRING or kind is Kind.VM_KIND:
        if not isinstance(value, str):
            raise DataFormatError(f"{where}: expected a string, got {describe(value)}")
        return effective_vm_kind(value) if kind is Kind.VM_KIND else value
    if kind is Kind.FEE:
        if not (isinstance(value, dict) and set(value) == {"send_sir", "send_not_sir", "execution"}):
            raise DataFormatError(f"{where}: expected a fee, got {describe(value)}")
        return {part: _cost_gas(value[part], f"{where}.{part}") for part in ("send_sir", "send_not_sir", "execution")}
    if kind is Kind.RATIO_PAIR:
        return list[JsonValue](_lowest_terms(*_ratio(value, where)))
    if kind is Kind.RATIO_FLOAT:
        numerator, denominator = _ratio(value, where)
        return numerator / denominator
    raise AssertionError(f"unhandled kind {kind}")  # pragma: no cover


def render(layout: Obj, table: Mapping[str, ParamValue], context: str) -> dict[str, JsonValue]:
    """Build the view of `table`. `context` (e.g. "mainnet protocol version 86") goes into
    error messages."""
    out: dict[str, JsonValue] = {}
    for key, node in layout.fields:
        if isinstance(node, Obj):
            out[key] = render(node, table, context)
        elif isinstance(node, Const):
            out[key] = node.value
        else:
            value = table.get(node.param)
            if value is None:
                if node.optional:
                    continue
                if node.default is None:
                    raise MissingParameterError(
                        f"{context}: view field {key!r} needs parameter {node.param!r}, which is "
                        "absent (never added, or removed by a diff) and has no code default"
                    )
                value = node.default
            out[key] = _render_field(node, value, f"{context}: parameter {node.param!r}")
    return out
