"""Running a view method on Wasmtime: one engine and one linker for the process, compiled
modules cached per code hash (in memory, and on disk across restarts where a `CompiledCache` is
given: compiled_cache.py), a fresh store per call.

The order of checks is nearcore's (runtime/near-vm-runner/src/wasmtime_runner.rs,
`WasmtimeVM::with_compiled_and_loaded` and `prepare`, and the gas counter's
`before_loading_executable` / `after_loading_executable`): an empty method name
(MethodEmptyName) and the loading base cost; preparation and compilation (CompilationError);
the loading cost per code byte; linking, done once per module with the compilation
(`Linker::instantiate_pre`: LinkError); the export (MethodNotFound when absent or not a function,
MethodInvalidSignature when it takes or returns values); then the start function, if the contract
has one, and the method, whose traps map as the runner's `IntoVMError for anyhow::Error` maps
them. Wasm instructions pay what nearcore's instrumentation charges them (instrument.py): the
module takes each group's gas from a global holding the gas left, set before the code runs and
after each host call, read at each host call and at the end (wasmtime_runner/mod.rs, the store's
`call_hook`), so a loop ends at the view's gas limit (GasLimitExceeded) where nearcore's does.
A call given an `Interrupt` (interrupt.py) also ends when it says so (a wall-clock deadline, its
client gone, the server stopping): the engine runs with epoch interruption, and such a call's
store asks the interrupt at each epoch tick, raising ExecutionInterrupted instead of an answer.
"""

from __future__ import annotations

import functools
import logging
import mmap
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import wasmtime

from nearrpc.contracts import errors, wasm_api
from nearrpc.contracts.budget import EXECUTION_MEMORY_MB, MemoryBudget, return_large_buffers
from nearrpc.contracts.compiled_cache import CompiledCache, executor_fingerprint
from nearrpc.contracts.errors import HostFunctionUnavailable, ViewCallError
from nearrpc.contracts.gas import GasCosts, GasCounter, GasExhausted
from nearrpc.contracts.host import (
    HOST_FUNCTIONS,
    Abort,
    HostFunction,
    StateReader,
    ViewContext,
    ViewLogic,
    available_host_functions,
)
from nearrpc.contracts.instrument import GAS_EXPORT, STACK_EXPORT, START_EXPORT, GasPrices, instrument
from nearrpc.contracts.interrupt import EpochTicker, ExecutionInterrupted, Interrupt
from nearrpc.contracts.prepare import MEMORY_EXPORT, ContractTooLarge, PrepareFailure, PrepareRules, Section, prepare
from nearrpc.contracts.wasm_api import LinearMemory, Store

log = logging.getLogger("nearrpc.contracts")

MODULE_CACHE_SIZE = 64  # compiled modules kept in memory at most
# and their size at most: a compiled module takes about its wasm's size in memory (measured: a
# 22.8 MB module, +22 MB RSS), so an entry counts its code's length (`serve --module-cache-mb`)
MODULE_CACHE_MB = 256
WASM_STACK_BYTES = 1 << 20
# the most gas the module's global (an i64) is handed at once: a node's `max_gas_burnt_view` may
# be larger; the rest is handed over at the next host call
GLOBAL_MAX = (1 << 63) - 1

# wasmtime_runner.rs `trap_to_error`: the engine's trap codes as nearcore names them
_TRAPS = {
    wasmtime.TrapCode.MEMORY_OUT_OF_BOUNDS: "MemoryOutOfBounds",
    wasmtime.TrapCode.TABLE_OUT_OF_BOUNDS: "MemoryOutOfBounds",
    wasmtime.TrapCode.INDIRECT_CALL_TO_NULL: "IndirectCallToNull",
    wasmtime.TrapCode.BAD_SIGNATURE: "IncorrectCallIndirectSignature",
    wasmtime.TrapCode.INTEGER_OVERFLOW: "IllegalArithmetic",
    wasmtime.TrapCode.INTEGER_DIVISION_BY_ZERO: "IllegalArithmetic",
    wasmtime.TrapCode.BAD_CONVERSION_TO_INTEGER: "IllegalArithmetic",
    wasmtime.TrapCode.UNREACHABLE: "Unreachable",
}
# nearcore meters the wasm stack itself (finite-wasm, `max_stack_height`) and answers running out
# of it as MemoryAccessViolation (logic.rs `finite_wasm_stack_exhausted`); so does the module here
# (instrument.py), and the engine's own stack limit, should it come first, answers the same
_STACK_EXHAUSTED = errors.memory_access_violation()


@dataclass(frozen=True)
class ViewOutcome:
    """A view call that returned: its `result` bytes (empty when it returned nothing), its logs
    and the gas it burnt."""

    result: bytes
    logs: list[str]
    burnt_gas: int


