"""The errors a view call ends with, written as nearcore's RPC shows them.

nearcore's view path (runtime/runtime/src/state_viewer/mod.rs, `TrieViewer::call_function`)
turns an aborted outcome into `"wasm execution failed with error: {:?}"` of the
`FunctionCallError` (core/primitives-core errors, near-vm-runner `logic/errors.rs`), which the RPC
answers as `ContractExecutionError.vm_error`. Each constructor below writes one variant's Debug
text; where it comes from is noted beside it.
"""

from __future__ import annotations

VM_ERROR_PREFIX = "wasm execution failed with error: "


def _rust_str(text: str) -> str:
    """A string as Rust's Debug writes it: quoted, with `"` `\\` and control characters escaped."""
    out = ['"']
    for char in text:
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif char == "\0":
            out.append("\\0")
        elif not char.isprintable():
            # Rust escapes what it does not print (controls, format characters, separators
            # other than the space, unassigned): the classes Python's isprintable() refuses
            out.append(f"\\u{{{ord(char):x}}}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


# the methods write serde_json's Debug of a panic text with it (EXPERIMENTAL_call_function's data)
rust_debug_str = _rust_str


class ViewCallError(Exception):
    """A view call that nearcore would abort: `debug` is the FunctionCallError's Debug text,
    `vm_error` the whole text nearcore's RPC answers, `logs` what the contract logged before."""

    def __init__(self, debug: str, logs: list[str] | None = None) -> None:
        super().__init__(debug)
        self.debug = debug
        self.logs: list[str] = list(logs or [])

    @property
    def vm_error(self) -> str:
        return VM_ERROR_PREFIX + self.debug


class HostFunctionUnavailable(Exception):
    """The contract needs a host function nearcore has and this executor does not implement
    (e.g. validator_stake, the curve operations): the caller answers otherwise (a fork asks its
    upstream). `name` is the host function."""

    def __init__(self, name: str) -> None:
        super().__init__(f"host function {name} is not implemented by nearrpc's executor")
        self.name = name


# --- MethodResolveError (near-vm-runner wasmtime_runner.rs `WasmtimeVM::run`; logic.rs
# `VMLogic::before_loading_executable` for the empty name)
def method_empty_name() -> str:
    return "MethodResolveError(MethodEmptyName)"


def method_not_found() -> str:
    return "MethodResolveError(MethodNotFound)"


def method_invalid_signature() -> str:
    return "MethodResolveError(MethodInvalidSignature)"


# --- CompilationError (near-vm-runner prepare.rs `prepare_contract`; errors.rs PrepareError)
def prepare_error(kind: str) -> str:
    return f"CompilationError(PrepareError({kind}))"


# --- LinkError (wasmtime_runner/mod.rs `into_vm_error`: the root cause of a linking failure)
def link_error(message: str) -> str:
    return f"LinkError {{ msg: {_rust_str(message)} }}"


# --- WasmTrap (wasmtime_runner.rs `trap_to_error`, trap code by trap code)
def wasm_trap(kind: str) -> str:
    return f"WasmTrap({kind})"


# --- HostError (logic.rs; logic/errors.rs HostError variants)
def host_error(variant: str) -> str:
    return f"HostError({variant})"


def guest_panic(message: str) -> str:
    return host_error(f"GuestPanic {{ panic_msg: {_rust_str(message)} }}")


def prohibited_in_view(method_name: str) -> str:
    return host_error(f"ProhibitedInView {{ method_name: {_rust_str(method_name)} }}")


def deprecated(method_name: str) -> str:
    return host_error(f"Deprecated {{ method_name: {_rust_str(method_name)} }}")


def gas_limit_exceeded() -> str:
    return host_error("GasLimitExceeded")


def gas_exceeded() -> str:
    # the contract's loading fee past the gas left (gas_counter.rs `after_loading_executable`)
    return host_error("GasExceeded")


def memory_access_violation() -> str:
    return host_error("MemoryAccessViolation")


def invalid_register_id(register_id: int) -> str:
    return host_error(f"InvalidRegisterId {{ register_id: {register_id} }}")


def bad_utf8() -> str:
    return host_error("BadUTF8")


def bad_utf16() -> str:
    return host_error("BadUTF16")


def number_of_logs_exceeded(limit: int) -> str:
    return host_error(f"NumberOfLogsExceeded {{ limit: {limit} }}")


def total_log_length_exceeded(length: int, limit: int) -> str:
    return host_error(f"TotalLogLengthExceeded {{ length: {length}, limit: {limit} }}")


def key_length_exceeded(length: int, limit: int) -> str:
    return host_error(f"KeyLengthExceeded {{ length: {length}, limit: {limit} }}")


def returned_value_length_exceeded(length: int, limit: int) -> str:
    return host_error(f"ReturnedValueLengthExceeded {{ length: {length}, limit: {limit} }}")


def ed25519_invalid_input(message: str) -> str:
    return host_error(f"Ed25519VerifyInvalidInput {{ msg: {_rust_str(message)} }}")


def contract_size_exceeded(size: int, limit: int) -> str:
    # code over the protocol's max_contract_size, which no deployment could have stored
    # (logic.rs `promise_batch_action_deploy_contract`; actions.rs for a DeployContract action)
    return host_error(f"ContractSizeExceeded {{ size: {size}, limit: {limit} }}")


def ecrecover_error(message: str) -> str:
    return host_error(f"ECRecoverError {{ msg: {_rust_str(message)} }}")


def p256_invalid_input(message: str) -> str:
    return host_error(f"P256VerifyInvalidInput {{ msg: {_rust_str(message)} }}")


def ml_dsa_invalid_input(message: str) -> str:
    return host_error(f"MlDsaVerifyInvalidInput {{ msg: {_rust_str(message)} }}")


def unavailable(name: str) -> str:
    """A host function this executor cannot run, with no upstream to ask: nearcore's
    VMRunnerError::WasmUnknownError, the text it gives a failure that is not the contract's."""
    message = f"the host function {name} is not implemented by nearrpc's executor"
    return f"WasmUnknownError {{ debug_message: {_rust_str(message)} }}"


def value_length_exceeded(length: int, limit: int) -> str:
    return host_error(f"ValueLengthExceeded {{ length: {length}, limit: {limit} }}")


def invalid_promise_result_index(result_idx: int) -> str:
    return host_error(f"InvalidPromiseResultIndex {{ result_idx: {result_idx} }}")


def promises_unsupported(method_name: str) -> str:
    """A call of a promise host function the sandbox does not run (yields, refund_to, state init;
    any, for a call given no promise context): not a nearcore variant; its text (call_errors.py)
    names the function and says why."""
    return host_error(f"PromisesUnsupported {{ method_name: {_rust_str(method_name)} }}")


# --- the promise host functions' HostError variants (logic.rs; logic/errors.rs)
def invalid_promise_index(promise_idx: int) -> str:
    return host_error(f"InvalidPromiseIndex {{ promise_idx: {promise_idx} }}")


def cannot_append_action_to_joint_promise() -> str:
    return host_error("CannotAppendActionToJointPromise")


def cannot_return_joint_promise() -> str:
    return host_error("CannotReturnJointPromise")


def invalid_account_id() -> str:
    return host_error("InvalidAccountId")


def invalid_method_name() -> str:
    return host_error("InvalidMethodName")


def invalid_public_key() -> str:
    return host_error("InvalidPublicKey")


def empty_method_name() -> str:
    return host_error("EmptyMethodName")


def balance_exceeded() -> str:
    return host_error("BalanceExceeded")


def number_promises_exceeded(number: int, limit: int) -> str:
    return host_error(f"NumberPromisesExceeded {{ number_of_promises: {number}, limit: {limit} }}")


def number_input_data_dependencies_exceeded(number: int, limit: int) -> str:
    return host_error(
        f"NumberInputDataDependenciesExceeded {{ number_of_input_data_dependencies: {number}, limit: {limit} }}"
    )
