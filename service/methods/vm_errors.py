"""A failed view call's error as EXPERIMENTAL_call_function answers it, from the executor's text.

The executor (nearrpc.contracts) gives the VM's FunctionCallError in Rust Debug form, which is
what `query` shows ("wasm execution failed with error: {:?}", runtime state_viewer
`call_function`). EXPERIMENTAL_call_function answers the error as JSON instead, after two
conversions in nearcore:
- runtime/runtime conversions.rs `function_call_error`: CompilationError and MethodResolveError
  keep their structure; HostError and WasmTrap collapse into `ExecutionError(<Display text>)`,
  LinkError into `ExecutionError("Link Error: <msg>")` (Display texts: near-vm-runner
  logic/errors.rs);
- jsonrpc-primitives types/call_function.rs `RpcFunctionCallError::from`: an ExecutionError whose
  text is "Smart contract panicked: " and valid JSON carries that JSON value, else the text.
`data` is "Function call returned an error: " and the RpcFunctionCallError's Debug form.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from nearrpc.contracts.call_errors import PANIC, execution_error_text
from nearrpc.contracts.errors import rust_debug_str


def _execution_error(display: str) -> tuple[object, str]:
    """RpcFunctionCallError::ExecutionError: the panic's JSON value, or the text."""
    value: Any = display
    if display.startswith(PANIC):
        try:
            value = orjson.loads(display[len(PANIC) :])
        except orjson.JSONDecodeError:
            value = display
    return {"ExecutionError": value}, f"ExecutionError({json_value_debug(value)})"


def json_value_debug(value: Any) -> str:
    """serde_json::Value's Debug form (`String("..")`, `Number(1)`, `Object {"k": ..}`)."""
    if value is None:
        return "Null"
    if isinstance(value, bool):
        return f"Bool({'true' if value else 'false'})"
    if isinstance(value, int | float):
        return f"Number({orjson.dumps(value).decode()})"
    if isinstance(value, str):
        return f"String({rust_debug_str(value)})"
    if isinstance(value, list):
        return "Array [" + ", ".join(json_value_debug(item) for item in value) + "]"
    items = ", ".join(f"{rust_debug_str(key)}: {json_value_debug(item)}" for key, item in value.items())
    return "Object {" + items + "}"


def rpc_function_call_error(debug: str) -> tuple[object, str]:
    """(vm_error JSON, its Debug form) for the executor's FunctionCallError Debug text."""
    outer = re.match(r"^(\w+)\((.*)\)$", debug, re.DOTALL)
    if outer is not None:
        kind, inner = outer.groups()
        if kind == "MethodResolveError":
            return {"MethodResolveError": inner}, debug
        if kind == "CompilationError":
            prepare = re.match(r"^PrepareError\((\w+)\)$", inner)
            if prepare is not None:
                return {"CompilationError": {"PrepareError": prepare.group(1)}}, debug
    text = execution_error_text(debug)
    if text is not None:
        return _execution_error(text)
    # a runner failure nearcore reports as an unknown wasm error (VMRunnerError::WasmUnknownError)
    return "WasmUnknownError", "WasmUnknownError"