@dataclass(frozen=True)
class _Compiled:
    pre: wasmtime.InstancePre | None  # None when linking failed
    link_error: str | None
    # export name -> (is a function, takes or returns nothing)
    exports: dict[str, tuple[bool, bool]]
    pre_address: int = 0  # the C object of `pre`, which keeps it alive
    start: bool = False  # the contract has a start function (run as the export START_EXPORT)
    engine_address: int = 0  # the C object of the engine the module was compiled for
    pooled: bool = False  # that engine allocates from its pool (a call takes one of its slots)


@dataclass(frozen=True)
class _Linked:
    """An engine and its linker of the host functions."""

    engine: wasmtime.Engine
    linker: wasmtime.Linker
    pooled: bool
    address: int  # the engine's C object


class _Crossing:
    """What a host call needs of the call its thread runs (one object, one thread-local lookup
    per host call): the logic, the gas counter, the gas global, the memory and the gas handed to
    the module."""

    __slots__ = ("gas", "granted", "logic", "memory", "store")

    def __init__(self, logic: ViewLogic, memory: LinearMemory, store: Store) -> None:
        self.logic = logic
        self.gas = logic.gas
        self.memory = memory
        self.store = store  # the call's store, whose gas global it reads and sets
        self.granted = 0

    def grant(self) -> None:
        """Hand the module the gas left up to where charges stop (a host call does the same
        inline; wasmtime_runner/mod.rs: the global is set on `CallingWasm` / `ReturningFromHost`)."""
        gas = self.gas
        self.granted = min(gas.stop - gas.burnt, GLOBAL_MAX)
        self.store.set(self.granted)


class _CallState(threading.local):
    crossing: _Crossing | None = None
    interrupt: Interrupt | None = None


_CALL = _CallState()
# the epoch deadline of a store whose call has no interrupt (a sliced run on the event loop,
# bounded by its slice): ticks at TICK_SECONDS never reach it
_NO_EPOCH_DEADLINE = 1 << 40


def _should_stop() -> bool:
    interrupt = _CALL.interrupt
    return interrupt is not None and interrupt.reason() is not None


# one callback for every store of the process: it asks the interrupt of the call its thread runs
_EPOCH_CALLBACK = wasm_api.epoch_callback(_should_stop)
_EPOCH_CALLBACK_ADDRESS = wasm_api.address(_EPOCH_CALLBACK)


# The engine's settings, as data: they make the compiled-module cache's key too (compiled_cache.py).
ENGINE_SETTINGS: dict[str, object] = {
    "consume_fuel": False,  # gas is the module's own instrumentation (instrument.py)
    "epoch_interruption": True,  # a call's Interrupt checked at each epoch tick (interrupt.py)
    "max_wasm_stack": WASM_STACK_BYTES,
    # the features nearcore's wasmtime config leaves off (wasmtime_runner.rs `default_wasmtime_config`)
    "wasm_threads": False,
    "wasm_simd": False,
    "wasm_relaxed_simd": False,
    "wasm_multi_memory": False,
    "wasm_memory64": False,
    "wasm_tail_call": False,
    "wasm_gc": False,
    "wasm_function_references": False,
    "wasm_exceptions": False,
    "wasm_component_model": False,
    "parallel_compilation": False,  # one request compiles on its own worker thread
    # nearcore compiles without optimisation too (wasmtime_runner/mod.rs: OptLevel::None, and a
    # single-pass register allocator with Winch, which this build lacks). Measured here on a
    # 250 kB near-sdk contract: about half the compile time of "speed" for code some 10-40% slower
    # on a tight loop; the single-pass allocator compiles another third faster but its code ran
    # about twice as slow and is 1.75 times larger, so the default allocator stays.
    "cranelift_opt_level": "none",
    # a linear memory grows inside its reservation (4 GiB, past wasm32's largest) rather than
    # being moved: its address is read once per call (wasm_api.LinearMemory), growing fails no
    # sooner, and the compiled code may keep the address in a register
    "memory_may_move": False,
}


