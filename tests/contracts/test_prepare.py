"""nearcore's prepare step (near-vm-runner prepare.rs, prepare/prepare_v3.rs `PrepareContext::run`):
modules nearcore refuses before compiling them are refused here with its PrepareError, at the
limits of the block's protocol config; the attacks of issue 43 (10,003 functions, a million and one
locals, a body over the size limit, an imported memory) at their own sizes, each refused before
the engine compiles anything."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import wasmtime

from nearrpc.contracts import GasCosts, ViewCallError, ViewEngine
from nearrpc.contracts.prepare import ContractTooLarge, PrepareRules, check
from nearrpc.runtime_params import RuntimeParamStore
from tests.contracts.support import COSTS, IMPORTS, code_hash, module, protocol_config, run


def refusal(code: bytes, costs: GasCosts = COSTS, engine: ViewEngine | None = None) -> str:
    with pytest.raises(ViewCallError) as failure:
        run(code, "m", costs=costs, engine=engine)
    return failure.value.debug


def prepare_error(kind: str) -> str:
    return f"CompilationError(PrepareError({kind}))"


def functions(count: int, imports: str = "") -> bytes:
    return bytes(wasmtime.wat2wasm(f'(module {imports} (func (export "m")) {"(func)" * (count - 1)})'))


def at_version(version: int) -> GasCosts:
    """The costs of a protocol version as nearcore's parameters set them (our runtime parameter data)."""
    config: dict[str, Any] = dict(protocol_config())
    config["runtime_config"] = RuntimeParamStore.load().spec_view(version, "mainnet")
    config["protocol_version"] = version
    return GasCosts.from_protocol_config(config)


def test_the_sample_protocols_limits_are_nearcores() -> None:
    # limit_config as protocol 87 sets it (runtime_configs parameters.yaml, 84.yaml, 82.yaml)
    rules = COSTS.prepare_rules
    assert (rules.max_functions, rules.max_locals, rules.max_function_body_size) == (10_000, 1_000_000, 196_608)
    assert (rules.max_tables, rules.max_table_elements, rules.max_contract_size) == (1, 10_000, 4_194_304)


def test_too_many_functions_at_the_protocols_limit() -> None:
    engine = ViewEngine()
    assert refusal(functions(10_003), engine=engine) == prepare_error("TooManyFunctions")
    assert engine.compilations == 0  # refused before the engine compiled it
    assert run(functions(10_000), "m", engine=engine).result == b""


def test_imported_functions_count_as_the_contracts() -> None:
    costs = replace(COSTS, max_functions_number_per_contract=3)
    imports = '(import "env" "input" (func (param i64)))'
    assert run(functions(2, imports), "m", costs=costs).result == b""
    assert refusal(functions(3, imports), costs) == prepare_error("TooManyFunctions")


def test_a_million_and_one_locals_are_too_many_locals() -> None:
    # the validator alone refuses a function with that many (Deserialization); nearcore counts first
    assert refusal(_with_locals(1_000_001)) == prepare_error("TooManyLocals")


def test_locals_are_summed_over_the_contract() -> None:
    # the attack's 2,000 functions of 50,000 locals, scaled: 21 of them pass the million
    assert refusal(_with_locals(50_000, functions=21)) == prepare_error("TooManyLocals")
    costs = replace(COSTS, max_locals_per_contract=10)
    assert run(_with_locals(5, functions=2), "m", costs=costs).result == b""
    assert refusal(_with_locals(5, functions=2, extra=1), costs) == prepare_error("TooManyLocals")


def _with_locals(count: int, functions: int = 1, extra: int = 0) -> bytes:
    """A module of `functions` bodies declaring `count` i32 locals each (one declaration group,
    written by hand: the text format would list every local), plus `extra` in the last one."""

    def body(locals_: int) -> bytes:
        inner = b"\x01" + _leb(locals_) + b"\x7f" + b"\x0b"
        return _leb(len(inner)) + inner

    bodies = [body(count) for _ in range(functions - 1)] + [body(count + extra)]
    code = _leb(functions) + b"".join(bodies)
    return (
        b"\x00asm\x01\x00\x00\x00"
        + _section(1, b"\x01\x60\x00\x00")  # one type: () -> ()
        + _section(3, _leb(functions) + b"\x00" * functions)
        + _section(7, b"\x01\x01m\x00\x00")  # export "m": function 0
        + _section(10, code)
    )


