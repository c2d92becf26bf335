"""Gas from the block's protocol config, the view's gas limit, and nearcore's memory limits."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from nearrpc.contracts import GasCosts, ViewCallError
from tests.contracts.support import COSTS, IMPORTS, module, protocol_config, run, with_limit

GAS_LIMIT_EXCEEDED = "wasm execution failed with error: HostError(GasLimitExceeded)"


def test_the_view_limit_is_the_protocols_max_gas_burnt_unless_the_node_sets_one() -> None:
    config = protocol_config()
    assert COSTS.view_gas_limit == 1_000_000_000_000_000  # limit_config.max_gas_burnt of the sample
    assert GasCosts.from_protocol_config(config, max_gas_burnt_view=300 * 10**12).view_gas_limit == 300 * 10**12
    assert COSTS.regular_op_cost == 822756
    assert COSTS.ext["base"] == 264768111


def test_an_infinite_loop_ends_at_the_gas_limit() -> None:
    with pytest.raises(ViewCallError) as failure:
        run(module('(func (export "m") (loop $l (br $l)))'), "m", costs=with_limit(10**12))
    assert failure.value.vm_error == GAS_LIMIT_EXCEEDED


def test_an_infinite_loop_of_host_calls_ends_at_the_gas_limit() -> None:
    imports = IMPORTS + '(import "env" "block_index" (func $b (result i64)))'
    body = '(func (export "m") (loop $l (drop (call $b)) (br $l)))'
    with pytest.raises(ViewCallError) as failure:
        run(module(body, imports), "m", costs=with_limit(10**13))
    assert failure.value.vm_error == GAS_LIMIT_EXCEEDED


def test_host_functions_burn_their_ext_costs() -> None:
    imports = IMPORTS + '(import "env" "block_index" (func $b (result i64)))'
    one = module('(func (export "m") (drop (call $b)))', imports)
    two = module('(func (export "m") (drop (call $b)) (drop (call $b)))', imports)
    # one more call: `base`, two instructions at regular_op_cost (`call` and `drop`: nearcore's
    # prepare_v3.rs `SimpleGasCostCfg` prices every instruction but block/end/else, `drop` too;
    # Wasmtime's fuel, which this test once measured, left `drop` free), and the longer code's
    # loading cost per byte
    loading = COSTS.ext["contract_loading_bytes"] * (len(two) - len(one))
    extra = COSTS.ext["base"] + 2 * COSTS.regular_op_cost + loading
    assert run(two, "m").burnt_gas - run(one, "m").burnt_gas == extra


def test_loading_the_contract_costs_per_byte() -> None:
    code = module('(func (export "m"))')
    burnt = run(code, "m").burnt_gas
    assert burnt >= COSTS.ext["contract_loading_base"] + COSTS.ext["contract_loading_bytes"] * len(code)
    # a shortfall in the loading fee is GasExceeded, checked after compiling (the sample's protocol
    # has fix_contract_loading_cost false), so invalid code still answers its compilation error
    assert not COSTS.fix_contract_loading_cost
    with pytest.raises(ViewCallError) as failure:
        run(code, "m", costs=with_limit(COSTS.ext["contract_loading_base"] + 1))
    assert failure.value.debug == "HostError(GasExceeded)"
    with pytest.raises(ViewCallError) as invalid:
        run(b"not wasm", "m", costs=with_limit(1))
    assert invalid.value.debug == "CompilationError(PrepareError(Deserialization))"
    fixed = replace(COSTS, fix_contract_loading_cost=True, view_gas_limit=1)
    with pytest.raises(ViewCallError) as first:
        run(b"not wasm", "m", costs=fixed)
    assert first.value.debug == "HostError(GasExceeded)"


def test_a_limit_just_above_the_work_lets_it_finish() -> None:
    code = module(
        '(func (export "m") (local i32) (loop $l (local.set 0 (i32.add (local.get 0) (i32.const 1)))'
        " (br_if $l (i32.lt_u (local.get 0) (i32.const 1000)))))"
    )
    burnt = run(code, "m").burnt_gas
    assert run(code, "m", costs=with_limit(burnt)).burnt_gas == burnt
    # each group is charged before it runs, so the limit bites within an iteration's work
    with pytest.raises(ViewCallError):
        run(code, "m", costs=with_limit(burnt - 10 * COSTS.regular_op_cost))


@pytest.mark.parametrize(
    "body",
    [
        "(local i32) (loop $l (local.set 0 (i32.add (local.get 0) (i32.const 1)))"
        " (br_if $l (i32.lt_u (local.get 0) (i32.const 1000))))",
        # no loop: one group, charged before it runs
        "(drop (i32.add (i32.const 1) (i32.const 2))) (drop (i32.add (i32.const 1) (i32.const 2)))",
    ],
)
def test_one_gas_short_of_the_work_is_the_gas_limit(body: str) -> None:
    # nearcore charges each block's gas before running it: work past the limit never returns
    code = module(f'(func (export "m") {body})')
    burnt = run(code, "m").burnt_gas
    with pytest.raises(ViewCallError) as failure:
        run(code, "m", costs=with_limit(burnt - 1))
    assert failure.value.vm_error == GAS_LIMIT_EXCEEDED


MEMORY_PROBE = (
    '(func (export "m") (i64.store (i32.const 0) (i64.extend_i32_s (memory.size)))'
    " (i64.store (i32.const 8) (i64.extend_i32_s (memory.grow (i32.const 1024))))"
    " (i64.store (i32.const 16) (i64.extend_i32_s (memory.grow (i32.const 1))))"
    " (call $value_return (i64.const 24) (i64.const 0)))"
)


@pytest.mark.parametrize(
    "memory",
    [
        "(memory 1)",
        "(memory 3 5)",
        '(memory (export "memory") 17)',
    ],
)
def test_every_contract_gets_nearcores_memory(memory: str) -> None:
    # initial_memory_pages 1024, growing to max_memory_pages 2048 and no further, whatever the
    # contract declared (an imported memory is refused: tests/contracts/test_prepare.py)
    result = run(module(MEMORY_PROBE, IMPORTS, memory), "m").result
    size, grown, beyond = (int.from_bytes(result[i : i + 8], "little", signed=True) for i in (0, 8, 16))
    assert (size, grown, beyond) == (1024, 1024, -1)


def test_memory_limits_come_from_the_protocol_config() -> None:
    costs = replace(COSTS, initial_memory_pages=2, max_memory_pages=3)
    result = run(module(MEMORY_PROBE), "m", costs=costs).result
    assert [int.from_bytes(result[i : i + 8], "little", signed=True) for i in (0, 8, 16)] == [2, -1, 2]


def test_a_contract_without_memory_gets_one_for_its_host_calls() -> None:
    code = module('(data (i32.const 0) "ok") (func (export "m") (call $value_return (i64.const 2) (i64.const 0)))')
    assert run(code, "m").result == b"ok"
    bare = module('(func (export "m") (call $value_return (i64.const 0) (i64.const 70000)))', memory="")
    assert run(bare, "m").result == b""


def test_a_hash_charges_its_own_base_and_not_base() -> None:
    imports = IMPORTS + '(import "env" "sha256" (func $h (param i64 i64 i64)))'
    code = module(
        '(func (export "m") (call $h (i64.const 3) (i64.const 0) (i64.const 0))) (func (export "n"))', imports
    )
    ext = COSTS.ext
    expected = (
        ext["sha256_base"]
        + ext["read_memory_base"]
        + 3 * (ext["read_memory_byte"] + ext["sha256_byte"])
        + ext["write_register_base"]
        + 32 * ext["write_register_byte"]
        + 4 * COSTS.regular_op_cost  # three constants and the call
    )
    assert run(code, "m").burnt_gas - run(code, "n").burnt_gas == expected


def test_a_deprecated_function_charges_nothing() -> None:
    imports = IMPORTS + '(import "env" "storage_iter_prefix" (func $i (param i64 i64) (result i64)))'
    code = module('(func (export "m") (drop (call $i (i64.const 0) (i64.const 0))))', imports)
    # room for loading and the instructions (the entry's frame charge, 8 ops for a 64-byte frame,
    # and the four instructions), not for one `base`
    loading = COSTS.ext["contract_loading_base"] + COSTS.ext["contract_loading_bytes"] * len(code)
    with pytest.raises(ViewCallError) as failure:
        run(code, "m", costs=with_limit(loading + 12 * COSTS.regular_op_cost))
    assert failure.value.debug == 'HostError(Deprecated { method_name: "storage_iter_prefix" })'


def test_the_later_protocol_fields_are_read_and_default_as_nearcores_runner() -> None:
    # wasmtime_runner/mod.rs: max_tables_per_contract defaults to 1, max_elements_per_contract_table
    # to 10,000; fix_contract_loading_cost is absent (false) before its protocol
    config = copy.deepcopy(protocol_config())
    wasm: dict[str, Any] = config["runtime_config"]["wasm_config"]  # type: ignore[index]
    wasm["fix_contract_loading_cost"] = True
    wasm["limit_config"]["max_tables_per_contract"] = 3
    wasm["limit_config"]["max_elements_per_contract_table"] = 77
    costs = GasCosts.from_protocol_config(config)
    assert (costs.fix_contract_loading_cost, costs.max_tables_per_contract) == (True, 3)
    assert costs.max_elements_per_contract_table == 77
    del wasm["fix_contract_loading_cost"]
    wasm["limit_config"]["max_tables_per_contract"] = None
    del wasm["limit_config"]["max_elements_per_contract_table"]
    costs = GasCosts.from_protocol_config(config)
    assert (costs.fix_contract_loading_cost, costs.max_tables_per_contract) == (False, 1)
    assert costs.max_elements_per_contract_table == 10_000


@pytest.mark.parametrize(
    "name",
    [
        "initial_memory_pages", "max_memory_pages", "max_number_registers", "max_register_size",
        "registers_memory_limit", "max_number_logs", "max_total_log_length", "max_length_storage_key",
        "max_length_returned_data",
    ],
)  # fmt: skip
def test_each_limit_is_the_protocol_configs(name: str) -> None:
    limits: dict[str, Any] = protocol_config()["runtime_config"]["wasm_config"]["limit_config"]  # type: ignore[index]
    assert getattr(COSTS, name) == int(limits[name])
