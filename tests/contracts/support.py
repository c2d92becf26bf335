"""What the executor's tests share: the sample chain's protocol costs, a context, a dict as
contract state, and WAT modules assembled in the tests (wasmtime.wat2wasm)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import wasmtime

from nearrpc.contracts import GasCosts, ViewContext, ViewEngine, ViewOutcome

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "EXPERIMENTAL_protocol_config" / "finality_final.json"


def protocol_config() -> dict[str, object]:
    recorded = json.loads(FIXTURE.read_text())
    result: dict[str, object] = json.loads(recorded["response"]["body"])["result"]
    return result


COSTS = GasCosts.from_protocol_config(protocol_config())
CONTEXT = ViewContext(
    account_id="counter.localnet",
    block_height=1234,
    block_timestamp=1_700_000_000_123_456_789,
    epoch_height=7,
    account_balance=10**25 + 3,
    account_locked_balance=5 * 10**24,
    storage_usage=4321,
    random_seed=bytes(range(32)),
)


class DictState:
    """Contract storage as a dict; records the keys read (the fork fetches exactly those)."""

    def __init__(self, values: dict[bytes, bytes] | None = None) -> None:
        self.values = dict(values or {})
        self.reads: list[bytes] = []

    def storage_read(self, key: bytes) -> bytes | None:
        self.reads.append(key)
        return self.values.get(key)


# every import a test module may use, with nearcore's signatures
IMPORTS = """
 (import "env" "read_register" (func $read_register (param i64 i64)))
 (import "env" "register_len" (func $register_len (param i64) (result i64)))
 (import "env" "write_register" (func $write_register (param i64 i64 i64)))
 (import "env" "input" (func $input (param i64)))
 (import "env" "value_return" (func $value_return (param i64 i64)))
 (import "env" "log_utf8" (func $log_utf8 (param i64 i64)))
 (import "env" "panic_utf8" (func $panic_utf8 (param i64 i64)))
"""


def module(body: str, imports: str = IMPORTS, memory: str = "(memory 1)") -> bytes:
    return bytes(wasmtime.wat2wasm(f"(module {imports} {memory} {body})"))


def code_hash(code: bytes) -> str:
    return hashlib.sha256(code).hexdigest()


def run(
    code: bytes,
    method: str,
    args: bytes = b"",
    state: DictState | None = None,
    costs: GasCosts = COSTS,
    engine: ViewEngine | None = None,
    context: ViewContext = CONTEXT,
) -> ViewOutcome:
    runner = engine or ViewEngine()
    return runner.run_view(code, code_hash(code), method, args, context, state or DictState(), costs)


def with_limit(limit: int) -> GasCosts:
    return replace(COSTS, view_gas_limit=limit)