def _leb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _section(section_id: int, body: bytes) -> bytes:
    return bytes([section_id]) + _leb(len(body)) + body


def test_a_function_body_over_the_size_limit() -> None:
    nops = "(nop)" * 196_608  # one byte each: with its size, locals and end, the body is over the limit
    assert refusal(module(f'(func (export "m") {nops})')) == prepare_error("FunctionBodyTooLarge")
    costs = replace(COSTS, max_function_body_size=8)
    # the body's bytes: its local declaration count, six nops and the end
    assert run(module('(func (export "m") nop nop nop nop nop nop)'), "m", costs=costs).result == b""
    assert refusal(module('(func (export "m") nop nop nop nop nop nop nop)'), costs) == prepare_error(
        "FunctionBodyTooLarge"
    )


def test_tables_and_their_elements() -> None:
    assert refusal(module('(table 1 funcref) (table 1 funcref) (func (export "m"))')) == prepare_error("TooManyTables")
    assert refusal(module('(table 10001 funcref) (func (export "m"))')) == prepare_error("TooManyTableElements")
    assert run(module('(table 10000 funcref) (func (export "m"))'), "m").result == b""


def test_an_imported_memory_is_refused() -> None:
    code = module('(func (export "m"))', IMPORTS + '(import "env" "memory" (memory 1 2048))', memory="")
    assert refusal(code) == prepare_error("Memory")


@pytest.mark.parametrize(
    "imported",
    [
        '(import "other" "input" (func (param i64)))',  # only `env` is imported from
        '(import "env" "table" (table 1 funcref))',
        '(import "env" "g" (global i32))',
    ],
)
def test_imports_other_than_env_functions_do_not_instantiate(imported: str) -> None:
    assert refusal(module('(func (export "m"))', IMPORTS + imported)) == prepare_error("Instantiate")


def test_code_over_the_protocols_contract_size_is_refused_unread() -> None:
    code = functions(3)
    assert run(code, "m", costs=replace(COSTS, max_contract_size=len(code))).result == b""
    assert refusal(code, replace(COSTS, max_contract_size=len(code) - 1)) == (
        f"HostError(ContractSizeExceeded {{ size: {len(code)}, limit: {len(code) - 1} }})"
    )
    # not even its magic number is read
    with pytest.raises(ContractTooLarge):
        check(b"garbage" * 10, PrepareRules(1, 1, max_contract_size=8))


@pytest.mark.parametrize(
    "body",
    [
        "(memory.fill (i32.const 0) (i32.const 0) (i32.const 0))",  # bulk memory
        "(drop (ref.null func))",  # reference types
    ],
)
def test_bulk_memory_and_reference_types_from_protocol_84(body: str) -> None:
    code = module(f'(func (export "m") {body})')
    assert refusal(code, at_version(83)) == prepare_error("Deserialization")
    assert run(code, "m", costs=at_version(84)).result == b""


def test_host_functions_by_the_protocol_that_offers_them() -> None:
    # p256_verify and chain_id from protocol 85's config on, sha3 from 87's (85.yaml, 87.yaml)
    for name, params, first in (("chain_id", 1, 85), ("p256_verify", 6, 85), ("sha3_256", 3, 87)):
        result = " (result i64)" if name == "p256_verify" else ""
        imported = f'(import "env" "{name}" (func (param {" ".join(["i64"] * params)}){result}))'
        code = module('(func (export "m"))', IMPORTS + imported)
        assert refusal(code, at_version(first - 1)) == 'LinkError { msg: "unknown or invalid import" }', name
        assert run(code, "m", costs=at_version(first)).result == b"", name


def test_a_refusal_is_kept_per_code_hash() -> None:
    engine = ViewEngine()
    code = functions(10_003)
    assert refusal(code, engine=engine) == refusal(code, engine=engine)
    assert engine.has_compiled(code_hash(code), COSTS)
