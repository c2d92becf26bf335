"""spec_view on the packaged data: interface 1.2.14's field set, placement and values."""

from __future__ import annotations

import json
from typing import Any

import pytest

from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.runtime_params.data_files import load_param_data, load_spec_additions
from nearrpc.runtime_params.spec_1_2_14 import PLACEMENT, REMOVED, SPEC_ONLY_PARAMETERS
from nearrpc.spec import spec_document, validate_component

STORE = RuntimeParamStore.load()
CASES = [(v, chain) for chain in ("mainnet", "testnet") for v in STORE.stored_versions]
CASE_IDS = [f"{chain}-{v}" for v, chain in CASES]


def schema_of(node: dict[str, Any]) -> dict[str, Any]:
    """Follow `allOf: [$ref]` / `$ref` to the component schema."""
    while True:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            node = spec_document()["components"]["schemas"][name]
        elif len(node.get("allOf", [])) == 1:
            node = node["allOf"][0]
        else:
            return node


def nullable(node: dict[str, Any]) -> bool:
    kind = schema_of(node).get("type")
    return isinstance(kind, list) and "null" in kind


def check_field_set(view: dict[str, Any], schema: dict[str, Any], path: str) -> None:
    properties = schema["properties"]
    assert not set(view) - set(properties), f"{path}: fields the 1.2.14 spec does not have"
    for name in set(properties) - set(view):
        # Only nearcore `Option` fields (nullable in the spec) may be left out.
        assert nullable(properties[name]), f"{path}.{name} missing"
    for name, value in view.items():
        if isinstance(value, dict):
            check_field_set(value, schema_of(properties[name]), f"{path}.{name}")


@pytest.mark.parametrize(("version", "chain"), CASES, ids=CASE_IDS)
def test_spec_view_has_exactly_the_interface_field_set(version: int, chain: str) -> None:
    view = STORE.spec_view(version, chain)
    validate_component("RuntimeConfigView", view)
    check_field_set(view, schema_of({"$ref": "#/RuntimeConfigView"}), "runtime_config")


def strip(view: dict[str, Any], removals: list[tuple[tuple[str, ...], str]]) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(view))
    for path, key in removals:
        target = copy
        for step in path:
            target = target[step]
        target.pop(key, None)
    return copy


@pytest.mark.parametrize(("version", "chain"), CASES, ids=CASE_IDS)
def test_spec_view_is_nearcore_view_plus_the_delta(version: int, chain: str) -> None:
    spec = STORE.spec_view(version, chain)
    nearcore = STORE.nearcore_view(version, chain)
    added = [(insertion.path, insertion.key) for insertion in PLACEMENT]
    assert json.dumps(strip(spec, added)) == json.dumps(strip(nearcore, list(REMOVED)))


def test_new_keys_sit_where_the_placement_table_says() -> None:
    wasm = STORE.spec_view(86, "mainnet")["wasm_config"]
    assert isinstance(wasm, dict)
    ext = list(wasm["ext_costs"])
    i = ext.index("keccak512_byte")
    assert ext[i + 1 : i + 7] == [
        "sha3_256_base", "sha3_256_byte", "sha3_384_base",
        "sha3_384_byte", "sha3_512_base", "sha3_512_byte",
    ]  # fmt: skip
    j = ext.index("p256_verify_byte")
    assert ext[j + 1 : j + 3] == ["ml_dsa_verify_base", "ml_dsa_verify_byte"]
    keys = list(wasm)
    k = keys.index("p256_verify_host_fn")
    assert keys[k + 1 : k + 4] == ["ml_dsa_verify_host_fn", "sha3_host_fns", "yield_with_id_host_fns"]
    assert keys[keys.index("bls12381_not_in_group_fix") + 1] == "fix_contract_loading_cost"


@pytest.mark.parametrize(("version", "chain"), CASES, ids=CASE_IDS)
def test_values_of_the_new_fields(version: int, chain: str) -> None:
    wasm = STORE.spec_view(version, chain)["wasm_config"]
    assert isinstance(wasm, dict)
    ext = wasm["ext_costs"]
    # Costs from newer nearcore's base table (see data/spec_1_2_14_additions.json).
    assert (ext["sha3_256_base"], ext["sha3_256_byte"]) == (5_879_491_275, 21_471_105)
    assert (ext["sha3_384_base"], ext["sha3_384_byte"]) == (5_811_388_236, 36_649_701)
    assert (ext["sha3_512_base"], ext["sha3_512_byte"]) == (5_811_388_236, 36_649_701)
    assert (ext["ml_dsa_verify_base"], ext["ml_dsa_verify_byte"]) == (540_000_000_000, 11_000_000)
    # 87.yaml (nearcore 2.14) turns both host functions on; the nightly 129 and 155 keep them.
    assert wasm["ml_dsa_verify_host_fn"] is (version >= 87)
    assert wasm["sha3_host_fns"] is (version >= 87)
    # Set upstream only by a nightly diff above every stored version: omitted, like nearcore.
    assert "max_globals_per_contract" not in wasm["limit_config"]
    assert "storage_get_mode" not in wasm


def test_additions_cover_the_spec_only_parameters_and_are_not_upstream_yet() -> None:
    additions = load_spec_additions().base_parameters
    packaged = load_param_data()
    # Every 1.2.14-only parameter has a value, from the additions or from nearcore's base table,
    # except the optional limit (absent on purpose).
    carried = SPEC_ONLY_PARAMETERS & set(packaged.base)
    assert carried == {"ml_dsa_verify_host_fn", "sha3_host_fns"}
    assert set(additions) == SPEC_ONLY_PARAMETERS - carried - {"max_globals_per_contract"}
    # When nearcore's own files start carrying one of them, drop it from the additions file.
    assert not set(additions) & (set(packaged.base) | set(packaged.testnet_base))
