"""Convert nearcore's runtime parameter files into our data files.

    python -m tools.convert_params PATH_TO_FOLDER [--out DIR]

PATH_TO_FOLDER holds nearcore's `core/parameters/res/runtime_configs` files: `parameters.yaml`
(base table), `parameters_testnet.yaml` (testnet base table) and one `<V>.yaml` diff per
protocol version V. The output (default: service/runtime_params/data/) is `base.json`,
`base_testnet.json` and `diffs.json`; re-running on the same input reproduces them byte for
byte. A parameter bump is: copy nearcore's new files into a folder, run this, review the diff.

YAML values are read the way nearcore reads them, then normalised:

* only `true`/`false` are booleans, and every other plain scalar starts as a string;
* strings of digits and `_` separators (quoted or not) become integers of any size;
* token amounts `"<n> yN"` / `"<decimal> N"` become integers in yoctoNEAR (1 N = 10**24 yN);
* mappings keep their shape: ratios, `{gas, compute}` costs, fees;
* negative, fractional or empty values, duplicate keys and unknown parameter names are errors.

Before anything is written the diffs are applied and every view is rendered, so a diff whose
`old` value does not match, or a parameter missing from a version, stops the conversion.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from nearrpc.runtime_params.data_files import (
    GENERATED_FILES,
    ParamData,
    encode_param_data,
    load_spec_additions,
)
from nearrpc.runtime_params.errors import ParamStoreError
from nearrpc.runtime_params.known import check_known
from nearrpc.runtime_params.store import RuntimeParamStore
from nearrpc.runtime_params.table import Change, Diff
from nearrpc.runtime_params.values import ParamValue, Table, check_param_value

BASE_YAML = "parameters.yaml"
TESTNET_BASE_YAML = "parameters_testnet.yaml"
DIFF_NAME = re.compile(r"^([0-9]+)\.yaml$")
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "service" / "runtime_params" / "data"

_DIGITS = re.compile(r"^[0-9][0-9_]*$")
_AMOUNT = re.compile(r"^([0-9][0-9_]*(?:\.[0-9][0-9_]*)?)\s*(yN|N)$")
_NUMBER_LIKE = re.compile(r"^[-+]?(?:[0-9][0-9_]*)?(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?$")
_YOCTO_PER_NEAR = 10**24


class ConversionError(Exception):
    """The input folder cannot be converted; the message says where and why."""


class _StrictLoader(yaml.SafeLoader):
    """YAML 1.2-style scalars (only true/false are special) and no duplicate keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


_StrictLoader.yaml_implicit_resolvers = {}
_StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)


def _load_yaml(path: Path) -> dict[str, object]:
    try:
        document = yaml.load(path.read_text(encoding="utf-8"), Loader=_StrictLoader)
    except (OSError, yaml.YAMLError) as err:
        raise ConversionError(f"{path.name}: cannot read YAML: {err}") from err
    if document is None:  # an empty file is an empty table / diff
        return {}
    if not isinstance(document, dict) or not all(isinstance(key, str) for key in document):
        raise ConversionError(f"{path.name}: expected a mapping of parameter names")
    return document


def _amount_to_yocto(number: str, unit: str, where: str) -> int:
    amount = Decimal(number.replace("_", ""))
    if unit == "N":
        amount *= _YOCTO_PER_NEAR
    if amount != amount.to_integral_value():
        raise ConversionError(f"{where}: {number} {unit} is not a whole number of yoctoNEAR")
    return int(amount)


def _normalise(raw: object, where: str) -> object:
    """YAML value -> JSON-ready value (checked for shape by `check_param_value` afterwards)."""
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str):
        text = raw.strip()
        if _DIGITS.match(text):
            return int(text.replace("_", ""))
        amount = _AMOUNT.match(text)
        if amount:
            return _amount_to_yocto(amount.group(1), amount.group(2), where)
        if text and _NUMBER_LIKE.match(text):
            raise ConversionError(
                f"{where}: {raw!r} is not a valid value (negative or fractional numbers are not parameter values)"
            )
        return raw
    if isinstance(raw, dict):
        return {str(key): _normalise(value, f"{where}.{key}") for key, value in raw.items()}
    raise ConversionError(f"{where}: unsupported YAML value {raw!r}")


def _value(raw: object, where: str) -> ParamValue:
    try:
        return check_param_value(_normalise(raw, where), where)
    except ParamStoreError as err:
        raise ConversionError(str(err)) from err


def _read_table(path: Path) -> Table:
    document = _load_yaml(path)
    check_known(document, path.name)
    return {name: _value(raw, f"{path.name}: {name}") for name, raw in sorted(document.items())}


def _read_diff(path: Path, version: int) -> Diff:
    document = _load_yaml(path)
    check_known(document, path.name)
    changes: dict[str, Change] = {}
    for name, raw in sorted(document.items()):
        where = f"{path.name}: {name}"
        if not isinstance(raw, dict) or not raw or not set(raw) <= {"old", "new"}:
            raise ConversionError(f"{where}: a diff entry must be {{old: ..., new: ...}}")
        changes[name] = Change(
            old=_value(raw["old"], f"{where}.old") if "old" in raw else None,
            new=_value(raw["new"], f"{where}.new") if "new" in raw else None,
        )
    return Diff(version, changes)


def read_folder(folder: Path) -> ParamData:
    """Parse nearcore's parameter files in `folder`."""
    for required in (BASE_YAML, TESTNET_BASE_YAML):
        if not (folder / required).is_file():
            raise ConversionError(f"{folder}: {required} not found")
    diff_files = sorted(
        (int(match.group(1)), path)
        for path in folder.iterdir()
        if path.is_file() and (match := DIFF_NAME.match(path.name))
    )
    try:
        return ParamData(
            base=_read_table(folder / BASE_YAML),
            testnet_base=_read_table(folder / TESTNET_BASE_YAML),
            diffs=tuple(_read_diff(path, version) for version, path in diff_files),
        )
    except ParamStoreError as err:  # e.g. an unknown parameter name
        raise ConversionError(str(err)) from err


def convert(folder: Path, out: Path) -> list[Path]:
    """Convert `folder` into `out`; return the files written."""
    data = read_folder(folder)
    try:
        # Apply every diff and render every view now: bad input must not reach the service.
        RuntimeParamStore(data, load_spec_additions())
    except ParamStoreError as err:
        raise ConversionError(str(err)) from err
    encoded = encode_param_data(data)
    assert set(encoded) == set(GENERATED_FILES)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in GENERATED_FILES:
        target = out / name
        # Write then rename, so a reader never sees a half-written file.
        handle, temp = tempfile.mkstemp(prefix=f".{name}.", dir=out)
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(encoded[name])
            os.chmod(temp, 0o644)  # mkstemp creates 0600; data files are package data
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.convert_params",
        description="Convert nearcore runtime parameter YAML files into nearrpc data files.",
    )
    parser.add_argument("folder", type=Path, help="folder with parameters.yaml and <V>.yaml")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    try:
        written = convert(args.folder, args.out)
    except ConversionError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
