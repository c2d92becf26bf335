"""Gas: the costs a block's protocol config sets, and the counter a view call burns them on.

Facts from nearcore: the view's limit is the node's `max_gas_burnt_view`, by default the
protocol's `limit_config.max_gas_burnt` (runtime/runtime/src/state_viewer/mod.rs,
`TrieViewer::call_function`, `max_gas_burnt_view.unwrap_or(...)`); a view's prepaid gas is that
limit, so burning past it is `GasLimitExceeded` (near-vm-runner logic/gas_counter.rs
`GasCounter::process_gas_limit`: over `max_gas_burnt` is GasLimitExceeded). Every wasm
instruction costs `regular_op_cost` (near-vm-runner prepare: finite-wasm's gas instrumentation
charges one regular op per instruction); loading a contract costs `contract_loading_base` plus
`contract_loading_bytes` per code byte (logic.rs `before_loading_executable` /
`after_loading_executable`); host functions charge the `ext_costs` named in logic.rs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NoReturn

from nearrpc.contracts import errors
from nearrpc.contracts.prepare import PrepareRules


@dataclass(frozen=True)
class GasCosts:
    """The costs and limits of one protocol version, and the view's gas limit."""

    regular_op_cost: int
    ext: Mapping[str, int]
    view_gas_limit: int
    max_memory_pages: int
    initial_memory_pages: int
    max_number_registers: int
    max_register_size: int
    registers_memory_limit: int
    max_number_logs: int
    max_total_log_length: int
    max_length_storage_key: int
    max_length_returned_data: int
    max_tables_per_contract: int
    fix_contract_loading_cost: bool
    max_elements_per_contract_table: int
    # the prepare step's limits (None: the protocol sets none) and the wasm_config flags that are
    # on (which host functions and wasm features the protocol offers); the chain's id
    max_contract_size: int | None = None
    max_functions_number_per_contract: int | None = None
    max_locals_per_contract: int | None = None
    max_function_body_size: int | None = None
    prepare_max_tables: int | None = None
    prepare_max_table_elements: int | None = None
    flags: frozenset[str] = frozenset({"reftypes_bulk_memory"})
    chain_id: str = ""
    max_length_storage_value: int = 4 << 20  # a call's storage_write limit (limit_config)

    @classmethod
    def from_protocol_config(
        cls, protocol_config: Mapping[str, Any], max_gas_burnt_view: int | None = None
    ) -> GasCosts:
        """Costs from an `EXPERIMENTAL_protocol_config` result; the view limit is the node's
        `max_gas_burnt_view` when given, else the protocol's `max_gas_burnt` (nearcore's default)."""
        wasm = protocol_config["runtime_config"]["wasm_config"]
        limits = wasm["limit_config"]
        return cls(
            regular_op_cost=int(wasm["regular_op_cost"]),
            ext={name: int(value) for name, value in wasm["ext_costs"].items()},
            view_gas_limit=int(limits["max_gas_burnt"]) if max_gas_burnt_view is None else max_gas_burnt_view,
            max_memory_pages=int(limits["max_memory_pages"]),
            initial_memory_pages=int(limits["initial_memory_pages"]),
            max_number_registers=int(limits["max_number_registers"]),
            max_register_size=int(limits["max_register_size"]),
            registers_memory_limit=int(limits["registers_memory_limit"]),
            max_number_logs=int(limits["max_number_logs"]),
            max_total_log_length=int(limits["max_total_log_length"]),
            max_length_storage_key=int(limits["max_length_storage_key"]),
            max_length_returned_data=int(limits["max_length_returned_data"]),
            # absent from older protocols: the runner's defaults (wasmtime_runner.rs DEFAULT_MAX_*)
            fix_contract_loading_cost=bool(wasm.get("fix_contract_loading_cost", False)),
            max_tables_per_contract=int(limits.get("max_tables_per_contract") or 1),
            max_elements_per_contract_table=int(limits.get("max_elements_per_contract_table") or 10_000),
            max_contract_size=_optional(limits, "max_contract_size"),
            max_functions_number_per_contract=_optional(limits, "max_functions_number_per_contract"),
            max_locals_per_contract=_optional(limits, "max_locals_per_contract"),
            max_function_body_size=_optional(limits, "max_function_body_size"),
            prepare_max_tables=_optional(limits, "max_tables_per_contract"),
            prepare_max_table_elements=_optional(limits, "max_elements_per_contract_table"),
            flags=frozenset(name for name, value in wasm.items() if value is True),
            chain_id=str(protocol_config.get("chain_id") or ""),
            max_length_storage_value=int(limits.get("max_length_storage_value") or 4 << 20),
        )

    @cached_property
    def prepare_rules(self) -> PrepareRules:
        """The prepare step's rules of this protocol (contracts.prepare)."""
        return PrepareRules(
            initial_pages=self.initial_memory_pages,
            max_pages=self.max_memory_pages,
            max_contract_size=self.max_contract_size,
            max_functions=self.max_functions_number_per_contract,
            max_locals=self.max_locals_per_contract,
            max_function_body_size=self.max_function_body_size,
            max_tables=self.prepare_max_tables,
            max_table_elements=self.prepare_max_table_elements,
            reftypes_bulk_memory="reftypes_bulk_memory" in self.flags,
        )


