"""A failed call's FunctionCallError as nearcore records it in an outcome, from the executor's
Debug text (errors.py).

runtime/runtime conversions.rs `function_call_error`: CompilationError and MethodResolveError keep
their structure; HostError and WasmTrap collapse into `ExecutionError(<Display text>)`, LinkError
into `ExecutionError("Link Error: <msg>")` (Display texts: near-vm-runner logic/errors.rs). The
sandbox's own `PromisesUnsupported` (errors.promises_unsupported) reads as an ExecutionError too.
"""

from __future__ import annotations

import re
from typing import Final

PANIC: Final = "Smart contract panicked: "

# near-vm-runner logic/errors.rs `impl Display for HostError`, by variant; `{name}` is a field
_HOST_DISPLAY: Final[dict[str, str]] = {
    "BadUTF8": "String encoding is bad UTF-8 sequence.",
    "BadUTF16": "String encoding is bad UTF-16 sequence.",
    "GasExceeded": "Exceeded the prepaid gas.",
    "GasLimitExceeded": "Exceeded the maximum amount of gas allowed to burn per contract.",
    "BalanceExceeded": "Exceeded the account balance.",
    "EmptyMethodName": "Tried to call an empty method name.",
    "GuestPanic": PANIC + "{panic_msg}",
    "IntegerOverflow": "Integer overflow.",
    "InvalidRegisterId": "Accessed invalid register id: {register_id}",
    "MemoryAccessViolation": "Accessed memory outside the bounds.",
    "ProhibitedInView": "{method_name} is not allowed in view calls",
    "NumberOfLogsExceeded": "The number of logs will exceed the limit {limit}",
    "KeyLengthExceeded": "The length of a storage key {length} exceeds the limit {limit}",
    "ValueLengthExceeded": "The length of a storage value {length} exceeds the limit {limit}",
    "TotalLogLengthExceeded": "The length of a log message {length} exceeds the limit {limit}",
    "ReturnedValueLengthExceeded": "The length of a returned value {length} exceeds the limit {limit}",
    "ContractSizeExceeded": "The size of a contract code in DeployContract action {size} exceeds the limit {limit}",
    "InvalidAccountId": "VM Logic returned an invalid account id",
    "Deprecated": "Attempted to call deprecated host function {method_name}",
    "ECRecoverError": "ECDSA recover error: {msg}",
    "AltBn128InvalidInput": "AltBn128 invalid input: {msg}",
    "Ed25519VerifyInvalidInput": "ED25519 signature verification error: {msg}",
    "BLS12381InvalidInput": "BLS12-381 invalid input: {msg}",
    "InvalidPromiseResultIndex": "Accessed invalid promise result index: {result_idx}",
    "InvalidPromiseIndex": "{promise_idx} does not correspond to existing promises",
    "CannotAppendActionToJointPromise": "Actions can only be appended to non-joint promise.",
    "CannotReturnJointPromise": "Returning joint promise is currently prohibited.",
    "InvalidMethodName": "VM Logic returned an invalid method name",
    "YieldPayloadLength": "Yield resume payload is {length} bytes which exceeds the {limit} byte limit",
    "DataIdMalformed": "yield resumption token is malformed",
    "InvalidPublicKey": "VM Logic provided an invalid public key",
    "NumberPromisesExceeded": (
        "The number of promises within a FunctionCall {number_of_promises} exceeds the limit {limit}"
    ),
    "NumberInputDataDependenciesExceeded": (
        "The number of input data dependencies {number_of_input_data_dependencies} exceeds the limit {limit}"
    ),
    "PromisesUnsupported": (
        "{method_name} is not available: nearrpc's sandbox does not run this promise host function yet"
    ),
}
# logic/errors.rs `impl Display for WasmTrap`
_TRAP_DISPLAY: Final[dict[str, str]] = {
    "Unreachable": "An `unreachable` opcode was executed.",
    "IncorrectCallIndirectSignature": "Call indirect incorrect signature trap.",
    "MemoryOutOfBounds": "Memory out of bounds trap.",
    "CallIndirectOOB": "Call indirect out of bounds trap.",
    "IllegalArithmetic": "An arithmetic exception, e.g. divided by zero.",
    "MisalignedAtomicAccess": "Misaligned atomic access trap.",
    "GenericTrap": "Generic trap.",
    "StackOverflow": "Stack overflow.",
    "IndirectCallToNull": "Indirect call to null.",
}

_VARIANT = re.compile(r"^(\w+)(?: \{ (.*) \})?$", re.DOTALL)
_FIELD = re.compile(r'(\w+): ("(?:[^"\\]|\\.)*"|\d+)(?:, |$)', re.DOTALL)
_ESCAPES: Final = {"n": "\n", "r": "\r", "t": "\t", "0": "\0", '"': '"', "\\": "\\", "'": "'"}


def _rust_unquote(quoted: str) -> str:
    """The string a Rust Debug literal stands for (the escapes `_rust_str` writes)."""
    body, out, i = quoted[1:-1], [], 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out.append(char)
            i += 1
        elif body[i + 1] == "u":
            end = body.index("}", i)
            out.append(chr(int(body[i + 3 : end], 16)))
            i = end + 1
        else:
            out.append(_ESCAPES[body[i + 1]])
            i += 2
    return "".join(out)


def _variant(text: str) -> tuple[str, dict[str, str | int]] | None:
    """`Name` or `Name { field: value, ... }` (values: integers or quoted strings)."""
    match = _VARIANT.match(text)
    if match is None:
        return None
    fields: dict[str, str | int] = {}
    for name, value in _FIELD.findall(match.group(2) or ""):
        fields[name] = _rust_unquote(value) if value.startswith('"') else int(value)
    return match.group(1), fields


def execution_error_text(debug: str) -> str | None:
    """The Display text of a HostError, WasmTrap or LinkError Debug text (None for other kinds)."""
    outer = re.match(r"^(\w+)\((.*)\)$", debug, re.DOTALL)
    if outer is not None:
        kind, inner = outer.groups()
        if kind == "WasmTrap" and inner in _TRAP_DISPLAY:
            return f"WebAssembly trap: {_TRAP_DISPLAY[inner]}"
        if kind == "HostError":
            parsed = _variant(inner)
            if parsed is not None and parsed[0] in _HOST_DISPLAY:
                return _HOST_DISPLAY[parsed[0]].format(**parsed[1])
    link = _variant(debug)
    if link is not None and link[0] == "LinkError":
        return f"Link Error: {link[1].get('msg', '')}"
    return None


def function_call_error(debug: str) -> object | None:
    """The FunctionCallError JSON of an outcome's ActionError for the executor's Debug text
    (None: a failure of the runner itself, which nearcore does not record as an outcome)."""
    outer = re.match(r"^(\w+)\((.*)\)$", debug, re.DOTALL)
    if outer is not None:
        kind, inner = outer.groups()
        if kind == "MethodResolveError":
            return {"MethodResolveError": inner}
        if kind == "CompilationError":
            prepare = re.match(r"^PrepareError\((\w+)\)$", inner)
            if prepare is not None:
                return {"CompilationError": {"PrepareError": prepare.group(1)}}
    text = execution_error_text(debug)
    return None if text is None else {"ExecutionError": text}
