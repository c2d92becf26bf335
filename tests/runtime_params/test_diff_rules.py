"""Diff rules, version lookup and view rules, on small hand-built tables (no ../shared needed)."""

from __future__ import annotations

import json

import pytest

from nearrpc.runtime_params import (
    DataFormatError,
    DiffMismatchError,
    InvalidProtocolVersionError,
    MissingParameterError,
    RuntimeParamStore,
    UnsupportedChainError,
)
from nearrpc.runtime_params.data_files import ParamData, SpecAdditions, load_param_data
from nearrpc.runtime_params.layout import Const, Field, Kind, Obj
from nearrpc.runtime_params.render import effective_vm_kind, render
from nearrpc.runtime_params.table import Change, Diff, apply_diff, build_chain, resolve_version
from nearrpc.runtime_params.values import ParamValue, Table


def diff(version: int, **changes: Change) -> Diff:
    return Diff(version, changes)


# --- the three diff forms -----------------------------------------------------------------


def test_add_new_parameter() -> None:
    table: Table = {"a": 1}
    assert apply_diff(table, diff(5, b=Change(new=2))) == {"a": 1, "b": 2}
    assert table == {"a": 1}, "the input table must not be modified"


def test_change_with_matching_old_value() -> None:
    result = apply_diff({"a": 1, "fee": {"gas": 3, "compute": 4}}, diff(7, a=Change(old=1, new=9)))
    assert result == {"a": 9, "fee": {"gas": 3, "compute": 4}}


def test_change_of_structured_value_ignores_key_order() -> None:
    table: Table = {"cost": {"gas": 3, "compute": 4}}
    change = Change(old={"compute": 4, "gas": 3}, new={"gas": 5, "compute": 6})
    assert apply_diff(table, diff(7, cost=change)) == {"cost": {"gas": 5, "compute": 6}}


def test_change_with_mismatching_old_value_names_everything() -> None:
    with pytest.raises(DiffMismatchError) as caught:
        apply_diff({"wasm_regular_op_cost": 3}, diff(48, wasm_regular_op_cost=Change(old=4, new=5)))
    message = str(caught.value)
    assert "'wasm_regular_op_cost'" in message
    assert "protocol version 48" in message
    assert "expected to be 4" in message
    assert "has 3" in message
    assert (caught.value.parameter, caught.value.version) == ("wasm_regular_op_cost", 48)
    assert (caught.value.expected, caught.value.actual) == ("4", "3")


def test_old_value_comparison_is_type_strict() -> None:
    # `true == 1` in Python, but a flag is not a number.
    with pytest.raises(DiffMismatchError, match=r"expected to be 1 .* has true"):
        apply_diff({"flag": True}, diff(3, flag=Change(old=1, new=False)))


def test_old_value_for_absent_parameter_is_an_error() -> None:
    with pytest.raises(DiffMismatchError, match=r"'b' was expected to be 2 .* has absent"):
        apply_diff({"a": 1}, diff(9, b=Change(old=2, new=3)))


def test_adding_a_parameter_that_exists_is_an_error() -> None:
    with pytest.raises(DiffMismatchError, match=r"'a' was expected to be absent .* has 1"):
        apply_diff({"a": 1}, diff(9, a=Change(new=3)))


def test_remove_parameter() -> None:
    assert apply_diff({"a": 1, "b": 2}, diff(4, b=Change(old=2))) == {"a": 1}


def test_remove_with_mismatching_old_value() -> None:
    with pytest.raises(DiffMismatchError, match="expected to be 3"):
        apply_diff({"a": 1, "b": 2}, diff(4, b=Change(old=3)))


def test_change_needs_old_or_new() -> None:
    with pytest.raises(DataFormatError):
        Change()


# --- chain and lookup ---------------------------------------------------------------------