# Calls run on the pooled engine at once, at most (ViewEngine._slots): a call in flight holds one
# instance, one memory and at most one table of the pool. The server runs at most one call on its
# event loop and one per view worker thread (methods/view_calls.py: 2 fast, 2 slow), plus the
# sandbox's; a call past the slots waits for one rather than fail.
POOL_SLOTS = 32
# The pool's bounds. Its slots are reserved when the engine is made (virtual address space: a
# memory slot is the 4 GiB reservation, so a memory grows inside it as it does without the pool)
# and reused: a call no longer maps and unmaps its memory, which cost about half its time in the
# kernel. A module past these bounds (a table longer than nearcore's largest, more tables, an
# instance larger) is refused by the pool when compiled: it runs on an engine that allocates per
# call (ViewEngine._spare), so its answer (the store's limits at instantiation) is unchanged.
POOL_BOUNDS: dict[str, int] = {
    "max_memories_per_module": 1,  # prepare.py gives every contract one memory
    "max_tables_per_module": 1,  # nearcore's max_tables_per_contract
    "table_elements": 10_000,  # nearcore's max_elements_per_contract_table
    "max_memory_size": 1 << 32,  # the store's limiter bounds growth, as without the pool
    # the component model is off: none of its slots
    "total_component_instances": 0,
    # the first bytes of a memory (where a small contract keeps all it touches) are zeroed in
    # place when a call ends rather than handed back to the kernel and faulted in again. Zeroing
    # costs ~10 us a MiB here; the sample token's fresh balance (it touches its first two 64 KiB
    # pages) took 22 us in process with none kept, 18 with 64 KiB, 15 with 128 KiB, 25 with
    # 1 MiB; a near-sdk contract (its stack ends at 1 MiB) the same with 64 or 128 KiB
    "linear_memory_keep_resident": 128 << 10,
}


def _pool_bytes(slots: int) -> int:
    """The address space a pool of `slots` reserves, about: each memory's 4 GiB and guard pages,
    and room for the instances and tables."""
    return slots * ((1 << 32) + (64 << 20)) + (1 << 30)


def _address_space_for(slots: int) -> bool:
    """Whether the process may reserve a pool of `slots` (an inaccessible mapping of its size,
    made and let go; a capped address space refuses it)."""
    try:
        probe = mmap.mmap(
            -1, _pool_bytes(slots), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _NO_RESERVE, prot=0
        )  # prot 0: PROT_NONE, never touched
    except (OSError, OverflowError, ValueError):
        return False
    probe.close()
    return True


_NO_RESERVE = getattr(mmap, "MAP_NORESERVE", 0)


def _pool_limits(slots: int) -> dict[str, int]:
    return {"total_core_instances": slots, "total_memories": slots, "total_tables": slots, **POOL_BOUNDS}


def _config(reftypes_bulk_memory: bool = True, pool_slots: int | None = None) -> wasmtime.Config:
    config = wasmtime.Config()
    for name, value in ENGINE_SETTINGS.items():
        setattr(config, name, value)
    # protocols before 84 leave bulk memory and reference types off (features.rs, `reftypes_bulk_memory`):
    # an engine of theirs only validates code, it compiles none
    config.wasm_bulk_memory = reftypes_bulk_memory
    config.wasm_reference_types = reftypes_bulk_memory
    wasm_api.leave_component_async_off(config)
    if pool_slots is not None:
        wasm_api.use_pooling(config, _pool_limits(pool_slots))
    return config


def _val(kind: str) -> wasmtime.ValType:
    return wasmtime.ValType.i64() if kind == "i64" else wasmtime.ValType.i32()


def _host_call(fn: HostFunction) -> Callable[..., tuple[int | None, int]]:
    """The function's crossing, given the call's crossing, the caller and the gas left in the
    module's global: the instructions run since the last host call charged (and the call counted
    against a slice), the function run; it answers the function's result and the gas left to hand
    back to the module (wasmtime_runner/mod.rs `call_hook`: `CallingHost` burns what the global
    says was spent, `ReturningFromHost` sets it to the gas left). A failure ends the call. Both
    crossings (wasm_api's C one and its ctypes one) run it."""
    name, unavailable = fn.name, fn.unavailable
    method = fn.method
    if method is None or unavailable:
        method = _failing(fn)

    def call(crossing: _Crossing, caller: int, remaining: int, *args: int) -> tuple[int | None, int]:
        gas, logic = crossing.gas, crossing.logic
        try:
            gas.enter_host(crossing.granted, remaining)
            # the function's own charges may end the call at the limit too (host.py charges
            # without a frame of its own where it is called most). A call's logic runs some
            # functions a view may not (contracts/call.py); one not implemented here stays so
            overrides = logic.overrides
            override = overrides.get(name) if overrides and not unavailable else None
            result = (method if override is None else override)(logic, *args)
        except GasExhausted:
            raise Abort(gas.exhausted_text) from None
        # grant() without its frames
        crossing.granted = granted = min(gas.stop - gas.burnt, GLOBAL_MAX)
        return result, granted

    return call


