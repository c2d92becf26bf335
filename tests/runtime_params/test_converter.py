"""tools.convert_params: exact reproduction of the checked-in data, value normalisation, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from nearrpc.runtime_params import RuntimeParamStore
from nearrpc.runtime_params.data_files import GENERATED_FILES, load_param_data
from nearrpc.runtime_params.values import Table, as_json
from tools import convert_params, runtime_configs_2_14
from tools.convert_params import ConversionError, convert, main, read_folder

from ._reference import REPO, missing_reason, runtime_configs_dir

DATA_DIR = REPO / "service" / "runtime_params" / "data"


@pytest.mark.reference
def test_converter_reproduces_checked_in_data_files(tmp_path: Path) -> None:
    reference = runtime_configs_dir()
    reason = missing_reason(reference)
    if reason:
        pytest.skip(reason)
    if not (reference.parent / runtime_configs_2_14.UPSTREAM_DIFF).is_file():
        pytest.skip(f"{reference.parent / runtime_configs_2_14.UPSTREAM_DIFF} not found")
    folder_2_14 = runtime_configs_2_14.assemble(reference.parent, tmp_path / "runtime_configs_2_14")
    written = convert(folder_2_14, tmp_path / "out")
    assert sorted(path.name for path in written) == sorted(GENERATED_FILES)
    for name in GENERATED_FILES:
        assert (tmp_path / "out" / name).read_bytes() == (DATA_DIR / name).read_bytes(), (
            f"{name} differs: re-run `python -m tools.runtime_configs_2_14 {reference.parent} DIR` "
            "and `python -m tools.convert_params DIR`"
        )


# --- synthetic inputs (no ../shared needed) -----------------------------------------------


def write_yaml(path: Path, table: dict[str, object]) -> None:
    path.write_text(yaml.safe_dump(table, sort_keys=True), encoding="utf-8")


def table_as_yaml_data(table: Table) -> dict[str, object]:
    return {name: as_json(value) for name, value in table.items()}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A nearcore-style folder built from our packaged tables, with two small diffs."""
    packaged = load_param_data()
    source = tmp_path / "runtime_configs"
    source.mkdir()
    write_yaml(source / "parameters.yaml", table_as_yaml_data(packaged.base))
    write_yaml(source / "parameters_testnet.yaml", table_as_yaml_data(packaged.testnet_base))
    (source / "10.yaml").write_text(
        "wasm_regular_op_cost: { old: 3_856_371, new: 822_756 }\nmax_locals_per_contract: { new: 1_000_000 }\n",
        encoding="utf-8",
    )
    (source / "7.yaml").write_text("", encoding="utf-8")  # empty diffs are stored versions too
    (source / "README.md").write_text("not a diff", encoding="utf-8")
    return source