def test_chain_applies_diffs_cumulatively_and_stores_each_version() -> None:
    chain = build_chain(
        {"a": 1, "b": 1},
        [diff(10, a=Change(old=1, new=2)), diff(20, b=Change(old=1, new=3)), diff(30)],
    )
    assert chain == {
        0: {"a": 1, "b": 1},
        10: {"a": 2, "b": 1},
        20: {"a": 2, "b": 3},
        30: {"a": 2, "b": 3},
    }


def test_chain_checks_old_values_against_the_cumulative_table() -> None:
    with pytest.raises(DiffMismatchError, match="version 20"):
        build_chain({"a": 1}, [diff(10, a=Change(old=1, new=2)), diff(20, a=Change(old=1, new=3))])


def test_chain_rejects_unordered_versions() -> None:
    with pytest.raises(DataFormatError, match="ascending"):
        build_chain({}, [diff(20), diff(10)])
    with pytest.raises(DataFormatError, match="ascending"):
        build_chain({}, [diff(0)])


@pytest.mark.parametrize(
    ("requested", "expected"),
    [(0, 0), (9, 0), (10, 10), (11, 10), (19, 10), (20, 20), (10**9, 20)],
)
def test_lookup_picks_largest_stored_version_not_above_request(requested: int, expected: int) -> None:
    assert resolve_version((0, 10, 20), requested) == expected


@pytest.mark.parametrize("bad", [-1, -100])
def test_negative_version_is_rejected(bad: int) -> None:
    with pytest.raises(InvalidProtocolVersionError, match=">= 0"):
        resolve_version((0, 10), bad)


@pytest.mark.parametrize("bad", [True, 1.0, "86", None])
def test_non_integer_version_is_rejected(bad: object) -> None:
    with pytest.raises(InvalidProtocolVersionError, match="must be an integer"):
        resolve_version((0, 10), bad)


# --- rendering rules on a tiny layout -----------------------------------------------------

TINY_LAYOUT = Obj(
    (
        ("limit", Field("limit", Kind.UINT, optional=True)),
        ("rules", Field("rules", Kind.UINT, default=0)),
        ("required", Field("required", Kind.UINT)),
        ("reward", Field("reward", Kind.RATIO_PAIR)),
        ("threshold", Field("reward", Kind.RATIO_FLOAT)),
        ("fee", Field("fee", Kind.FEE)),
        ("price", Field("price", Kind.BALANCE)),
        ("mode", Field("flat", Kind.STORAGE_GET_MODE)),
        ("fixed", Const(0)),
    )
)
TINY_TABLE: Table = {
    "limit": 7,
    "rules": 2,
    "required": 1,
    "reward": {"numerator": 50, "denominator": 100},
    "fee": {"send_sir": 1, "send_not_sir": 2, "execution": {"gas": 3, "compute": 30}},
    "price": 10**27,
    "flat": True,
}


def test_render_follows_layout_order_and_kinds() -> None:
    view = render(TINY_LAYOUT, TINY_TABLE, "test")
    assert json.dumps(view) == json.dumps(
        {
            "limit": 7,
            "rules": 2,
            "required": 1,
            "reward": [1, 2],  # reduced like nearcore's Rational32
            "threshold": 0.5,
            "fee": {"send_sir": 1, "send_not_sir": 2, "execution": 3},  # gas part only
            "price": "1000000000000000000000000000",
            "mode": "FlatStorage",
            "fixed": 0,
        }
    )


def test_removed_parameters_take_their_code_default() -> None:
    table = apply_diff(TINY_TABLE, diff(5, limit=Change(old=7), rules=Change(old=2)))
    view = render(TINY_LAYOUT, table, "test")
    assert "limit" not in view  # optional limit: omitted, as nearcore skips `None`
    assert view["rules"] == 0  # explicit default
    assert list(view)[:2] == ["rules", "required"]


def test_removed_parameter_without_default_cannot_be_rendered() -> None:
    table = apply_diff(TINY_TABLE, diff(5, required=Change(old=1)))
    with pytest.raises(MissingParameterError, match=r"test: view field 'required' .*'required'"):
        render(TINY_LAYOUT, table, "test")


