"""Wasm gas as nearcore's finite-wasm instrumentation counts it (contracts/instrument.py), against
hand counts: every instruction at regular_op_cost but `block`, `end` and `else` (prepare_v3.rs
`SimpleGasCostCfg`), the bulk operations at linear_op_base_cost plus linear_op_unit_cost per
element, and on each function entry ceil(frame / 8) ops, the frame being 64 bytes plus each
parameter's and local's size (instrument_v3.rs `transform_code_section`). A group of instructions
is charged before it runs and ends at the first that may trap, branch or call (finite-wasm
gas/mod.rs), so a trap has paid its own group up to itself and nothing after it."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest

from nearrpc.contracts import ViewCallError
from nearrpc.contracts.call import CallContext, CallFailed, CallOutcome, run_call
from nearrpc.contracts.gas import GasCosts
from nearrpc.contracts.host import ViewContext
from nearrpc.contracts.instrument import GasPrices, analyze
from nearrpc.contracts.prepare import sections
from nearrpc.contracts.stack_height import ModuleTypes, max_operand_stack
from tests.contracts.support import COSTS, module, protocol_config, run, with_limit

OP = COSTS.regular_op_cost
EXT = COSTS.ext
FRAME = 8  # ops: a 64-byte frame, no parameters or locals
GAS_LIMIT_EXCEEDED = "HostError(GasLimitExceeded)"


def loading(code: bytes) -> int:
    return EXT["contract_loading_base"] + EXT["contract_loading_bytes"] * len(code)


def burnt(body: str, method: str = "m") -> tuple[bytes, int]:
    code = module(body)
    return code, run(code, method).burnt_gas - loading(code)


class Storage(dict[bytes, bytes]):
    def storage_read(self, key: bytes) -> bytes | None:
        return self.get(key)

    def storage_write(self, key: bytes, value: bytes) -> None:
        self[key] = value

    def storage_remove(self, key: bytes) -> None:
        self.pop(key, None)


def call(code: bytes, prepaid: int = 300 * 10**12, costs: GasCosts = COSTS) -> CallOutcome:
    view = ViewContext("app.test", 120, 7, 3, 1000, 50, 400, bytes(32))
    context = CallContext(view, "signer.test", b"\x00" + bytes(32), "caller.test", 0, prepaid, 40)
    return run_call(code, hashlib.sha256(code).hexdigest(), "m", b"", context, Storage(), costs)


def test_straight_code_pays_each_instruction_and_the_frame() -> None:
    # i32.const, i32.const, i32.add, drop; `end` is free
    _, gas = burnt('(func (export "m") (drop (i32.add (i32.const 1) (i32.const 2))))')
    assert gas == (FRAME + 4) * OP


def test_the_frame_charge_counts_parameters_and_locals() -> None:
    # `m` calls `f` (params i64 i32, locals i64 f32): 64 + 8 + 4 + 8 + 4 = 88 bytes, 11 ops; the
    # call's two constants and `call` itself, `f`'s body empty
    _, gas = burnt(
        '(func $f (param i64 i32) (local i64 f32)) (func (export "m") (call $f (i64.const 1) (i32.const 2)))'
    )
    assert gas == (FRAME + 3 + 11) * OP


def test_a_loop_pays_loop_itself_each_iteration() -> None:
    # frame 64 + 4 (an i32 local): 9 ops; each of 10 iterations: loop, local.get, i32.const,
    # i32.add, local.tee, i32.const, i32.lt_u, br_if
    _, gas = burnt(
        '(func (export "m") (local i32) (loop $l (br_if $l (i32.lt_u (local.tee 0 (i32.add (local.get 0)'
        " (i32.const 1))) (i32.const 10)))))"
    )
    assert gas == (9 + 10 * 8) * OP


@pytest.mark.parametrize(("condition", "ops"), [(1, 4), (0, 6)])
def test_only_the_branch_taken_is_paid(condition: int, ops: int) -> None:
    # then: i32.const, if, i32.const, drop; else: i32.const, if, then twice i32.const, drop
    _, gas = burnt(
        f'(func (export "m") (if (i32.const {condition}) (then (drop (i32.const 5)))'
        " (else (drop (i32.const 6)) (drop (i32.const 7)))))"
    )
    assert gas == (FRAME + ops) * OP


def test_a_bulk_operation_pays_per_element() -> None:
    # three constants, then memory.fill alone: linear_op_base_cost + 100 * linear_op_unit_cost
    _, gas = burnt('(func (export "m") (memory.fill (i32.const 0) (i32.const 7) (i32.const 100)))')
    assert gas == (FRAME + 3) * OP + COSTS.linear_op_base_cost + 100 * COSTS.linear_op_unit_cost


def test_a_start_function_runs_and_pays_first() -> None:
    # the start function: frame and two instructions; the method: frame only
    _, gas = burnt('(func $s (drop (i32.const 1))) (start $s) (func (export "m"))')
    assert gas == (FRAME + 2 + FRAME) * OP


def test_a_trap_pays_its_group_up_to_itself_and_nothing_after() -> None:
    # i32.const, drop, i32.const, i32.const, i32.div_u (traps: the last of its group); the
    # `drop` and the constants after it are never charged
    code = module(
        '(func (export "m") (drop (i32.const 1)) (drop (i32.div_u (i32.const 1) (i32.const 0)))'
        " (drop (i32.const 2)) (drop (i32.const 3)))"
    )
    with pytest.raises(CallFailed) as failed:
        call(code)
    assert failed.value.debug == "WasmTrap(IllegalArithmetic)"
    assert failed.value.burnt_gas == loading(code) + (FRAME + 5) * OP
    assert failed.value.profile["wasm_instruction"] == (FRAME + 5) * OP


def test_unreachable_pays_itself() -> None:
    code = module('(func (export "m") (drop (i32.const 1)) unreachable (drop (i32.const 2)))')
    with pytest.raises(CallFailed) as failed:
        call(code)
    assert failed.value.debug == "WasmTrap(Unreachable)"
    assert failed.value.burnt_gas == loading(code) + (FRAME + 3) * OP


def test_a_host_call_pays_its_base_and_per_byte_costs_with_its_profile() -> None:
    # log_utf8 of "hello": base, the memory read, UTF-8 decoding, log_base, log_byte per byte
    code = module('(data (i32.const 0) "hello") (func (export "m") (call $log_utf8 (i64.const 5) (i64.const 0)))')
    done = call(code)
    host = {
        "base": EXT["base"],
        "read_memory_base": EXT["read_memory_base"],
        "read_memory_byte": 5 * EXT["read_memory_byte"],
        "utf8_decoding_base": EXT["utf8_decoding_base"],
        "utf8_decoding_byte": 5 * EXT["utf8_decoding_byte"],
        "log_base": EXT["log_base"],
        "log_byte": 5 * EXT["log_byte"],
    }
    ops = (FRAME + 3) * OP  # two constants and the call
    assert done.logs == ["hello"]
    assert done.burnt_gas == done.used_gas == loading(code) + sum(host.values()) + ops
    assert done.profile == {
        **host,
        "contract_loading_base": EXT["contract_loading_base"],
        "contract_loading_bytes": EXT["contract_loading_bytes"] * len(code),
        "wasm_instruction": ops,
    }


LOG_THEN_LOOP = (
    '(data (i32.const 0) "hi") (func (export "m") (call $log_utf8 (i64.const 2) (i64.const 0)) (loop $l (br $l)))'
)


def test_running_out_stops_before_the_group_that_does_not_fit() -> None:
    code = module(LOG_THEN_LOOP)
    logged = (
        EXT["base"] + EXT["read_memory_base"] + 2 * EXT["read_memory_byte"] + EXT["utf8_decoding_base"]
        + 2 * EXT["utf8_decoding_byte"] + EXT["log_base"] + 2 * EXT["log_byte"]
    )  # fmt: skip
    # room for the frame and the first group (two constants and the call), not for the log's
    # costs: the call fails inside log_utf8, as nearcore's `pay_base(base)` would
    before_log = loading(code) + (FRAME + 3) * OP
    with pytest.raises(CallFailed) as short:
        call(code, prepaid=before_log + EXT["base"] - 1)
    assert short.value.debug == "HostError(GasExceeded)"
    assert short.value.logs == []
    assert short.value.burnt_gas == before_log + EXT["base"] - 1  # never more than prepaid
    # the log paid, then the loop runs out: each iteration's group is `loop` and `br`
    prepaid = before_log + logged + 5 * 2 * OP + OP
    with pytest.raises(CallFailed) as looped:
        call(code, prepaid=prepaid)
    assert looped.value.debug == "HostError(GasExceeded)"
    assert looped.value.logs == ["hi"]
    assert looped.value.burnt_gas == prepaid
    assert looped.value.profile["wasm_instruction"] == prepaid - loading(code) - logged


def test_a_charge_past_max_gas_burnt_is_gas_limit_exceeded_even_under_a_smaller_prepaid() -> None:
    # gas_counter.rs `process_gas_limit`: GasLimitExceeded when the new burnt gas is past
    # max_gas_burnt, else GasExceeded; here one group of 2 ops crosses both at once
    code = module('(func (export "m") (drop (i32.const 1)))')
    exact = loading(code) + (FRAME + 2) * OP
    costs = replace(COSTS, view_gas_limit=exact - 1)
    with pytest.raises(CallFailed) as both:
        call(code, prepaid=exact - 2, costs=costs)
    assert both.value.debug == GAS_LIMIT_EXCEEDED
    assert both.value.burnt_gas == exact - 2
    costs = replace(COSTS, view_gas_limit=exact + 10)
    with pytest.raises(CallFailed) as prepaid_only:
        call(code, prepaid=exact - 1, costs=costs)
    assert prepaid_only.value.debug == "HostError(GasExceeded)"
    assert call(code, prepaid=exact, costs=costs).burnt_gas == exact


def test_a_view_one_gas_short_fails_where_nearcore_fails() -> None:
    code = module('(func (export "m") (drop (i32.const 1)) (drop (i32.const 2)))')
    exact = loading(code) + (FRAME + 4) * OP
    assert run(code, "m", costs=with_limit(exact)).burnt_gas == exact
    with pytest.raises(ViewCallError) as failure:
        run(code, "m", costs=with_limit(exact - 1))
    assert failure.value.debug == GAS_LIMIT_EXCEEDED


def test_the_analysis_groups_as_finite_wasm_does() -> None:
    # (func (local i32) i32.const 1; local.set 0; block; local.get 0; br_if 0; i32.const 2; drop;
    # end; call 0): pure, pure, block (free), then the group ends at br_if; the code after it up
    # to `end` (a branch target) is a group; the call starts one after `end`
    code = module('(func (export "m") (local i32) (local.set 0 (i32.const 1)) (block (br_if 0 (local.get 0))'
                  " (drop (i32.const 2))) (call $f)) (func $f)")  # fmt: skip
    body = _first_body(code)
    points = [p for p in analyze(body, 0, len(body), GasPrices(1, 0, 0)) if p.constant]
    assert [p.constant for p in points] == [4, 2, 1]


def _first_body(code: bytes) -> bytes:
    """The instructions of the first function body of `code` (one body, one local group, all of
    it shorter than 128 bytes)."""
    body = next(section.body for section in sections(code) if section.id == 10)
    size = body[1]
    assert size < 0x80 and body[2] == 1, "a short body with one local group"
    return body[5 : 2 + size]  # past the size, the group count and the group (count, type)


def test_a_recursion_past_the_stack_is_memory_access_violation() -> None:
    # finite-wasm's stack limit: `finite_wasm_stack_exhausted` -> MemoryAccessViolation
    code = module('(func $r (call $r)) (func (export "m") (call $r))')
    with pytest.raises(ViewCallError) as failure:
        run(code, "m")
    assert failure.value.debug == "HostError(MemoryAccessViolation)"


def test_a_view_limit_past_the_globals_range_runs() -> None:
    # a node's max_gas_burnt_view may pass an i64: the module is handed at most i64::MAX at once
    code = module('(func (export "m") (drop (i32.const 1)))')
    assert run(code, "m", costs=with_limit(2**64 - 1)).burnt_gas == loading(code) + (FRAME + 2) * OP


STACK = COSTS.max_stack_height


def test_a_recursion_ends_where_the_stack_budget_ends() -> None:
    # finite-wasm's stack: each frame takes its operand stack's most plus its frame, checked
    # before its gas. `m`: operands 4 (the constant), frame 64: 68. `r`: operands 8 (local.get
    # then the constant), frame 64 + 4: 76. 3448 entries of `r` fit in what `m` leaves
    # (262144 - 68 = 262076 = 3448 * 76 + 28), the 3449th fails before paying its frame's gas.
    assert STACK == 262144
    code = module(
        "(func $r (param i32) (call $r (i32.add (local.get 0) (i32.const 1))))"
        ' (func (export "m") (call $r (i32.const 0)))'
    )
    with pytest.raises(CallFailed) as failed:
        call(code)
    assert failed.value.debug == "HostError(MemoryAccessViolation)"
    entries = (STACK - 68) // 76
    assert entries == 3448
    # m: frame 8 ops, i32.const and call; each r: frame ceil(68 / 8) = 9 ops, local.get,
    # i32.const, i32.add, call
    assert failed.value.burnt_gas == loading(code) + (FRAME + 2 + entries * (9 + 4)) * OP


@pytest.mark.parametrize(
    "leave",
    ["(return)", "(br 0)", "(br_if 0 (i32.const 1))", "(block (br 1))", "(br_table 0 0 (i32.const 0))"],
)
def test_every_way_out_of_a_function_gives_its_stack_back(leave: str) -> None:
    # 10,000 calls of a function leaving by `leave`: a frame not given back would end the run
    # after some 3,800 calls
    code = module(
        f'(func $f {leave}) (func (export "m") (local i32) (loop $l (call $f)'
        " (br_if $l (i32.lt_u (local.tee 0 (i32.add (local.get 0) (i32.const 1))) (i32.const 10000)))))"
    )
    assert call(code).burnt_gas > 0


def test_a_multi_value_function_keeps_its_results_through_the_wrapping_block() -> None:
    code = module(
        "(func $two (param i32) (result i32 i32) (local.get 0) (i32.const 5))"
        ' (func (export "m") (drop (call $two (i32.const 1))) (drop))'
    )
    assert call(code).burnt_gas > 0


@pytest.mark.parametrize(
    ("body", "most"),
    [
        ("(drop (i32.add (i32.const 1) (i32.const 2)))", 8),
        ("(drop (i64.add (i64.const 1) (i64.const 2)))", 16),
        # a block's results stay, its inner operands go: 4 + (8 + 8) at most
        ("(i32.const 1) (drop (block (result i64) (i64.const 1) (i64.const 2) (i64.add))) (drop)", 20),
        # after an unconditional branch nothing counts until the block ends
        ("(block (br 0) (drop (i64.const 1)) (drop (i64.const 2)))", 0),
    ],
)
def test_the_operand_stack_analysis_counts_as_finite_wasm(body: str, most: int) -> None:
    code = module(f'(func (export "m") {body})')
    function = _only_body(code)
    types = ModuleTypes([], [], [])
    assert max_operand_stack(function, 0, len(function), lambda _: None, types) == most


def _only_body(code: bytes) -> bytes:
    """The instructions of the one function body of `code` (no locals, shorter than 128 bytes)."""
    body = next(section.body for section in sections(code) if section.id == 10)
    assert body[0] == 1 and body[1] < 0x80 and body[2] == 0, "one short body without locals"
    return body[3 : 2 + body[1]]


def test_call_indirect_leaves_its_index_counted_as_finite_wasm_does() -> None:
    # finite-wasm's `visit_call_indirect` pops the callee's parameters only: the i32 table index
    # stays on its model of the stack (4 bytes), under the callee's i64 result (8)
    code = module(
        '(type $t (func (result i64))) (table 1 funcref) (func (export "m")'
        " (drop (call_indirect (type $t) (i32.const 0))))"
    )
    function = _only_body(code)
    types = ModuleTypes([(b"", b"\x7e")], [], [])
    assert max_operand_stack(function, 0, len(function), lambda _: None, types) == 12


def test_the_stack_is_metered_in_bytes_from_finite_wasms_protocols_only() -> None:
    # 62.yaml: finite-wasm (NearVm, then Wasmtime) counts the stack in bytes; before it parity-wasm
    # counted slots, not metered here
    config = protocol_config()
    wasm = config["runtime_config"]["wasm_config"]  # type: ignore[index]
    assert GasCosts.from_protocol_config(config).max_stack_height == 262144
    wasm["vm_kind"] = "Wasmer2"
    assert GasCosts.from_protocol_config(config).max_stack_height == 0
