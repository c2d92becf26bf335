"""The value model of a parameter table, as stored in our JSON data files.

A parameter value is one of (after `tools.convert_params` normalised nearcore's YAML):

* `int`   - any non-negative integer: gas, counts, sizes, and token amounts in yoctoNEAR
            (`"0.007 N"` in the YAML becomes `7000000000000000000000`). JSON integers of any
            size round-trip exactly through Python's `json` module.
* `bool`  - feature flags.
* `str`   - enum names (`vm_kind`) and account ids (`registrar_account_id`).
* `{"numerator": int, "denominator": int}`        - a ratio.
* `{"gas": int, "compute": int}`                   - a cost with a separate compute cost.
* `{"send_sir": c, "send_not_sir": c, "execution": c}` where each `c` is an `int` or a
  `{"gas", "compute"}` cost                         - an action fee.

`bool` is a subclass of `int` in Python; every check here keeps the two apart.
"""

from __future__ import annotations

import json
from typing import TypeAlias

from .errors import DataFormatError

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
ParamValue: TypeAlias = "bool | int | str | dict[str, ParamValue]"
Table: TypeAlias = "dict[str, ParamValue]"

RATIO_KEYS = frozenset({"numerator", "denominator"})
COST_KEYS = frozenset({"gas", "compute"})
FEE_KEYS = frozenset({"send_sir", "send_not_sir", "execution"})


def is_int(value: object) -> bool:
    """True for a real integer (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _check_uint(value: object, where: str) -> int:
    if not is_int(value):
        raise DataFormatError(f"{where}: expected a non-negative integer, got {describe(value)}")
    assert isinstance(value, int)
    if value < 0:
        raise DataFormatError(f"{where}: expected a non-negative integer, got {value}")
    return value


def _check_cost(value: object, where: str) -> ParamValue:
    """An `int` or a `{"gas", "compute"}` mapping of integers."""
    if is_int(value):
        return _check_uint(value, where)
    if isinstance(value, dict) and set(value) == COST_KEYS:
        return {key: _check_uint(value[key], f"{where}.{key}") for key in ("gas", "compute")}
    raise DataFormatError(f"{where}: expected an integer or {{gas, compute}}, got {describe(value)}")


def check_param_value(value: object, where: str) -> ParamValue:
    """Return `value` as a `ParamValue`, or raise `DataFormatError` naming `where`."""
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if is_int(value):
        return _check_uint(value, where)
    if isinstance(value, dict):
        keys = set(value)
        if keys == RATIO_KEYS:
            numerator = value["numerator"]
            denominator = value["denominator"]
            if not (is_int(numerator) and is_int(denominator)):
                raise DataFormatError(f"{where}: ratio parts must be integers")
            assert isinstance(numerator, int) and isinstance(denominator, int)
            if denominator == 0:
                raise DataFormatError(f"{where}: ratio has a zero denominator")
            return {"numerator": numerator, "denominator": denominator}
        if keys == COST_KEYS:
            return _check_cost(value, where)
        if keys == FEE_KEYS:
            return {key: _check_cost(value[key], f"{where}.{key}") for key in ("send_sir", "send_not_sir", "execution")}
    raise DataFormatError(f"{where}: unsupported parameter value {describe(value)}")


def as_json(value: ParamValue) -> JsonValue:
    """The same value, typed as JSON (a parameter value is always valid JSON)."""
    if isinstance(value, dict):
        return {key: as_json(item) for key, item in value.items()}
    return value


def canonical_text(value: ParamValue) -> str:
    """A canonical, type-preserving text form: equal texts <=> equal values.

    Used for strict comparison (`true` and `1` differ, mapping key order does not matter)
    and in error messages.
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def same_value(left: ParamValue, right: ParamValue) -> bool:
    return canonical_text(left) == canonical_text(right)


def describe(value: object) -> str:
    """Short human-readable form of any value for error messages."""
    try:
        text = json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > 120:
        text = text[:117] + "..."
    return f"{text} ({type(value).__name__})"
