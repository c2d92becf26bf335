"""Every nearcore RuntimeConfigView snapshot equals our nearcore_view, field for field and in order.

The snapshots live outside the repo (../shared/reference/runtime_configs/snapshots_json, or
$NEARRPC_REFERENCE_DIR); each file is its own test id, e.g. `mainnet-86`, `testnet-0`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from nearrpc.runtime_params import RuntimeParamStore

from ._reference import missing_reason, runtime_configs_dir

pytestmark = pytest.mark.reference

REFERENCE = runtime_configs_dir()
SNAPSHOT_DIR = REFERENCE / "snapshots_json"
SNAPSHOT_NAME = re.compile(r"^runtime_config_view_(?:(testnet)_)?([0-9]+)\.json$")
MISSING = missing_reason(REFERENCE) or (None if SNAPSHOT_DIR.is_dir() else f"snapshot folder {SNAPSHOT_DIR} not found")

# nearcore redacts vm_kind in its snapshots; this is the rule the parameter files encode
# (Wasmer0 base -> Wasmer2 at 48 -> NearVm at 62 -> Wasmtime at 84), for an x86_64 node.
VM_KIND_FROM = ((84, "Wasmtime"), (62, "NearVm"), (48, "Wasmer2"), (0, "Wasmer0"))

# Snapshot files nearcore's current test no longer writes. 42.yaml was folded into the base
# table, so 42 is not a stored version any more, but insta leaves old snapshot files behind.
# These still show an older RuntimeConfigView field set (and lack the `snapshot_kind` header
# every current snapshot has), so an exact match is impossible; see test_stale_snapshots.
STALE_VERSIONS = frozenset({42})
STALE_ONLY_IN_SNAPSHOT = {"wasm_config.deterministic_account_ids", "wasm_config.eth_implicit_global_contract"}
STALE_ONLY_COMPUTED = {
    "transaction_costs.ml_dsa_65_verification_cost",
    "wasm_config.bls12381_not_in_group_fix",
    "wasm_config.chain_id_host_fn",
    "wasm_config.ext_costs.yield_create_with_id_base",
    "wasm_config.yield_with_id_host_fns",
}

# The snapshots are nearcore 2.13's (stable 86); the data is 2.14's (stable 87, see
# tools/runtime_configs_2_14.py). 2.14 has no 86 diff, so 86 is no stored version and resolves
# to 85, whose view the 86 snapshot shows too. 87 has no snapshot here (test_protocol_87 holds it
# to 87.yaml), and the nightly snapshots above it predate 87.yaml: of its changes the nearcore
# view shows only this one, which 2.14's nightly configs inherit.
VERSIONS_2_14_DROPPED = frozenset({86})
VERSIONS_WITHOUT_SNAPSHOT = frozenset({87})
CHANGED_BY_87: dict[tuple[str, str], object] = {("transaction_costs", "burnt_gas_reward"): [0, 1]}


@dataclass(frozen=True)
class Snapshot:
    chain: str
    version: int
    path: Path

    def load(self) -> dict[str, object]:
        document = json.loads(self.path.read_text(encoding="utf-8"))
        assert isinstance(document, dict)
        return document


def discover() -> list[Snapshot]:
    found = []
    for path in SNAPSHOT_DIR.iterdir():
        match = SNAPSHOT_NAME.match(path.name)
        if match:
            found.append(Snapshot(match.group(1) or "mainnet", int(match.group(2)), path))
    return sorted(found, key=lambda s: (s.chain, s.version))


def snapshot_params() -> list[object]:
    if MISSING:
        return [pytest.param(None, marks=pytest.mark.skip(reason=MISSING), id="reference-missing")]
    params: list[object] = []
    for snapshot in discover():
        marks = []
        if snapshot.version in STALE_VERSIONS:
            marks.append(
                pytest.mark.xfail(
                    strict=True,
                    reason="stale snapshot left behind after 42.yaml was removed upstream "
                    "(older field set); checked field by field in test_stale_snapshots",
                )
            )
        params.append(pytest.param(snapshot, marks=marks, id=f"{snapshot.chain}-{snapshot.version}"))
    return params


def expected_vm_kind(version: int) -> str:
    return next(kind for since, kind in VM_KIND_FROM if version >= since)


def first_difference(actual: object, expected: object, path: str = "$") -> str | None:
    """Where two JSON values differ - in keys, key order, types or values - or None."""
    if type(actual) is not type(expected):
        return f"{path}: type {type(actual).__name__} != {type(expected).__name__}"
    if isinstance(actual, dict):
        assert isinstance(expected, dict)
        if set(actual) != set(expected):
            return (
                f"{path}: keys only computed {sorted(set(actual) - set(expected))}, "
                f"only in snapshot {sorted(set(expected) - set(actual))}"
            )
        if list(actual) != list(expected):
            return f"{path}: key order {list(actual)} != {list(expected)}"
        for key in actual:
            found = first_difference(actual[key], expected[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(actual, list):
        assert isinstance(expected, list)
        if len(actual) != len(expected):
            return f"{path}: length {len(actual)} != {len(expected)}"
        for index, (left, right) in enumerate(zip(actual, expected, strict=True)):
            found = first_difference(left, right, f"{path}[{index}]")
            if found:
                return found
        return None
    return None if actual == expected else f"{path}: {actual!r} != {expected!r}"


@pytest.fixture(scope="module")
def store() -> RuntimeParamStore:
    return RuntimeParamStore.load()


@pytest.mark.parametrize("snapshot", snapshot_params())
def test_nearcore_view_matches_snapshot(store: RuntimeParamStore, snapshot: Snapshot) -> None:
    expected = snapshot.load()
    wasm_config = expected["wasm_config"]
    assert isinstance(wasm_config, dict)
    assert wasm_config["vm_kind"] == "<REDACTED>"
    wasm_config["vm_kind"] = expected_vm_kind(snapshot.version)
    if snapshot.version > max(VERSIONS_WITHOUT_SNAPSHOT):
        for (section, key), value in CHANGED_BY_87.items():
            table = expected[section]
            assert isinstance(table, dict) and key in table
            table[key] = value

    actual = store.nearcore_view(snapshot.version, snapshot.chain)

    assert first_difference(actual, expected) is None
    # Byte-level check too: catches e.g. 1 vs 1.0 vs true the same way a client would see it.
    assert json.dumps(actual) == json.dumps(expected)


def leaves(value: object, path: str = "") -> dict[str, object]:
    if not isinstance(value, dict):
        return {path: value}
    out: dict[str, object] = {}
    for key, item in value.items():
        out.update(leaves(item, f"{path}.{key}" if path else key))
    return out


@pytest.mark.skipif(bool(MISSING), reason=MISSING or "")
@pytest.mark.parametrize("chain", ["mainnet", "testnet"])
def test_stale_snapshots(store: RuntimeParamStore, chain: str) -> None:
    """The stale v42 files still agree with our tables on every field both have.

    When they were written, 42 was a stored diff version, so testnet used the mainnet chain
    there; today 42 resolves to the base table, hence the comparison with mainnet 42.
    """
    for version in sorted(STALE_VERSIONS):
        name = f"runtime_config_view_{'testnet_' if chain == 'testnet' else ''}{version}.json"
        snapshot = leaves(json.loads((SNAPSHOT_DIR / name).read_text(encoding="utf-8")))
        snapshot["wasm_config.vm_kind"] = expected_vm_kind(version)
        computed = leaves(store.nearcore_view(version, "mainnet"))
        assert set(snapshot) - set(computed) == STALE_ONLY_IN_SNAPSHOT
        assert set(computed) - set(snapshot) == STALE_ONLY_COMPUTED
        common = [key for key in computed if key in snapshot]
        assert len(common) > 200
        for key in common:
            assert json.dumps(computed[key]) == json.dumps(snapshot[key]), key


@pytest.mark.skipif(bool(MISSING), reason=MISSING or "")
def test_every_stored_version_has_a_snapshot(store: RuntimeParamStore) -> None:
    present = {(s.chain, s.version) for s in discover()}
    wanted = {(chain, v) for chain in ("mainnet", "testnet") for v in store.stored_versions}
    assert {v for _, v in wanted - present} == VERSIONS_WITHOUT_SNAPSHOT, sorted(wanted - present)
    assert {v for _, v in present} - set(store.stored_versions) == STALE_VERSIONS | VERSIONS_2_14_DROPPED
