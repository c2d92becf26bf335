"""The executor alone (no server, no store): microseconds per view call, on a quiet machine:

    python -m bench.view_exec [--calls 2000] [--cold 50]

Prints p50 / p99 / mean per call for
- a cold module: compiled for the call (a code hash not seen before), then run;
- a cached module: the compiled module reused, each call with distinct arguments (what a fresh
  `ft_balance_of` costs once the contract has been seen: store, instance, host calls, gas).
The contract reads its input, reads one storage key built from it (as a token's balance) and
returns the value, with the sample chain's protocol costs.
- ft.wasm ft_balance_of: the sample chain's token contract (service/sample/contracts/ft.wat),
  its module cached, each call a distinct holder's JSON arguments, with a balance to return
  (parsing the JSON input, the u128 and writing the JSON string are the contract's own work).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from pathlib import Path

import wasmtime

from nearrpc.contracts import GasCosts, ViewContext, ViewEngine
from nearrpc.sample import wasm

CONFIG = Path(__file__).resolve().parent.parent / "tests/fixtures/EXPERIMENTAL_protocol_config/finality_final.json"
WAT = """(module
 (import "env" "input" (func $input (param i64)))
 (import "env" "read_register" (func $read_register (param i64 i64)))
 (import "env" "register_len" (func $register_len (param i64) (result i64)))
 (import "env" "storage_read" (func $storage_read (param i64 i64 i64) (result i64)))
 (import "env" "value_return" (func $value_return (param i64 i64)))
 (memory 1)
 (data (i32.const 0) "b")
 (func (export "balance_of") (local $n i64)
  (call $input (i64.const 0))
  (local.set $n (call $register_len (i64.const 0)))
  (call $read_register (i64.const 0) (i64.const 1))
  (if (i64.eqz (call $storage_read (i64.add (local.get $n) (i64.const 1)) (i64.const 0) (i64.const 1)))
    (then (call $value_return (i64.const 1) (i64.const 0)))
    (else (call $value_return (i64.const -1) (i64.const 1))))))
"""


class _State:
    def __init__(self, values: dict[bytes, bytes]) -> None:
        self.values = values

    def storage_read(self, key: bytes) -> bytes | None:
        return self.values.get(key)


def _summary(label: str, samples_ns: list[int]) -> str:
    micros = sorted(sample / 1000 for sample in samples_ns)
    p50 = micros[len(micros) // 2]
    p99 = micros[min(len(micros) - 1, int(len(micros) * 0.99))]
    mean = statistics.fmean(micros)
    return f"{label:<16} calls {len(micros):>6}  p50 {p50:9.1f} us  p99 {p99:9.1f} us  mean {mean:9.1f} us"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--cold", type=int, default=50)
    options = parser.parse_args()
    config = json.loads(json.loads(CONFIG.read_text())["response"]["body"])["result"]
    costs = GasCosts.from_protocol_config(config)
    context = ViewContext("token.localnet", 100, 1, 1, 10**24, 0, 1000, bytes(32))
    state = _State({b"b" + f"user{i}.near".encode(): str(i).encode() for i in range(options.calls)})
    engine = ViewEngine()

    cold: list[int] = []
    for i in range(options.cold):
        # a custom section ("salt", 4 bytes) makes each module distinct: a code hash not seen before
        code = bytes(wasmtime.wat2wasm(WAT)) + b"\x00\x09\x04salt" + i.to_bytes(4, "little")
        code_hash = hashlib.sha256(code).hexdigest()
        started = time.perf_counter_ns()
        engine.run_view(code, code_hash, "balance_of", b"user0.near", context, state, costs)
        cold.append(time.perf_counter_ns() - started)

    code = bytes(wasmtime.wat2wasm(WAT))
    code_hash = hashlib.sha256(code).hexdigest()
    engine.run_view(code, code_hash, "balance_of", b"user0.near", context, state, costs)
    cached: list[int] = []
    for i in range(options.calls):
        args = f"user{i}.near".encode()
        started = time.perf_counter_ns()
        outcome = engine.run_view(code, code_hash, "balance_of", args, context, state, costs)
        cached.append(time.perf_counter_ns() - started)
        assert outcome.result == str(i).encode()
    print(_summary("cold module", cold))
    print(_summary("cached module", cached))
    print(_summary("ft.wasm balance", _ft_balance_of(engine, costs, options.calls)))


def _ft_balance_of(engine: ViewEngine, costs: GasCosts, calls: int) -> list[int]:
    """Calls of the sample token's `ft_balance_of`, each for another holder with a balance."""
    code = wasm.FT.code
    code_hash = hashlib.sha256(code).hexdigest()
    context = ViewContext("token.localnet", 100, 1, 1, 10**24, 0, 1000, bytes(32))
    holders = [f"user{i}.localnet" for i in range(calls)]
    state = _State({b"b" + holder.encode(): (i + 1).to_bytes(16, "little") for i, holder in enumerate(holders)})
    engine.run_view(code, code_hash, "ft_balance_of", b'{"account_id":"user0.localnet"}', context, state, costs)
    samples: list[int] = []
    for i, holder in enumerate(holders):
        args = json.dumps({"account_id": holder}).encode()
        started = time.perf_counter_ns()
        outcome = engine.run_view(code, code_hash, "ft_balance_of", args, context, state, costs)
        samples.append(time.perf_counter_ns() - started)
        assert outcome.result == b'"%d"' % (i + 1), outcome.result
    return samples


if __name__ == "__main__":
    main()