def test_conversion_is_deterministic(folder: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    convert(folder, first)
    convert(folder, second)
    for name in GENERATED_FILES:
        content = (first / name).read_bytes()
        assert content == (second / name).read_bytes()
        assert content.endswith(b"}\n")
    diffs = json.loads((first / "diffs.json").read_bytes())["diffs"]
    assert [d["version"] for d in diffs] == [7, 10]  # numeric order, not file-name order
    assert diffs[1]["changes"]["max_locals_per_contract"] == {"new": 1_000_000}


def test_values_are_normalised_like_nearcore_reads_them(tmp_path: Path) -> None:
    (tmp_path / "parameters.yaml").write_text(
        """
wasm_regular_op_cost: 3_856_371
max_stack_height: "16384"
storage_amount_per_byte: 10000000000000000000 yN
account_creation_charge: 0.007 N
global_contract_storage_amount_per_byte: 999999999999999999999999999 yN
min_gas_purchase_price: 1_000_000_000
vm_kind: Wasmer0
registrar_account_id: "registrar"
flat_storage_reads: true
burnt_gas_reward: { numerator: 3, denominator: 10 }
wasm_storage_read_base: { gas: 56_356_845_749, compute: 159_000_000_000 }
action_deploy_contract: {
  send_sir: 184_765_750_000,
  send_not_sir: 184_765_750_000,
  execution: { gas: 184_765_750_000, compute: 20_000_000_000_000 },
}
""",
        encoding="utf-8",
    )
    (tmp_path / "parameters_testnet.yaml").write_text("vm_kind: 'NearVm'\n", encoding="utf-8")
    (tmp_path / "84.yaml").write_text('vm_kind: { old: "NearVm", new: "Wasmtime" }\n')
    data = read_folder(tmp_path)
    assert data.base == {
        "wasm_regular_op_cost": 3_856_371,
        "max_stack_height": 16384,  # quoted digits are numbers, as in nearcore
        "storage_amount_per_byte": 10**19,
        "account_creation_charge": 7 * 10**21,
        "global_contract_storage_amount_per_byte": 10**27 - 1,
        "min_gas_purchase_price": 10**9,
        "vm_kind": "Wasmer0",
        "registrar_account_id": "registrar",
        "flat_storage_reads": True,
        "burnt_gas_reward": {"numerator": 3, "denominator": 10},
        "wasm_storage_read_base": {"gas": 56_356_845_749, "compute": 159_000_000_000},
        "action_deploy_contract": {
            "send_sir": 184_765_750_000,
            "send_not_sir": 184_765_750_000,
            "execution": {"gas": 184_765_750_000, "compute": 20_000_000_000_000},
        },
    }
    assert data.testnet_base == {"vm_kind": "NearVm"}
    (only,) = data.diffs
    assert (only.version, only.changes["vm_kind"].old, only.changes["vm_kind"].new) == (
        84,
        "NearVm",
        "Wasmtime",
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("max_stack_height: 1\nmax_stack_height: 2\n", "duplicate key 'max_stack_height'"),
        ("no_such_parameter: 1\n", "unknown parameter.*no_such_parameter"),
        ("max_stack_height: -5\n", "'-5' is not a valid value"),
        ("max_stack_height: 1.5\n", "'1.5' is not a valid value"),
        ("max_stack_height:\n", "unsupported YAML value None"),
        ("max_stack_height: [1, 2]\n", "unsupported YAML value"),
        ("storage_amount_per_byte: 0.5 yN\n", "not a whole number of yoctoNEAR"),
        ("burnt_gas_reward: { numerator: 1 }\n", "unsupported parameter value"),
        ("- just a list\n", "expected a mapping of parameter names"),
    ],
)
def test_bad_base_values_are_rejected(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "parameters.yaml").write_text(content, encoding="utf-8")
    (tmp_path / "parameters_testnet.yaml").write_text("", encoding="utf-8")
    with pytest.raises(ConversionError, match=message):
        read_folder(tmp_path)


@pytest.mark.parametrize(
    "entry",
    ["max_stack_height: 5", "max_stack_height: {}", "max_stack_height: { older: 1, new: 2 }"],
)
def test_malformed_diff_entries_are_rejected(tmp_path: Path, entry: str) -> None:
    (tmp_path / "parameters.yaml").write_text("max_stack_height: 1\n", encoding="utf-8")
    (tmp_path / "parameters_testnet.yaml").write_text("", encoding="utf-8")
    (tmp_path / "50.yaml").write_text(entry + "\n", encoding="utf-8")
    with pytest.raises(ConversionError, match=r"50\.yaml: max_stack_height: a diff entry must be"):
        read_folder(tmp_path)


def test_mismatching_diff_stops_the_conversion(folder: Path, tmp_path: Path) -> None:
    (folder / "20.yaml").write_text("wasm_regular_op_cost: { old: 1, new: 2 }\n", encoding="utf-8")
    out = tmp_path / "out"
    with pytest.raises(ConversionError) as caught:
        convert(folder, out)
    message = str(caught.value)
    assert "protocol version 20" in message
    assert "'wasm_regular_op_cost'" in message
    assert "expected to be 1" in message and "has 822756" in message
    assert not out.exists(), "nothing may be written when the input is inconsistent"


def test_missing_base_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ConversionError, match=r"parameters\.yaml not found"):
        read_folder(tmp_path)


def test_cli(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli-out"
    assert main([str(folder), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(GENERATED_FILES)
    assert "wrote" in capsys.readouterr().out

    assert main([str(tmp_path / "nowhere"), "--out", str(out)]) == 1
    assert "error:" in capsys.readouterr().err


def test_default_output_is_the_package_data_folder() -> None:
    assert convert_params.DEFAULT_OUT == DATA_DIR


def test_store_loads_from_a_converted_folder(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "data"
    convert(folder, out)
    (out / "spec_1_2_14_additions.json").write_bytes((DATA_DIR / "spec_1_2_14_additions.json").read_bytes())
    store = RuntimeParamStore.load(out)
    assert store.stored_versions == (0, 7, 10)
    wasm = store.nearcore_view(12, "mainnet")["wasm_config"]
    assert isinstance(wasm, dict)
    assert wasm["regular_op_cost"] == 822_756
    assert wasm["limit_config"]["max_locals_per_contract"] == 1_000_000
