"""Protocol 87 (nearcore 2.14) as the packaged data serves it, held to nearcore's own 87.yaml.

Every parameter 87.yaml changes is either a field of interface 1.2.14's view, whose value at
87 is the diff's `new` (and at 85, the last stored version below, its `old`), or a parameter
the view does not show (`NOT_IN_VIEW`), which leaves the view as it was. Nothing else moves.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.runtime_params.layout import NOT_IN_VIEW, Const, Field, Node, Obj
from nearrpc.runtime_params.spec_1_2_14 import SPEC_LAYOUT
from tools import runtime_configs_2_14

from ._reference import runtime_configs_dir

STORE = RuntimeParamStore.load()
DIFF_87 = runtime_configs_dir().parent / runtime_configs_2_14.UPSTREAM_DIFF


def field_paths(node: Node, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Field]]:
    if isinstance(node, Field):
        yield path, node
    elif isinstance(node, Obj):
        for key, child in node.fields:
            yield from field_paths(child, (*path, key))
    else:
        assert isinstance(node, Const)


def at(view: dict[str, object], path: tuple[str, ...]) -> object:
    value: object = view
    for key in path:
        assert isinstance(value, dict)
        value = value[key]
    return value


def shown(raw: object) -> object:
    """How the view shows an 87.yaml value of the kinds 87 changes (a flag, a ratio)."""
    if isinstance(raw, bool):
        return raw
    assert isinstance(raw, dict) and set(raw) == {"numerator", "denominator"}, f"new kind of value {raw!r}"
    numerator, denominator = int(raw["numerator"]), int(raw["denominator"])
    divisor = math.gcd(numerator, denominator)
    return [numerator // divisor, denominator // divisor]


def changes_87() -> dict[str, dict[str, object]]:
    if not DIFF_87.is_file():
        pytest.skip(f"{DIFF_87} not found (set NEARRPC_REFERENCE_DIR to the shared 'reference' folder)")
    document = yaml.safe_load(DIFF_87.read_text(encoding="utf-8"))
    assert isinstance(document, dict) and document
    return document


@pytest.mark.reference
@pytest.mark.parametrize("chain", ["mainnet", "testnet"])
def test_view_at_87_moves_exactly_as_87_yaml_says(chain: str) -> None:
    changes = changes_87()
    before, after = STORE.spec_view(85, chain), STORE.spec_view(87, chain)
    by_param = {field.param: path for path, field in field_paths(SPEC_LAYOUT)}
    in_view = {name: by_param[name] for name in changes if name in by_param}
    assert set(changes) - set(in_view) <= NOT_IN_VIEW, "map every 87 parameter to a field or NOT_IN_VIEW"
    for name, path in in_view.items():
        assert at(after, path) == shown(changes[name]["new"]), name
        assert at(before, path) == shown(changes[name]["old"]), name
    paths = [path for path, _ in field_paths(SPEC_LAYOUT) if _present(before, path)]
    moved = {path for path in paths if at(before, path) != at(after, path)}
    assert moved == set(in_view.values())
    # Today that is these three, which the closing note of the protocol-87 work lists.
    assert sorted(in_view) == ["burnt_gas_reward", "ml_dsa_verify_host_fn", "sha3_host_fns"]


def _present(view: dict[str, object], path: tuple[str, ...]) -> bool:
    try:
        at(view, path)
    except KeyError:
        return False
    return True


def test_86_is_no_stored_version_and_gets_the_85_config() -> None:
    # nearcore 2.14 has no 86 diff (its only change moved to 87), so 86 floors to 85.
    assert 86 not in STORE.stored_versions and 87 in STORE.stored_versions
    assert STORE.spec_view(86, "mainnet") == STORE.spec_view(85, "mainnet")


def test_assembly_refuses_missing_inputs_and_a_used_folder(tmp_path: Path) -> None:
    with pytest.raises(runtime_configs_2_14.AssemblyError, match=r"parameters\.yaml not found"):
        runtime_configs_2_14.assemble(tmp_path / "nowhere", tmp_path / "out")
    reference = tmp_path / "reference"
    (reference / "runtime_configs").mkdir(parents=True)
    for name in runtime_configs_2_14.BASE_TABLES:
        (reference / "runtime_configs" / name).write_text("burnt_gas_reward: { numerator: 3, denominator: 10 }\n")
    (reference / "runtime_configs" / "86.yaml").write_text("fix_contract_loading_error: { old: false, new: true }\n")
    (reference / "upstream").mkdir()
    (reference / runtime_configs_2_14.UPSTREAM_DIFF).write_text("sha3_host_fns: { old: false, new: true }\n")
    out = runtime_configs_2_14.assemble(reference, tmp_path / "out")
    assert sorted(path.name for path in out.iterdir()) == ["87.yaml", "parameters.yaml", "parameters_testnet.yaml"]
    base = yaml.safe_load((out / "parameters.yaml").read_text())
    assert base["sha3_host_fns"] is False and base["burnt_gas_reward"] == {"numerator": 3, "denominator": 10}
    with pytest.raises(runtime_configs_2_14.AssemblyError, match="not an empty folder"):
        runtime_configs_2_14.assemble(reference, out)
    assert runtime_configs_2_14.main([str(tmp_path / "nowhere"), str(tmp_path / "out2")]) == 1