def _optional(limits: Mapping[str, Any], name: str) -> int | None:
    value = limits.get(name)
    return None if value is None else int(value)


class GasExhausted(Exception):
    """Burning past the view's limit; the runner answers GasLimitExceeded."""


class SliceExhausted(Exception):
    """A sliced run (see GasCounter) reached its slice: its answer is not known yet. A view has
    no side effects, so the same call run again with the whole limit gives the answer."""


class GasCounter:
    """Gas burnt by host functions, plus the instructions wasm ran (the engine's fuel, one unit
    per instruction, priced at regular_op_cost), charged at each host call and at the end.

    With `slice_gas` the run is a bounded first attempt (on a thread that must not be held
    long): any charge past min(slice_gas, limit), or a host call past `slice_host_calls` (cheap
    in gas, dear in time), raises SliceExhausted instead of deciding anything, even a charge
    past the limit too, so a sliced run answers only what the whole run would answer."""

    def __init__(
        self,
        costs: GasCosts,
        slice_gas: int | None = None,
        slice_host_calls: int | None = None,
        prepaid_gas: int | None = None,
    ) -> None:
        self.costs = costs
        self.limit = costs.view_gas_limit
        # what running out answers: a view, or a call whose prepaid gas reaches the protocol's
        # max_gas_burnt, hits GasLimitExceeded; a call stopped by its smaller prepaid gas hits
        # GasExceeded, and burns no more than it prepaid (gas_counter.rs `process_gas_limit`)
        self.exhausted_text = errors.gas_limit_exceeded()
        if prepaid_gas is not None and prepaid_gas < self.limit:
            self.limit = prepaid_gas
            self.exhausted_text = errors.gas_exceeded()
        self.sliced = slice_gas is not None
        self._host_calls_left = -1 if slice_host_calls is None else slice_host_calls
        # where charges end, and the gas one unit of fuel stands for (the engine's host calls read
        # both to hand out fuel as fuel_left does)
        self.stop = self.limit if slice_gas is None else min(slice_gas, self.limit)
        self.op_cost = max(costs.regular_op_cost, 1)
        self._ext = costs.ext
        self.burnt = 0
        # gas_counter.rs `promises_gas`: what the call's new receipts reserve (their exec fees and
        # prepaid gas), which the contract can no longer burn; used gas is burnt plus this
        self.promises_gas = 0
        self._max_burnt = costs.view_gas_limit
        self._prepaid = self.limit if prepaid_gas is None else prepaid_gas

    def pay(self, gas: int) -> None:
        if self.burnt + gas > self.stop:
            if self.sliced:
                raise SliceExhausted
            self._exhaust(self.burnt + gas)
        self.burnt += gas

    def _exhaust(self, new_burnt: int) -> NoReturn:
        """gas_counter.rs `process_gas_limit`: never burn past the limit; with gas reserved for
        promises the burn stops earlier, and which limit was hit decides the error."""
        self.burnt = min(new_burnt, self.limit)
        if self.promises_gas:
            self.promises_gas = max(min(self._prepaid, new_burnt + self.promises_gas) - self.burnt, 0)
            over_max = new_burnt > self._max_burnt
            self.exhausted_text = errors.gas_limit_exceeded() if over_max else errors.gas_exceeded()
        raise GasExhausted

    def deduct(self, burn: int, use: int) -> None:
        """gas_counter.rs `deduct_gas`: burn `burn` and reserve `use - burn` for the call's new
        receipts (an action's send fee is burnt, its exec fee and a call's gas reserved)."""
        promises = self.promises_gas + use - burn
        new_burnt = self.burnt + burn
        if new_burnt <= self._max_burnt and new_burnt + promises <= self._prepaid:
            self.burnt, self.promises_gas = new_burnt, promises
            if not self.sliced:
                self.stop = min(self.limit, self._prepaid - promises)
            return
        self.promises_gas = promises
        self._exhaust(new_burnt)

    def enter_host(self, granted: int, remaining: int) -> None:
        """A host call begins: it counts against the slice's host calls, then the instructions
        run since `granted` fuel was handed out are charged (as settle_fuel), in one call."""
        if self._host_calls_left == 0:
            raise SliceExhausted
        self._host_calls_left -= 1
        gas = (granted - remaining) * self.costs.regular_op_cost
        if self.burnt + gas > self.stop:
            if self.sliced:
                raise SliceExhausted
            self._exhaust(self.burnt + gas)
        self.burnt += gas

    def pay_ext(self, name: str, times: int = 1) -> None:
        self.pay(self._ext.get(name, 0) * times)

    def fuel_left(self) -> int:
        return (self.stop - self.burnt) // self.op_cost

    def settle_fuel(self, granted: int, remaining: int) -> None:
        """Charge the instructions run since `granted` fuel was handed out; past the limit is
        GasExhausted (the engine was handed more fuel than the gas pays for, see FUEL_HEADROOM)."""
        self.pay((granted - remaining) * self.costs.regular_op_cost)