def _host_callback(fn: HostFunction, native: bool) -> Any:
    """The function's callback for the linker: the C crossing (which reads and sets the gas
    global itself, for the call `wasm_api.enter_crossing` names), or the ctypes one."""
    call = _host_call(fn)
    if native:
        return wasm_api.native_host(call, fn.params, fn.results)

    def crossed(caller: int, *args: int) -> int | None:
        crossing = _CALL.crossing
        assert crossing is not None, "set before the instance is made"
        store = crossing.store
        result, granted = call(crossing, caller, store.get(), *args)
        store.set(granted)
        return result

    return wasm_api.host_callback(crossed, fn.params, fn.results)


def _failing(fn: HostFunction) -> Callable[..., None]:
    """A function not implemented here (HostFunctionUnavailable) or failing at once in a view
    (its costs paid first, then its failure)."""

    def fail(logic: ViewLogic, *_args: int) -> None:
        if fn.unavailable:
            raise HostFunctionUnavailable(fn.name)
        for cost in fn.paid:
            logic.pay(cost)
        raise Abort(fn.failure or "")

    return fail


class ViewEngine:
    """The engine, its linker of host functions and the module cache; thread-safe."""

    def __init__(
        self,
        cache_size: int = MODULE_CACHE_SIZE,
        compiled_cache: CompiledCache | None = None,
        cache_bytes: int = MODULE_CACHE_MB << 20,
        pool_slots: int | None = POOL_SLOTS,
        native: bool = wasm_api.NATIVE,
    ) -> None:
        """`pool_slots`: calls run at once from the pooled engine (None: no pool, every call
        allocates its own instance). `native`: host calls cross through the C extension
        (wasm_api.NATIVE: where it is built), and each call's store is made, instantiated and
        called there, else both through ctypes."""
        if native and not wasm_api.NATIVE:
            raise ValueError("the native host-call crossing is not built")
        self.disk = compiled_cache  # compiled modules kept across restarts (None: in memory only)
        self._fingerprints: dict[bool, bytes] = {}
        self.native = native
        self._store_type = wasm_api.store_type(native)
        # the host functions' callbacks, kept alive as long as the linkers are
        self._callbacks = [(fn, _host_callback(fn, native)) for fn in HOST_FUNCTIONS]
        if pool_slots is not None and not _address_space_for(pool_slots):
            # Wasmtime aborts the process when its pool cannot be mapped: asked first
            log.warning("contract calls allocate per call: the address space cannot hold Wasmtime's pool of "
                        "%d memories (%d GiB; see `ulimit -v`)", pool_slots, _pool_bytes(pool_slots) >> 30)  # fmt: skip
            pool_slots = None
        self._main = self._linked(pool_slots)
        self._spare: _Linked | None = None  # for the modules the pool refuses, made at the first of them
        # the pool's free slots as tokens: taking one waits while none is free (SimpleQueue's get
        # and put are C, a fraction of a semaphore's Python-level cost per call)
        self._slots: queue.SimpleQueue[None] = queue.SimpleQueue()
        for _ in range(pool_slots or 1):
            self._slots.put(None)
        self.engine = self._main.engine
        # validates code for protocols whose wasm features are fewer (compiles nothing)
        self._older = wasmtime.Engine(_config(reftypes_bulk_memory=False))
        self._cache: OrderedDict[tuple[str, int], tuple[_Compiled | str, int]] = OrderedDict()
        self._cache_size = cache_size
        self.cache_bytes = cache_bytes  # the bound of `cached_bytes`
        self.cached_bytes = 0  # the sizes of the entries kept
        # the bytes of registers and returns that calls run with an interrupt (on workers) hold
        # at once, at most (None: unbounded); a call on the event loop is bounded by its slice
        self.budget: MemoryBudget | None = MemoryBudget(EXECUTION_MEMORY_MB << 20)
        self._lock = threading.Lock()
        self.compilations = 0  # modules compiled so far (a cache hit compiles none)
        # the engines the ticker advances (the spare joins when made); a list, not a method of
        # this object, so the ticker's thread holds no cycle that keeps a dropped engine's pool
        self._engines = [self._main.engine]
        self.ticker = EpochTicker(functools.partial(_advance_epochs, self._engines))

    def _linked(self, pool_slots: int | None) -> _Linked:
        engine = wasmtime.Engine(_config(pool_slots=pool_slots))
        linker = wasmtime.Linker(engine)
        for fn, callback in self._callbacks:
            # a function type is bound to the first engine it is used with: one per linker
            ty = wasmtime.FuncType([_val(kind) for kind in fn.params], [_val(kind) for kind in fn.results])
            wasm_api.define(linker, "env", fn.name, ty, callback)
        return _Linked(engine, linker, pool_slots is not None, wasm_api.address(engine.ptr()))

    def _spare_engine(self) -> _Linked:
        with self._lock:
            if self._spare is None:
                self._spare = self._linked(None)
                self._engines.append(self._spare.engine)
            return self._spare

    def disk_key(self, disk: CompiledCache, code_hash: str, rules: PrepareRules, pooled: bool | None = None) -> str:
        """The disk cache's key of a module: the code, the engine and executor (the main engine's
        unless `pooled` says which), and the prepare rules (a module kept passed the prepare step
        under them alone)."""
        pooled = self._main.pooled if pooled is None else pooled
        fingerprint = self._fingerprints.get(pooled)
        if fingerprint is None:
            # a module's code depends on the pool's bounds, not on its slot count
            settings = {**ENGINE_SETTINGS, "pool": POOL_BOUNDS} if pooled else ENGINE_SETTINGS
            fingerprint = self._fingerprints[pooled] = executor_fingerprint(settings)
        return disk.key(code_hash, rules.initial_pages, rules.max_pages, fingerprint + repr(rules).encode())

    @staticmethod
    def _instrumented(rules: PrepareRules) -> Callable[[list[Section]], list[Section]]:
        prices = GasPrices(
            rules.regular_op_cost, rules.linear_op_base_cost, rules.linear_op_unit_cost, rules.max_stack_height
        )
        return lambda parts: instrument(parts, prices)

    def _module(self, code: bytes, code_hash: str, rules: PrepareRules) -> tuple[wasmtime.Module, _Linked] | str:
        """The module and the engine it is for, loaded from the disk cache, else prepared and
        compiled (and kept there), or the CompilationError text nearcore would answer."""
        disk = self.disk
        kept = disk is not None and (rules.max_contract_size is None or len(code) <= rules.max_contract_size)
        linked = self._main
        loaded = self._load(code_hash, rules, linked) if kept else None
        if loaded is not None:
            return loaded, linked
        try:
            # nearcore's prepare step first (limits, imports, memory), then the engine's validation
            # with the protocol's features (instrumenting code that is not valid fails as
            # Deserialization, the validator's answer too)
            prepared = prepare(code, rules, self._instrumented(rules))
            wasmtime.Module.validate(linked.engine if rules.reftypes_bulk_memory else self._older, code)
        except ContractTooLarge as too_large:
            return errors.contract_size_exceeded(too_large.size, too_large.limit)
        except PrepareFailure as failure:
            return errors.prepare_error(str(failure))
        except wasmtime.WasmtimeError:
            return errors.prepare_error("Deserialization")
        try:
            module = wasmtime.Module(linked.engine, prepared)
        except wasmtime.WasmtimeError:
            if not linked.pooled:
                return errors.prepare_error("Deserialization")
            # valid code the pool refuses (past POOL_BOUNDS): the engine without a pool
            linked = self._spare_engine()
            loaded = self._load(code_hash, rules, linked) if kept else None
            if loaded is not None:
                return loaded, linked
            try:
                module = wasmtime.Module(linked.engine, prepared)
            except wasmtime.WasmtimeError:
                return errors.prepare_error("Deserialization")
        self.compilations += 1
        if disk is not None and kept:
            disk.store(self.disk_key(disk, code_hash, rules, linked.pooled), module)
        return module, linked

    def _load(self, code_hash: str, rules: PrepareRules, linked: _Linked) -> wasmtime.Module | None:
        disk = self.disk
        assert disk is not None, "only with a disk cache"
        return disk.load(linked.engine, self.disk_key(disk, code_hash, rules, linked.pooled))

    def _compile(self, code: bytes, code_hash: str, costs: GasCosts) -> _Compiled | str:
        """The module ready to instantiate, or the CompilationError text nearcore would answer."""
        found = self._module(code, code_hash, costs.prepare_rules)
        if isinstance(found, str):
            return found
        module, linked = found
        exports: dict[str, tuple[bool, bool]] = {}
        start = False
        for export in module.exports:
            ty = export.type
            if export.name == START_EXPORT:
                start = True
            elif export.name in (GAS_EXPORT, STACK_EXPORT):
                pass
            elif isinstance(ty, wasmtime.FuncType):
                exports[export.name] = (True, not ty.params and not ty.results)
            elif export.name != MEMORY_EXPORT:
                exports[export.name] = (False, False)
        # a host function the block's protocol does not offer yet is not linked there: nearcore's
        # linker (imports.rs `for_each_available_import`) does not define it, an unknown import
        available = available_host_functions(costs.flags)
        if any(imported.module == "env" and (imported.name or "") not in available for imported in module.imports):
            return _Compiled(None, errors.link_error("unknown or invalid import"), exports)
        try:
            pre = linked.linker.instantiate_pre(module)
            return _Compiled(pre, None, exports, wasm_api.address(pre.ptr()), start, linked.address, linked.pooled)
        except wasmtime.WasmtimeError as failure:
            return _Compiled(None, errors.link_error(_link_message(str(failure))), exports)

    @staticmethod
    def _key(code_hash: str, costs: GasCosts) -> tuple[str, int]:
        # what the module's preparation depends on: the protocol's limits, features and host
        # functions, as one number per such variant (hashing the rules' fields cost ~0.7 us a call)
        return (code_hash, costs.module_variant)

    def has_compiled(self, code_hash: str, costs: GasCosts) -> bool:
        """Whether the module for `code_hash` is cached (a run would not compile it)."""
        return self._key(code_hash, costs) in self._cache  # one C-level lookup: no lock needed

    def compiled(self, code: bytes, code_hash: str, costs: GasCosts) -> _Compiled | str:
        key = self._key(code_hash, costs)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit[0]
        entry = self._compile(code, code_hash, costs)
        # a refusal keeps its text only; a module about its code's size
        size = len(entry) if isinstance(entry, str) else len(code)
        with self._lock:
            replaced = self._cache.pop(key, None)
            if replaced is not None:
                self.cached_bytes -= replaced[1]
            if size <= self.cache_bytes:  # one larger than the whole cache is not kept
                self._cache[key] = (entry, size)
                self.cached_bytes += size
            while len(self._cache) > self._cache_size or self.cached_bytes > self.cache_bytes:
                self.cached_bytes -= self._cache.popitem(last=False)[1][1]
        return entry

    def run_view(
        self,
        code: bytes,
        code_hash: str,
        method_name: str,
        args: bytes,
        context: ViewContext,
        state: StateReader,
        costs: GasCosts,
        slice_gas: int | None = None,
        slice_host_calls: int | None = None,
        interrupt: Interrupt | None = None,
    ) -> ViewOutcome:
        """The call's outcome. With `slice_gas` (and `slice_host_calls`), a bounded attempt:
        SliceExhausted when the run needs more (see GasCounter), to be run again without them.
        With `interrupt`, ExecutionInterrupted as soon as it says stop (checked before and after
        compiling, and at each epoch tick while the contract runs)."""
        gas = GasCounter(costs, slice_gas, slice_host_calls)
        return self.execute(
            code,
            code_hash,
            method_name,
            gas,
            lambda memory: ViewLogic(context, args, state, gas, memory),
            interrupt,
        )

    def execute(
        self,
        code: bytes,
        code_hash: str,
        method_name: str,
        gas: GasCounter,
        make_logic: Callable[[LinearMemory], ViewLogic],
        interrupt: Interrupt | None = None,
    ) -> ViewOutcome:
        """Run `method_name` with the host functions of the logic `make_logic` builds over the
        call's memory (a view's, or a call's: call.py), burning `gas`."""
        costs = gas.costs
        if interrupt is not None:
            interrupt.check()  # e.g. a call that waited for a worker past its deadline
        if not method_name:
            raise ViewCallError(errors.method_empty_name())
        # the loading fee: before compiling with `fix_contract_loading_cost`, after it (and only
        # when it compiled) without; either way its shortfall is GasExceeded (gas_counter.rs
        # `before_loading_executable` / `after_loading_executable`, `add_contract_loading_fee`)
        if costs.fix_contract_loading_cost:
            _pay_loading(gas, len(code))
        compiled = self.compiled(code, code_hash, costs)
        if interrupt is not None:
            interrupt.check()
        if isinstance(compiled, str):
            raise ViewCallError(compiled)
        if not costs.fix_contract_loading_cost:
            _pay_loading(gas, len(code))
        if compiled.pre is None:
            raise ViewCallError(compiled.link_error or errors.link_error(""))
        export = compiled.exports.get(method_name)
        if export is None or not export[0]:
            raise ViewCallError(errors.method_not_found())
        if not export[1]:
            raise ViewCallError(errors.method_invalid_signature())
        if interrupt is None:
            return self._call(compiled, method_name, gas, make_logic, None)
        self.ticker.begin()
        try:
            interrupt.arm()  # its slice counts from here: compiling is not running
            return self._call(compiled, method_name, gas, make_logic, interrupt)
        finally:
            self.ticker.end()

    def _call(
        self,
        compiled: _Compiled,
        method_name: str,
        gas: GasCounter,
        make_logic: Callable[[LinearMemory], ViewLogic],
        interrupt: Interrupt | None,
    ) -> ViewOutcome:
        slots = self._slots if compiled.pooled else None
        if slots is not None:
            slots.get()
        try:
            for pause in _POOL_BUSY_PAUSES:
                try:
                    return self._call_once(compiled, method_name, gas, make_logic, interrupt)
                except _PoolBusy:
                    time.sleep(pause)
            return self._call_once(compiled, method_name, gas, make_logic, interrupt, last=True)
        finally:
            if slots is not None:
                slots.put(None)

    def _call_once(
        self,
        compiled: _Compiled,
        method_name: str,
        gas: GasCounter,
        make_logic: Callable[[LinearMemory], ViewLogic],
        interrupt: Interrupt | None,
        last: bool = False,
    ) -> ViewOutcome:
        # the store's limits nearcore's runner sets (wasmtime_runner.rs `Ctx::new`): its memory,
        # its tables' elements and tables (and one instance, one memory); a call with an
        # interrupt asks it at each epoch tick, one without runs through the ticks
        limits = gas.costs
        store = self._store_type(
            compiled.engine_address,
            limits.max_memory_pages * 65536,
            limits.max_elements_per_contract_table,
            limits.max_tables_per_contract,
            _NO_EPOCH_DEADLINE if interrupt is None else 1,
            0 if interrupt is None else _EPOCH_CALLBACK_ADDRESS,
        )
        try:
            return self._run(store, compiled, method_name, gas, make_logic, interrupt, last)
        finally:
            store.delete()

    def _run(
        self,
        store: Store,
        compiled: _Compiled,
        method_name: str,
        gas: GasCounter,
        make_logic: Callable[[LinearMemory], ViewLogic],
        interrupt: Interrupt | None,
        last: bool = True,
    ) -> ViewOutcome:
        """The call in `store`; with `last` false, _PoolBusy where the pool had no slot free."""
        linear_memory = LinearMemory()
        logic = make_logic(linear_memory)
        if interrupt is not None:
            logic.budget = self.budget
        crossing = _Crossing(logic, linear_memory, store)
        previous = (_CALL.crossing, _CALL.interrupt)
        _CALL.crossing, _CALL.interrupt = crossing, interrupt
        try:
            try:
                # no contract code runs here: the start function is an export (instrument.py)
                # (the exports checked at compile time)
                store.instantiate(
                    compiled.pre_address,
                    MEMORY_EXPORT,
                    GAS_EXPORT,
                    method_name,
                    START_EXPORT if compiled.start else None,
                )
            except wasmtime.Trap as trap:  # e.g. a data segment past the memory
                raise ViewCallError(_trap_name(trap), logic.logs) from None
            except wasmtime.WasmtimeError as failure:  # e.g. a table past the store's limits
                if not last and _POOL_BUSY in str(failure):
                    raise _PoolBusy from None
                raise ViewCallError(errors.link_error(_link_message(str(failure)))) from None
            linear_memory.bind(store)
            crossing.grant()
            if self.native:
                wasm_api.enter_crossing(crossing, store)
            # the start function first, then the method, in one store (wasmtime_runner/mod.rs `run`)
            for start in _START_THEN_METHOD if compiled.start else _METHOD:
                try:
                    store.call(start)
                except Abort as abort:
                    raise ViewCallError(abort.debug, logic.logs) from None
                except (wasmtime.Trap, wasmtime.WasmtimeError) as trap:
                    _raise_if_interrupted(interrupt)
                    if not isinstance(trap, wasmtime.Trap):
                        raise
                    text = _trap_text(trap, gas, crossing.granted, store)
                    raise ViewCallError(text, logic.logs) from None
            try:
                gas.settle(crossing.granted, store.get())
            except GasExhausted:
                raise ViewCallError(gas.exhausted_text, logic.logs) from None
            return ViewOutcome(logic.returned or b"", list(logic.logs), gas.burnt)
        finally:
            if logic.budget is not None and logic.held:
                logic.budget.give(logic.held)  # what it held goes with it (the answer is its caller's now)
            # a failure's traceback keeps this frame, and the logic with it, until the cyclic
            # collector runs: the registers (up to 1 GiB a call) are let go now, not then
            logic.registers.clear()
            _CALL.crossing, _CALL.interrupt = previous
            if self.native:
                _restore_native(previous[0])


