"""Every way a view call fails, with the text nearcore's RPC answers (`vm_error`)."""

from __future__ import annotations

import pytest
import wasmtime

from nearrpc.contracts import PROHIBITED_IN_VIEW, HostFunctionUnavailable, ViewCallError
from nearrpc.contracts.host import HOST_FUNCTIONS
from tests.contracts.support import IMPORTS, module, run

PANICS = (
    IMPORTS
    + """
 (import "env" "panic" (func $panic))
 (import "env" "abort" (func $abort (param i32 i32 i32 i32)))
"""
)

CASES = {
    "unreachable": ('(func (export "m") unreachable)', "WasmTrap(Unreachable)"),
    "out_of_bounds": ('(func (export "m") (drop (i32.load (i32.const 67108864))))', "WasmTrap(MemoryOutOfBounds)"),
    "divide_by_zero": (
        '(func (export "m") (drop (i32.div_u (i32.const 1) (i32.const 0))))',
        "WasmTrap(IllegalArithmetic)",
    ),
    "integer_overflow": (
        '(func (export "m") (drop (i32.div_s (i32.const -2147483648) (i32.const -1))))',
        "WasmTrap(IllegalArithmetic)",
    ),
    "bad_conversion": ('(func (export "m") (drop (i32.trunc_f32_s (f32.const nan))))', "WasmTrap(IllegalArithmetic)"),
    "indirect_call_to_null": (
        '(table 1 funcref) (func (export "m") (call_indirect (i32.const 0)))',
        "WasmTrap(IndirectCallToNull)",
    ),
    "indirect_call_signature": (
        "(type $t (func (param i32))) (table funcref (elem $f)) (func $f)"
        ' (func (export "m") (call_indirect (type $t) (i32.const 1) (i32.const 0)))',
        "WasmTrap(IncorrectCallIndirectSignature)",
    ),
    # a table index past the table: nearcore answers TableOutOfBounds as MemoryOutOfBounds
    # (wasmtime_runner/mod.rs `into_vm_error`)
    "table_out_of_bounds": (
        '(table 1 funcref) (func (export "m") (call_indirect (i32.const 5)))',
        "WasmTrap(MemoryOutOfBounds)",
    ),
    "stack_overflow": ('(func $r (export "m") (call $r))', "HostError(MemoryAccessViolation)"),
    "panic": ('(func (export "m") (call $panic))', 'HostError(GuestPanic { panic_msg: "explicit guest panic" })'),
    "panic_utf8": (
        '(data (i32.const 0) "Failed to deserialize input from JSON.")'
        ' (func (export "m") (call $panic_utf8 (i64.const 38) (i64.const 0)))',
        'HostError(GuestPanic { panic_msg: "Failed to deserialize input from JSON." })',
    ),
    "panic_utf8_quotes": (
        '(data (i32.const 0) "say \\"hi\\"\\n") (func (export "m") (call $panic_utf8 (i64.const 9) (i64.const 0)))',
        'HostError(GuestPanic { panic_msg: "say \\"hi\\"\\n" })',
    ),
    # Rust's Debug of a string: named escapes, then \\u{..} (lowercase hex) for DEL, other
    # controls and what Unicode does not print (NBSP, a zero-width space); UTF-8 text as it is
    "panic_utf8_escapes": (
        '(data (i32.const 0) "a\\09b\\0dc\\00d\\7fe\\1ff\\c2\\a0g\\e2\\80\\8bh\\c3\\a9")'
        ' (func (export "m") (call $panic_utf8 (i64.const 20) (i64.const 0)))',
        'HostError(GuestPanic { panic_msg: "a\\tb\\rc\\0d\\u{7f}e\\u{1f}f\\u{a0}g\\u{200b}hé" })',
    ),
    "panic_utf8_backslash": (
        '(data (i32.const 0) "a\\\\b") (func (export "m") (call $panic_utf8 (i64.const 3) (i64.const 0)))',
        'HostError(GuestPanic { panic_msg: "a\\\\b" })',
    ),
    # logic.rs `abort`: a string pointer below 4 has no room for its length: BadUTF16
    "abort_low_filename": (
        '(func (export "m") (call $abort (i32.const 8) (i32.const 3) (i32.const 0) (i32.const 0)))',
        "HostError(BadUTF16)",
    ),
    "start_function_trap": ('(func $s unreachable) (start $s) (func (export "m"))', "WasmTrap(Unreachable)"),
    "bad_utf8": (
        '(data (i32.const 0) "\\ff") (func (export "m") (call $log_utf8 (i64.const 1) (i64.const 0)))',
        "HostError(BadUTF8)",
    ),
    "invalid_register": (
        '(func (export "m") (call $read_register (i64.const 5) (i64.const 0)))',
        "HostError(InvalidRegisterId { register_id: 5 })",
    ),
    "memory_access_violation": (
        '(func (export "m") (call $log_utf8 (i64.const 10) (i64.const 67108860)))',
        "HostError(MemoryAccessViolation)",
    ),
    "abort": (
        # AssemblyScript strings: u32 byte length, then UTF-16
        '(data (i32.const 0) "\\04\\00\\00\\00o\\00k\\00") (data (i32.const 16) "\\02\\00\\00\\00f\\00")'
        ' (func (export "m") (call $abort (i32.const 4) (i32.const 20) (i32.const 3) (i32.const 9)))',
        'HostError(GuestPanic { panic_msg: "ok, filename: \\"f\\" line: 3 col: 9" })',
    ),
    "method_invalid_signature": ('(func (export "m") (param i32))', "MethodResolveError(MethodInvalidSignature)"),
    "method_with_result": (
        '(func (export "m") (result i32) (i32.const 1))',
        "MethodResolveError(MethodInvalidSignature)",
    ),
    "export_not_a_function": (
        '(global (export "m") i32 (i32.const 0))',
        "MethodResolveError(MethodNotFound)",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_error_text(case: str) -> None:
    body, debug = CASES[case]
    with pytest.raises(ViewCallError) as failure:
        run(module(body, PANICS), "m")
    assert failure.value.debug == debug
    assert failure.value.vm_error == "wasm execution failed with error: " + debug


def test_method_not_found_and_empty_name() -> None:
    code = module('(func (export "m"))')
    with pytest.raises(ViewCallError) as missing:
        run(code, "get_num")
    assert missing.value.vm_error == "wasm execution failed with error: MethodResolveError(MethodNotFound)"
    with pytest.raises(ViewCallError) as empty:
        run(code, "")
    assert empty.value.vm_error == "wasm execution failed with error: MethodResolveError(MethodEmptyName)"


def test_the_contracts_memory_is_no_method() -> None:
    code = module('(func (export "m"))', memory='(memory (export "memory") 1)')
    with pytest.raises(ViewCallError) as failure:
        run(code, "memory")
    assert failure.value.debug == "MethodResolveError(MethodNotFound)"


def test_abort_logs_its_message() -> None:
    body, _ = CASES["abort"]
    with pytest.raises(ViewCallError) as failure:
        run(module(body, PANICS), "m")
    assert failure.value.logs == ['ABORT: ok, filename: "f" line: 3 col: 9']


def test_a_panic_keeps_the_logs_before_it() -> None:
    body = """(data (i32.const 0) "before") (func (export "m") (call $log_utf8 (i64.const 6) (i64.const 0))
      (call $panic_utf8 (i64.const 6) (i64.const 0)))"""
    with pytest.raises(ViewCallError) as failure:
        run(module(body), "m")
    assert failure.value.logs == ["before"]
    assert failure.value.debug == 'HostError(GuestPanic { panic_msg: "before" })'


def test_invalid_wasm_is_a_deserialization_error() -> None:
    for code in (b"not wasm at all", b"\x00asm\x01\x00\x00\x00\xff", module('(func (export "m"))')[:-3]):
        with pytest.raises(ViewCallError) as failure:
            run(code, "m")
        assert failure.value.vm_error == (
            "wasm execution failed with error: CompilationError(PrepareError(Deserialization))"
        )


def test_simd_is_refused_as_nearcore_refuses_it() -> None:
    # nearcore's engine leaves the SIMD proposal off: such a module does not deserialize
    code = module('(func (export "m") (drop (i32x4.splat (i32.const 0))))')
    with pytest.raises(ViewCallError) as failure:
        run(code, "m")
    assert failure.value.debug == "CompilationError(PrepareError(Deserialization))"


def test_an_import_nearcore_lacks_fails_to_link() -> None:
    code = module('(func (export "m"))', '(import "env" "no_such_function" (func))')
    with pytest.raises(ViewCallError) as failure:
        run(code, "m")
    # wasmtime_runner/mod.rs `into_vm_error`: an UnknownImportError is named this way, not by the engine
    assert failure.value.debug == 'LinkError { msg: "unknown or invalid import" }'


def test_a_newer_host_functions_name_in_another_module_does_not_instantiate() -> None:
    # only `env` is imported from (prepare_v3.rs `transform_import_section`): `other::sha3_256` is
    # refused before linking
    code = module('(func (export "m"))', '(import "other" "sha3_256" (func (param i64 i64 i64)))')
    with pytest.raises(ViewCallError) as failure:
        run(code, "m")
    assert failure.value.debug == "CompilationError(PrepareError(Instantiate))"


def test_a_link_error_comes_before_the_method_lookup() -> None:
    # nearcore links with the compilation (instantiate_pre), before it looks the method up
    code = module('(func (export "m"))', '(import "env" "no_such_function" (func))')
    with pytest.raises(ViewCallError) as failure:
        run(code, "not_there")
    assert failure.value.debug.startswith("LinkError")


def test_the_empty_name_comes_before_a_compilation_error() -> None:
    with pytest.raises(ViewCallError) as failure:
        run(b"not wasm", "")
    assert failure.value.debug == "MethodResolveError(MethodEmptyName)"


def test_an_import_with_the_wrong_signature_fails_to_link() -> None:
    code = module('(func (export "m"))', '(import "env" "block_index" (func (param i32)))')
    with pytest.raises(ViewCallError) as failure:
        run(code, "m")
    # the root cause of the engine's error (`into_vm_error`: `root_cause().to_string()`)
    assert failure.value.debug == (
        'LinkError { msg: "types incompatible: expected type `(func (param i32))`, found type `(func (result i64))`" }'
    )


def signature_of(name: str) -> tuple[str, str]:
    fn = next(fn for fn in HOST_FUNCTIONS if fn.name == name)
    params = " ".join(fn.params)
    results = " ".join(fn.results)
    decl = f"(func $f (param {params}) (result {results}))" if results else f"(func $f (param {params}))"
    zeros = " ".join(f"({kind}.const 0)" for kind in fn.params)
    call = f"(drop (call $f {zeros}))" if results else f"(call $f {zeros})"
    return f'(import "env" "{name}" {decl})', call


SHOWN_AS = {
    "promise_create": "promise_batch_create",
    "promise_then": "promise_batch_then",
    "promise_batch_action_function_call_weight": "promise_batch_action_function_call",
    "promise_yield_resume": "promise_submit_data",
}


@pytest.mark.parametrize("name", PROHIBITED_IN_VIEW)
def test_prohibited_in_view(name: str) -> None:
    imported, call = signature_of(name)
    code = module(f'(func (export "m") {call})', IMPORTS + imported)
    with pytest.raises(ViewCallError) as failure:
        run(code, "m")
    shown = SHOWN_AS.get(name, name)
    assert failure.value.debug == f'HostError(ProhibitedInView {{ method_name: "{shown}" }})'


def test_the_list_holds_nearcores_view_test_and_the_issue_names() -> None:
    # runtime/near-vm-runner/src/logic/tests/view_method.rs `test_prohibited_view_methods`
    expected = {
        "signer_account_id", "signer_account_pk", "predecessor_account_id", "prepaid_gas", "used_gas",
        "promise_create", "promise_then", "promise_and", "promise_batch_create", "promise_batch_then",
        "promise_batch_action_create_account", "promise_batch_action_deploy_contract",
        "promise_batch_action_function_call", "promise_batch_action_transfer", "promise_batch_action_stake",
        "promise_batch_action_add_key_with_full_access", "promise_batch_action_add_key_with_function_call",
        "promise_batch_action_delete_key", "promise_batch_action_delete_account", "promise_results_count",
        "promise_result", "promise_return", "storage_write", "storage_remove",
    }  # fmt: skip
    assert expected <= set(PROHIBITED_IN_VIEW)


def test_a_prohibited_import_that_is_never_called_links_and_runs() -> None:
    code = module('(func (export "m"))', IMPORTS + signature_of("storage_write")[0])
    assert run(code, "m").result == b""


@pytest.mark.parametrize("name", ["storage_iter_prefix", "storage_iter_range", "storage_iter_next"])
def test_storage_iterators_are_deprecated(name: str) -> None:
    imported, call = signature_of(name)
    with pytest.raises(ViewCallError) as failure:
        run(module(f'(func (export "m") {call})', IMPORTS + imported), "m")
    assert failure.value.debug == f'HostError(Deprecated {{ method_name: "{name}" }})'


def test_a_host_function_not_implemented_here_is_reported_as_such() -> None:
    imported, call = signature_of("alt_bn128_g1_sum")
    with pytest.raises(HostFunctionUnavailable) as failure:
        run(module(f'(func (export "m") {call})', IMPORTS + imported), "m")
    assert failure.value.name == "alt_bn128_g1_sum"


def test_an_unimplemented_import_is_reported_only_when_called() -> None:
    imported, call = signature_of("alt_bn128_g1_sum")
    assert run(module('(func (export "m")) (func (export "n") ' + call + ")", IMPORTS + imported), "m").result == b""


def test_too_many_logs() -> None:
    body = """(data (i32.const 0) "x")
      (func (export "m") (loop $again (call $log_utf8 (i64.const 1) (i64.const 0)) (br $again)))"""
    with pytest.raises(ViewCallError) as failure:
        run(module(body), "m")
    assert failure.value.debug == "HostError(NumberOfLogsExceeded { limit: 100 })"
    assert failure.value.logs == ["x"] * 100


@pytest.mark.parametrize(
    ("name", "params", "result"),
    [
        # nearcore's signatures (near-vm-runner imports.rs), written out rather than read from the table
        ("storage_write", 5, "i64"),
        ("promise_yield_create", 7, "i64"),
        ("promise_batch_action_deploy_global_contract", 3, None),
        ("promise_batch_action_deploy_global_contract_by_account_id", 3, None),
        ("promise_batch_action_use_global_contract", 3, None),
        ("promise_batch_action_use_global_contract_by_account_id", 3, None),
    ],
)
def test_the_newer_prohibited_functions_link_with_nearcores_signatures(
    name: str, params: int, result: str | None
) -> None:
    decl = f"(func $f (param {' '.join(['i64'] * params)})" + (f" (result {result}))" if result else ")")
    zeros = " ".join(["(i64.const 0)"] * params)
    call = f"(drop (call $f {zeros}))" if result else f"(call $f {zeros})"
    code = module(f'(func (export "m") {call})', IMPORTS + f'(import "env" "{name}" {decl})')
    with pytest.raises(ViewCallError) as failure:
        run(code, "m")
    assert failure.value.debug == f'HostError(ProhibitedInView {{ method_name: "{name}" }})'


def test_two_memories_do_not_deserialize() -> None:
    # nearcore validates the module first with the multi-memory proposal off (prepare_v2.rs
    # `validate_contract`): a second memory is Deserialization before any memory rule
    code = bytes(wasmtime.wat2wasm('(module (memory 1) (memory 1) (func (export "m")))'))
    with pytest.raises(ViewCallError) as failure:
        run(code, "m")
    assert failure.value.debug == "CompilationError(PrepareError(Deserialization))"


def test_a_start_function_runs_with_the_calls_host_functions() -> None:
    """nearcore instantiates the module for each call, so its start function runs first, with the
    call's logic: its logs are the call's, and its panic is the call's failure (not an internal
    error for a host call made before the instance exists)."""
    logging = """(data (i32.const 0) "started") (func $start (call $log_utf8 (i64.const 7) (i64.const 0)))
      (start $start) (func (export "m") (call $value_return (i64.const 7) (i64.const 0)))"""
    outcome = run(module(logging), "m")
    assert outcome.logs == ["started"] and outcome.result == b"started"
    panicking = """(data (i32.const 0) "early") (func $start (call $panic_utf8 (i64.const 5) (i64.const 0)))
      (start $start) (func (export "m"))"""
    with pytest.raises(ViewCallError) as failure:
        run(module(panicking), "m")
    assert failure.value.debug == 'HostError(GuestPanic { panic_msg: "early" })'
