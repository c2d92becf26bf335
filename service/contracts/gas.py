"""Gas: the costs a block's protocol config sets, and the counter a view call burns them on.

Facts from nearcore: the view's limit is the node's `max_gas_burnt_view`, by default the
protocol's `limit_config.max_gas_burnt` (runtime/runtime/src/state_viewer/mod.rs,
`TrieViewer::call_function`, `max_gas_burnt_view.unwrap_or(...)`); a view's prepaid gas is that
limit, so burning past it is `GasLimitExceeded` (near-vm-runner logic/gas_counter.rs
`GasCounter::process_gas_limit`: over `max_gas_burnt` is GasLimitExceeded). Wasm instructions
cost what nearcore's finite-wasm instrumentation charges (instrument.py); loading a contract
costs `contract_loading_base` plus `contract_loading_bytes` per code byte (logic.rs `before_loading_executable` /
`after_loading_executable`); host functions charge the `ext_costs` named in logic.rs.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

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
    # the bulk memory and table operations' prices (wasm_config; absent before protocol 84)
    linear_op_base_cost: int = 0
    linear_op_unit_cost: int = 0
    max_stack_height: int = 0  # limit_config's, in finite-wasm's bytes (from protocol 62)

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
            linear_op_base_cost=int(wasm.get("linear_op_base_cost") or 0),
            linear_op_unit_cost=int(wasm.get("linear_op_unit_cost") or 0),
            # finite-wasm's stack budget in bytes, from protocol 62 (62.yaml: NearVm, then Wasmtime);
            # before it the limit counted parity-wasm's stack slots, which is not metered here
            max_stack_height=int(limits.get("max_stack_height") or 0)
            if wasm.get("vm_kind", "Wasmtime") in ("NearVm", "Wasmtime")
            else 0,
        )

    @cached_property
    def module_variant(self) -> int:
        """A number naming what a compiled module depends on beside its code (the prepare rules
        and the flags, which say which host functions link): equal for equal costs, so the
        engine's cache key hashes a number, not the rules' fields, at each call."""
        return _variant(self.prepare_rules, self.flags)

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
            regular_op_cost=self.regular_op_cost,
            linear_op_base_cost=self.linear_op_base_cost,
            linear_op_unit_cost=self.linear_op_unit_cost,
            max_stack_height=self.max_stack_height,
        )


# a number per (prepare rules, flags) seen: a handful per process, one per protocol variant
_VARIANTS: dict[tuple[PrepareRules, frozenset[str]], int] = {}
_VARIANTS_LOCK = threading.Lock()


def _variant(rules: PrepareRules, flags: frozenset[str]) -> int:
    with _VARIANTS_LOCK:
        return _VARIANTS.setdefault((rules, flags), len(_VARIANTS))


def _optional(limits: Mapping[str, Any], name: str) -> int | None:
    value = limits.get(name)
    return None if value is None else int(value)


class GasExhausted(Exception):
    """Burning past the limit; the counter's `exhausted_text` says which (GasLimitExceeded or
    GasExceeded)."""


class SliceExhausted(Exception):
    """A sliced run (see GasCounter) reached its slice: its answer is not known yet. A view has
    no side effects, so the same call run again with the whole limit gives the answer."""


GAS_MAX = (1 << 64) - 1  # a view's prepaid gas (gas_counter.rs `GasCounter::new`: Gas::MAX when is_view)


class GasCounter:
    """nearcore's gas counter (near-vm-runner logic/gas_counter.rs `GasCounter`): gas burnt, gas
    used by promises, the limit a charge may reach (`min(max_gas_burnt, prepaid - promises)`),
    and, for a call, the profile of what each ext cost and action charged.

    A charge past the limit (`burn_gas` -> `process_gas_limit`) leaves `burnt` at
    `min(new burnt, prepaid, max_gas_burnt)`, the promises' gas at what the prepaid gas still
    covers, and raises GasExhausted; its text is GasLimitExceeded when the new burnt gas is past
    `max_gas_burnt`, else GasExceeded. Wasm instructions are charged by the module itself
    (instrument.py: a global holding the gas left), settled here at each host call and at the end.

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
        profiled: bool = False,
    ) -> None:
        self.costs = costs
        self.max_gas_burnt = costs.view_gas_limit
        self.is_view = prepaid_gas is None
        self.prepaid = GAS_MAX if prepaid_gas is None else prepaid_gas
        self.limit = min(self.max_gas_burnt, self.prepaid)
        self.promises_gas = 0
        self.exhausted_text = errors.gas_limit_exceeded()
        self.sliced = slice_gas is not None
        self._slice = slice_gas
        self._host_calls_left = -1 if slice_host_calls is None else slice_host_calls
        # where charges end (the limit, or the slice before it): the instrumented module is handed
        # the gas up to it (engine.py)
        self.stop = self.limit if slice_gas is None else min(slice_gas, self.limit)
        self._ext = costs.ext
        self.burnt = 0
        # gas by ext cost and by action (nearcore's ProfileDataV3), for a call's outcome
        self.profile: dict[str, int] | None = {} if profiled else None
        self.action_profile: dict[str, int] = {}

    @property
    def used(self) -> int:
        """Gas burnt plus gas prepaid to promises (gas_counter.rs `used_gas`)."""
        return self.burnt + self.promises_gas

    def pay(self, gas: int) -> None:
        """Burn `gas` (gas_counter.rs `burn_gas`), no profile entry: a view's merged charges."""
        new = self.burnt + gas
        if new > self.stop:
            if self.sliced:
                raise SliceExhausted
            self._exceeded(new, new + self.promises_gas)
        self.burnt = new

    def _exceeded(self, new_burnt: int, new_used: int) -> None:
        # gas_counter.rs `process_gas_limit`
        self.burnt = min(new_burnt, self.prepaid, self.max_gas_burnt)
        self.promises_gas = max(min(self.prepaid, new_used) - self.burnt, 0)
        self.exhausted_text = errors.gas_limit_exceeded() if new_burnt > self.max_gas_burnt else errors.gas_exceeded()
        raise GasExhausted

    def pay_named(self, name: str, gas: int) -> None:
        """Burn `gas` for the ext cost `name`: the profile gets what was burnt, even when the
        charge ran past the limit (gas_counter.rs `pay_base` / `pay_per`)."""
        profile = self.profile
        if profile is None:
            self.pay(gas)
            return
        before = self.burnt
        try:
            self.pay(gas)
        finally:
            profile[name] = profile.get(name, 0) + self.burnt - before

    def pay_ext(self, name: str, times: int = 1) -> None:
        self.pay_named(name, self._ext.get(name, 0) * times)

    def deduct(self, burn: int, use: int, action: str) -> None:
        """An action's gas: `burn` burnt, `use` reserved (`use - burn` goes to promises), the
        profile's `action` entry getting what was burnt (gas_counter.rs `deduct_gas`,
        `pay_action_accumulated`)."""
        before = self.burnt
        try:
            new_promises = self.promises_gas + (use - burn)
            new_burnt = self.burnt + burn
            new_used = new_burnt + new_promises
            if new_burnt > self.max_gas_burnt or new_used > self.prepaid:
                self._exceeded(new_burnt, new_used)
            if use != burn and not self.is_view:
                self.limit = min(self.max_gas_burnt, self.prepaid - new_promises)
                self.stop = self.limit if self._slice is None else min(self._slice, self.limit)
            self.burnt = new_burnt
            self.promises_gas = new_promises
        finally:
            self.action_profile[action] = self.action_profile.get(action, 0) + self.burnt - before

    def enter_host(self, granted: int, remaining: int) -> None:
        """A host call begins: it counts against the slice's host calls, then the instructions
        run since `granted` gas was handed to the module are charged (as settle), in one call."""
        if self._host_calls_left == 0:
            raise SliceExhausted
        self._host_calls_left -= 1
        self.pay(granted - remaining)

    def settle(self, granted: int, remaining: int) -> None:
        """Charge the instructions run since `granted` gas was handed to the module, `remaining`
        left in its global; a global below zero is a group's charge that did not fit
        (instrument.py), which ends the run past the limit here."""
        self.pay(granted - remaining)