# what a call runs: the start function (True), then the method (False)
_START_THEN_METHOD = (True, False)
_METHOD = (False,)


def _restore_native(previous: _Crossing | None) -> None:
    """The C crossing back to the call this thread ran before (none, or one through ctypes: host
    calls fail)."""
    if previous is not None and previous.store.bound and not isinstance(previous.store, wasm_api.CallStore):
        wasm_api.enter_crossing(previous, previous.store)
    else:
        wasm_api.leave_crossing()


class _PoolBusy(Exception):
    """The pool had no slot free for an instantiation that holds one of ViewEngine._slots' tokens:
    a module being dropped (an entry evicted from the cache, or the copy a concurrent first compile
    did not keep) holds its warm slots while Wasmtime clears them (`purge_module`), for
    microseconds. Tried again after a pause."""


# Wasmtime's refusal when no slot of the pool is free (pooling/memory_pool.rs, PoolConcurrencyLimitError)
_POOL_BUSY = "maximum concurrent limit of"
# seconds to wait before each new attempt; past them the refusal is the answer (a LinkError)
_POOL_BUSY_PAUSES = (0.0, 0.0, 0.0001, 0.001, 0.01, 0.05)


def _advance_epochs(engines: list[wasmtime.Engine]) -> None:
    for engine in engines:
        engine.increment_epoch()