def test_render_rejects_wrong_value_types() -> None:
    with pytest.raises(DataFormatError, match="'required'"):
        render(TINY_LAYOUT, {**TINY_TABLE, "required": True}, "test")


# --- vm_kind platform rule ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["Wasmer0", "Wasmer2", "NearVm", "Wasmtime"])
def test_vm_kind_platform_rule(kind: str) -> None:
    assert effective_vm_kind(kind) == kind  # we render as an x86_64 node
    assert effective_vm_kind(kind, target_arch="x86_64") == kind
    assert effective_vm_kind(kind, target_arch="aarch64") == "Wasmtime"


def test_unknown_vm_kind_is_rejected() -> None:
    with pytest.raises(DataFormatError, match="vm_kind 'Wasmer3'"):
        effective_vm_kind("Wasmer3")


# --- the store on the packaged base tables plus tiny diffs ---------------------------------


@pytest.fixture(scope="module")
def packaged() -> ParamData:
    return load_param_data()


def tiny_store(packaged: ParamData, *diffs: Diff, additions: Table | None = None) -> RuntimeParamStore:
    data = ParamData(base=packaged.base, testnet_base=packaged.testnet_base, diffs=diffs)
    return RuntimeParamStore(data, SpecAdditions(ADDITIONS if additions is None else additions))


def wasm(view: dict[str, object]) -> dict[str, object]:
    section = view["wasm_config"]
    assert isinstance(section, dict)
    return section


def test_vm_kind_follows_the_tables_in_the_store(packaged: ParamData) -> None:
    base_kind = packaged.base["vm_kind"]
    store = tiny_store(
        packaged,
        diff(10, vm_kind=Change(old=base_kind, new="Wasmer2")),
        diff(20, vm_kind=Change(old="Wasmer2", new="NearVm")),
        diff(30, vm_kind=Change(old="NearVm", new="Wasmtime")),
    )
    kinds = {v: wasm(store.nearcore_view(v, "mainnet"))["vm_kind"] for v in (0, 15, 25, 35)}
    assert kinds == {0: base_kind, 15: "Wasmer2", 25: "NearVm", 35: "Wasmtime"}


def test_testnet_uses_its_base_table_for_version_zero_only(packaged: ParamData) -> None:
    assert packaged.base != packaged.testnet_base
    store = tiny_store(packaged, diff(10, wasm_regular_op_cost=Change(old=3_856_371, new=1)))

    def top_level(view: dict[str, object]) -> object:
        section = view["account_creation_config"]
        assert isinstance(section, dict)
        return section["min_allowed_top_level_account_length"]

    assert top_level(store.nearcore_view(0, "mainnet")) == 32
    assert top_level(store.nearcore_view(0, "testnet")) == 0
    assert top_level(store.nearcore_view(9, "testnet")) == 0
    # Diffs apply on top of the mainnet base table, so later versions are shared.
    assert store.nearcore_view(10, "testnet") == store.nearcore_view(10, "mainnet")
    assert top_level(store.nearcore_view(10, "testnet")) == 32
    # Any other chain id behaves like mainnet.
    assert store.nearcore_view(0, "localnet") == store.nearcore_view(0, "mainnet")


@pytest.mark.parametrize("chain_id", ["", None, 5, "benchmarknet", "congestion_control_test"])
def test_unsupported_chain_ids_are_rejected(packaged: ParamData, chain_id: object) -> None:
    store = tiny_store(packaged)
    with pytest.raises(UnsupportedChainError):
        store.nearcore_view(0, chain_id)  # type: ignore[arg-type]


def test_removed_account_id_rules_version_falls_back_to_v0(packaged: ParamData) -> None:
    old = packaged.base["account_id_validity_rules_version"]
    store = tiny_store(packaged, diff(10, account_id_validity_rules_version=Change(old=old)))
    limits = wasm(store.nearcore_view(10, "mainnet"))["limit_config"]
    assert isinstance(limits, dict)
    assert limits["account_id_validity_rules_version"] == 0


