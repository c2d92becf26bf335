"""The sample contracts do what their WAT source says, run on raw Wasmtime with a minimal host,
and their committed bytes are the reproducible build of that source."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
import wasmtime

from nearrpc.sample import wasm
from tests.support.wasm_host import ContractPanic, call
from tools import build_contracts

NEAR_SDK_BAD_ARGS = "Failed to deserialize input from JSON."
REPO = Path(__file__).resolve().parents[2]


def _i64(value: int) -> bytes:
    return value.to_bytes(8, "little", signed=True)


def _u128(value: int) -> bytes:
    return value.to_bytes(16, "little")


@pytest.mark.parametrize("count", [0, 1, 7, -3, 2**63 - 1, -(2**63)])
def test_get_num_answers_the_stored_count_as_a_json_number(count: int) -> None:
    assert call(wasm.COUNTER.code, "get_num", state={b"STATE": _i64(count)}).result == str(count).encode()


def test_get_num_without_state_is_zero() -> None:
    assert call(wasm.COUNTER.code, "get_num").result == b"0"


@pytest.mark.parametrize(("method", "after"), [("increment", 6), ("decrement", 4), ("reset", 0)])
def test_counter_change_methods_write_state(method: str, after: int) -> None:
    outcome = call(wasm.COUNTER.code, method, state={b"STATE": _i64(5)})
    assert outcome.result is None and outcome.state == {b"STATE": _i64(after)}


FT_STATE = {
    b"t": _u128(2**128 - 1),
    b"balice.localnet": _u128(10**24 + 7),
    b"bbob.localnet": _u128(2**64),
}


@pytest.mark.parametrize(
    ("args", "balance"),
    [
        (b'{"account_id":"alice.localnet"}', b'"1000000000000000000000007"'),
        (b' {\n\t"account_id" : "bob.localnet" \r\n} ', b'"18446744073709551616"'),
        (b'{"other":"x", "account_id":"alice.localnet"}', b'"1000000000000000000000007"'),  # unknown members skipped
        (b'{"account_id":"carol.localnet"}', b'"0"'),  # no row
    ],
)
def test_ft_balance_of(args: bytes, balance: bytes) -> None:
    assert call(wasm.FT.code, "ft_balance_of", args, FT_STATE).result == balance


@pytest.mark.parametrize(
    "args",
    [b"", b"{}", b"[]", b"null", b'{"account_id":"alice.localnet"', b'{"account_id":"alice.localnet"}x',
     b'{"account_id":1}', b'{"account_id":"Alice"}', b'{"account_id":"a"}', b'{"account_id":"al\\u0069ce"}',
     b'{"account_id":"ab","account_id":"ab"}', b'{"account_id":"alice.localnet",}'],
)  # fmt: skip
def test_ft_balance_of_refuses_bad_arguments_with_near_sdk_text(args: bytes) -> None:
    with pytest.raises(ContractPanic) as panic:
        call(wasm.FT.code, "ft_balance_of", args, FT_STATE)
    assert str(panic.value) == NEAR_SDK_BAD_ARGS


@pytest.mark.parametrize(("supply", "text"), [(None, b'"0"'), (0, b'"0"'), (10**25, b'"10000000000000000000000000"'),
                                              (2**128 - 1, b'"340282366920938463463374607431768211455"')])
def test_ft_total_supply(supply: int | None, text: bytes) -> None:
    state = {} if supply is None else {b"t": _u128(supply)}
    assert call(wasm.FT.code, "ft_total_supply", b"", state).result == text


def test_ft_metadata_is_near_contract_standards_json() -> None:
    result = call(wasm.FT.code, "ft_metadata").result
    assert result == (
        b'{"spec":"ft-1.0.0","name":"nearrpc Sample Token","symbol":"NRS","icon":null,"reference":null,'
        b'"reference_hash":null,"decimals":18}'
    )
    assert list(orjson.loads(result)) == ["spec", "name", "symbol", "icon", "reference", "reference_hash", "decimals"]


def test_ft_transfer_asks_for_the_predecessor_first() -> None:
    # the host call nearcore prohibits in a view comes before anything else
    assert b"predecessor_account_id" in wasm.FT.code
    with pytest.raises(ContractPanic, match="ft_transfer"):
        call(wasm.FT.code, "ft_transfer", b'{"receiver_id":"bob.localnet","amount":"1"}', FT_STATE)


@pytest.mark.parametrize("contract", [wasm.COUNTER, wasm.FT], ids=lambda c: c.name)
def test_served_bytes_are_the_build_of_the_source(contract: wasm.Contract) -> None:
    source = build_contracts.CONTRACTS / f"{contract.name}.wat"
    assert contract.code == build_contracts.build(source) == build_contracts.build(source)
    imports = {item.name for item in wasmtime.Module(wasmtime.Engine(), contract.code).imports}
    assert imports <= {"input", "register_len", "read_register", "storage_read", "storage_write", "value_return",
                       "panic_utf8", "predecessor_account_id"}


def _tool(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "tools.build_contracts", *args]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)


def test_check_passes_on_the_committed_bytes() -> None:
    done = _tool("--check")
    assert done.returncode == 0, done.stderr


def test_check_names_a_wasm_whose_source_changed(tmp_path: Path) -> None:
    for source in build_contracts.sources(build_contracts.CONTRACTS):
        shutil.copy(source, tmp_path / source.name)
        shutil.copy(source.with_suffix(".wasm"), tmp_path / source.with_suffix(".wasm").name)
    assert _tool("--check", "--dir", str(tmp_path)).returncode == 0
    counter = tmp_path / "counter.wat"
    counter.write_text(counter.read_text().replace("(i64.const 1)))", "(i64.const 2)))", 1))
    done = _tool("--check", "--dir", str(tmp_path))
    assert done.returncode == 1
    assert str(tmp_path / "counter.wasm") in done.stderr and "ft.wasm" not in done.stderr
    # building writes the new bytes, after which the check passes again, with the same bytes each run
    assert _tool("--dir", str(tmp_path)).returncode == 0
    first = (tmp_path / "counter.wasm").read_bytes()
    assert first != wasm.COUNTER.code
    assert _tool("--dir", str(tmp_path)).returncode == 0
    assert (tmp_path / "counter.wasm").read_bytes() == first
    assert _tool("--check", "--dir", str(tmp_path)).returncode == 0


def test_check_names_a_missing_wasm(tmp_path: Path) -> None:
    shutil.copy(build_contracts.CONTRACTS / "ft.wat", tmp_path / "ft.wat")
    done = _tool("--check", "--dir", str(tmp_path))
    assert done.returncode == 1  # one line in the tool's voice, no traceback
    assert done.stderr == (
        f"build_contracts: {tmp_path / 'ft.wasm'} differs from the build of ft.wat;"
        " run python -m tools.build_contracts\n"
    )


def test_a_folder_without_sources_is_refused(tmp_path: Path) -> None:
    for args in (("--dir", str(tmp_path)), ("--check", "--dir", str(tmp_path))):
        done = _tool(*args)
        assert done.returncode == 1
        assert done.stderr == f"build_contracts: no .wat source in {tmp_path}\n"


def test_check_names_every_stale_wasm(tmp_path: Path) -> None:
    for source in build_contracts.sources(build_contracts.CONTRACTS):
        shutil.copy(source, tmp_path / source.name)
        (tmp_path / source.with_suffix(".wasm").name).write_bytes(b"stale")
    done = _tool("--check", "--dir", str(tmp_path))
    assert done.returncode == 1
    assert "counter.wasm" in done.stderr and "ft.wasm" in done.stderr