def _raise_if_interrupted(interrupt: Interrupt | None) -> None:
    """A run that failed because its interrupt said stop (the epoch callback's error) is
    ExecutionInterrupted, not the trap it shows as."""
    if interrupt is not None:
        reason = interrupt.reason()
        if reason is not None:
            raise ExecutionInterrupted(reason) from None


def _pay_loading(gas: GasCounter, code_len: int) -> None:
    try:
        gas.pay_ext("contract_loading_bytes", code_len)
        gas.pay_ext("contract_loading_base")
    except GasExhausted:
        raise ViewCallError(errors.gas_exceeded()) from None


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else message


def _link_message(message: str) -> str:
    """What nearcore's LinkError says (wasmtime_runner/mod.rs `into_vm_error`): an unknown import
    is "unknown or invalid import"; any other failure is its root cause, the last entry of the
    engine's "Caused by:" list."""
    if message.startswith("unknown import:"):
        return "unknown or invalid import"
    _, _, causes = message.partition("Caused by:")
    entries = [line.strip() for line in causes.splitlines() if line.strip()]
    if not entries:
        return _first_line(message)
    last = entries[-1]
    index, colon, rest = last.partition(": ")
    return rest if colon and index.isdigit() else last  # a list of causes numbers its entries


def _trap_text(trap: wasmtime.Trap, gas: GasCounter, granted: int, store: Store) -> str:
    """The trap's text; the instructions run until it are charged first (the runner's
    `ReturningFromWasm` hook). An `unreachable` with the gas global below zero is a charge that
    did not fit (instrument.py): the gas limit's text; with the stack global below zero, a
    frame past the stack: MemoryAccessViolation (logic.rs `finite_wasm_stack_exhausted`)."""
    try:
        gas.settle(granted, store.get())
    except GasExhausted:  # a sliced run's SliceExhausted goes on up
        return gas.exhausted_text
    if store.stack(STACK_EXPORT) < 0:
        return _STACK_EXHAUSTED
    return _trap_name(trap)