def test_store_refuses_data_with_a_required_parameter_removed(packaged: ParamData) -> None:
    with pytest.raises(MissingParameterError, match=r"protocol version 10.*'wasm_base'"):
        tiny_store(packaged, diff(10, wasm_base=Change(old=packaged.base["wasm_base"])))


def test_store_refuses_data_with_a_mismatching_diff(packaged: ParamData) -> None:
    with pytest.raises(DiffMismatchError, match="'wasm_base' was expected to be 1 "):
        tiny_store(packaged, diff(10, wasm_base=Change(old=1, new=2)))


def test_returned_views_are_copies(packaged: ParamData) -> None:
    store = tiny_store(packaged)
    first = store.nearcore_view(0, "mainnet")
    pristine = json.dumps(first)
    wasm(first)["vm_kind"] = "corrupted"
    first.clear()
    second = store.nearcore_view(0, "mainnet")
    assert json.dumps(second) == pristine
    assert second is not store.nearcore_view(0, "mainnet")


# --- spec (interface 1.2.14) view ---------------------------------------------------------

SPEC_EXT_COSTS = (
    "ml_dsa_verify_base", "ml_dsa_verify_byte", "sha3_256_base", "sha3_256_byte",
    "sha3_384_base", "sha3_384_byte", "sha3_512_base", "sha3_512_byte",
)  # fmt: skip
ADDITIONS: dict[str, ParamValue] = {
    **{f"wasm_{name}": 1000 + i for i, name in enumerate(SPEC_EXT_COSTS)},
    "ml_dsa_verify_host_fn": False,
    "sha3_host_fns": False,
}


def test_spec_view_field_set(packaged: ParamData) -> None:
    # As upstream will have it: the flag in the base table, switched on by a later diff.
    data = ParamData(
        base={**packaged.base, "sha3_host_fns": False},
        testnet_base=packaged.testnet_base,
        diffs=(
            diff(
                10,
                max_globals_per_contract=Change(new=100_000),
                sha3_host_fns=Change(old=False, new=True),
            ),
        ),
    )
    store = RuntimeParamStore(data, SpecAdditions(ADDITIONS))
    for version in (0, 10):
        view = wasm(store.spec_view(version, "mainnet"))
        assert "storage_get_mode" not in view
        ext = view["ext_costs"]
        assert isinstance(ext, dict)
        for name in SPEC_EXT_COSTS:
            assert ext[name] == ADDITIONS[f"wasm_{name}"]
        assert type(view["ml_dsa_verify_host_fn"]) is bool
        assert view["sha3_host_fns"] is (version == 10)
        limits = view["limit_config"]
        assert isinstance(limits, dict)
        assert ("max_globals_per_contract" in limits) is (version == 10)
    limits = wasm(store.spec_view(10, "mainnet"))["limit_config"]
    assert isinstance(limits, dict)
    assert limits["max_globals_per_contract"] == 100_000

    # The nearcore view keeps its own field set and is not touched by the additions.
    nearcore = wasm(store.nearcore_view(10, "mainnet"))
    assert "storage_get_mode" in nearcore
    assert "sha3_host_fns" not in nearcore
    ext = nearcore["ext_costs"]
    assert isinstance(ext, dict)
    assert not set(SPEC_EXT_COSTS) & set(ext)


def test_spec_view_without_additions_cannot_be_built(packaged: ParamData) -> None:
    with pytest.raises(MissingParameterError, match=r"spec_1_2_14 view.*'wasm_sha3_256_base'"):
        tiny_store(packaged, additions={})  # no additions -> the 1.2.14 costs have no value


def test_upstream_data_wins_over_an_addition(packaged: ParamData) -> None:
    data = ParamData(
        base={**packaged.base, **ADDITIONS, "wasm_sha3_256_base": 7},
        testnet_base={**packaged.testnet_base, **ADDITIONS},
    )
    store = RuntimeParamStore(data, SpecAdditions(ADDITIONS))
    ext = wasm(store.spec_view(0, "mainnet"))["ext_costs"]
    assert isinstance(ext, dict)
    assert ext["sha3_256_base"] == 7
