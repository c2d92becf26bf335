"""Valid modules at the edges of what the executor parses and allows, run through the engine:
- a function import whose type index takes two LEB128 bytes (a module with 128 or more types, as
  real contracts have): the wasm binary format writes every index as unsigned LEB128 (wasm spec
  5.2.2, `typeidx`), and nearcore's limit is `max_types_per_contract` (1,024 here), so such a
  contract is valid and runs;
- a table at the store's limit: nearcore's runner sets `StoreLimits::table_elements` to
  `max_elements_per_contract_table` (wasmtime_runner/mod.rs `Ctx::new`), so a table of exactly that
  many elements instantiates and one element more does not.
"""

from __future__ import annotations

import pytest

from nearrpc.contracts import ViewCallError
from tests.contracts.support import COSTS, module, run


def _many_types(count: int) -> str:
    return " ".join("(type (func (result i32)))" for _ in range(count))


def test_an_import_whose_type_index_takes_two_bytes_runs() -> None:
    # types 0..128 unused, the import's own type at 129 (LEB128 0x81 0x01), a second import after it
    imports = (
        f"{_many_types(129)} (type $pair (func (param i64 i64)))"
        ' (import "env" "value_return" (func $value_return (type $pair)))'
        ' (import "env" "log_utf8" (func $log_utf8 (type $pair)))'
    )
    code = module(
        '(data (i32.const 0) "ok") (func (export "m")'
        " (call $log_utf8 (i64.const 2) (i64.const 0)) (call $value_return (i64.const 2) (i64.const 0)))",
        imports,
    )
    assert b"value_return\x00\x81\x01" in code  # the index really is two bytes
    outcome = run(code, "m")
    assert (outcome.result, outcome.logs) == (b"ok", ["ok"])


def test_a_table_of_exactly_the_element_limit_instantiates() -> None:
    limit = COSTS.max_elements_per_contract_table
    assert limit == 10_000  # the protocol config's limit_config
    code = module(f'(table {limit} funcref) (func (export "m"))')
    assert run(code, "m").result == b""


def test_a_table_one_element_over_the_limit_does_not() -> None:
    limit = COSTS.max_elements_per_contract_table
    code = module(f'(table {limit + 1} funcref) (func (export "m"))')
    with pytest.raises(ViewCallError) as failure:
        run(code, "m")
    # nearcore's prepare step refuses it as PrepareError(TooManyTableElements) where it checks table
    # sizes (prepare_v2); without that step the store's limit refuses it at instantiation (LinkError)
    debug = failure.value.debug
    assert "TooManyTableElements" in debug or debug == (
        f'LinkError {{ msg: "table minimum size of {limit + 1} elements exceeds table limits" }}'
    )