def _trap_name(trap: wasmtime.Trap) -> str:
    code = trap.trap_code
    if code == wasmtime.TrapCode.STACK_OVERFLOW:
        return _STACK_EXHAUSTED
    name = _TRAPS.get(code) if code is not None else None
    if name is None:
        return f'WasmUnknownError {{ debug_message: "{_first_line(trap.message)}" }}'
    return errors.wasm_trap(name)


_ENGINE: ViewEngine | None = None
_ENGINE_LOCK = threading.Lock()


def default_engine() -> ViewEngine:
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            _ENGINE = ViewEngine()
        return _ENGINE


def use_compiled_cache(cache: CompiledCache | None) -> None:
    """Keep the process's compiled modules in `cache` on disk (None: in memory only)."""
    default_engine().disk = cache


def use_execution_limits(module_cache_bytes: int, memory_budget_bytes: int) -> None:
    """The process's bound of compiled modules kept in memory, by their size, and its budget of
    bytes held by executions in flight (budget.py)."""
    engine = default_engine()
    engine.cache_bytes = module_cache_bytes
    engine.budget = MemoryBudget(memory_budget_bytes)
    return_large_buffers()


def run_view(
    code: bytes,
    code_hash: str,
    method_name: str,
    args: bytes,
    context: ViewContext,
    state: StateReader,
    costs: GasCosts,
    slice_gas: int | None = None,
    slice_host_calls: int | None = None,
    interrupt: Interrupt | None = None,
) -> ViewOutcome:
    """Run a view method as nearcore does; raises ViewCallError with nearcore's text, or
    HostFunctionUnavailable when the contract needs a host function not implemented here (and
    SliceExhausted when a run given a slice needs more, ExecutionInterrupted when `interrupt`
    says stop)."""
    return default_engine().run_view(
        code, code_hash, method_name, args, context, state, costs, slice_gas, slice_host_calls, interrupt
    )
