"""The few Wasmtime calls a view makes per call, made through the `wasmtime` package's own C-API
bindings (`wasmtime._ffi`) instead of its object layer: that layer builds a Caller, a Val per
argument and result, and a type object per call, and every export of an instance when one is
asked for, which for a short view costs more than the contract's work. Here a host function is
an "unchecked" callback (its arguments and results in one array of raw values, types fixed by
the linker's definition), the method is called unchecked (a `() -> ()` export, checked when the
module was compiled), an export is looked up by name, and memory and the gas global are read
directly.

A Python exception raised by a host function becomes a trap that unwinds the wasm stack; it is
kept per thread and raised again where the call or the instantiation returns, as the package's
own trampoline does with its (process-wide) slot.

A host call crosses from wasm into Python through the C extension `_crossing` (_crossing.c: the
callback, its arguments, the handler's vectorcall and the gas global's read and write in C, a
host call's cost about halved), or, where the extension is not built (no C compiler at install),
through a ctypes callback (`host_callback`); `NATIVE` says which, chosen once at import. The
call's store is made, instantiated, called and deleted there too (`_crossing.Store`, else
`CallStore`: each a `Store`), the per-call sequence through ctypes costing more than a short
view's work.
"""

from __future__ import annotations

import ctypes
import logging
import struct
import threading
from collections.abc import Callable
from typing import Any, Protocol

import wasmtime
from wasmtime import _ffi as ffi

log = logging.getLogger("nearrpc.contracts")
RawHost = Callable[..., int | None]  # (caller address, *arguments as u64) -> result
_U64 = (1 << 64) - 1


class _Pending(threading.local):
    failure: BaseException | None = None


_PENDING = _Pending()


def _take_pending() -> BaseException | None:
    failure, _PENDING.failure = _PENDING.failure, None
    return failure


def _address(name: str) -> int:
    address = ctypes.cast(getattr(ffi.dll, name), ctypes.c_void_p).value
    assert address is not None, f"the library has {name}"
    return address


def _raw(name: str, restype: Any, *argtypes: Any) -> Any:
    """The C function `name` under a prototype of plain values (addresses as ints): the
    package's bindings check and convert typed pointers at each call, and add a Python frame."""
    return ctypes.CFUNCTYPE(restype, *argtypes)(_address(name))


# wasmtime_func_unchecked_callback_t with every pointer an address: ctypes then hands the
# callback ints instead of building a pointer object per argument at each host call
_RAW_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
_memory_data_address = _raw("wasmtime_memory_data", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_memory_data_size = _raw("wasmtime_memory_data_size", ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p)


def _raised(error: int) -> wasmtime.WasmtimeError:
    return wasmtime.WasmtimeError._from_ptr(ctypes.cast(error, ctypes.POINTER(ffi.wasmtime_error_t)))


def _trap(trap: int) -> wasmtime.Trap:
    return wasmtime.Trap._from_ptr(ctypes.cast(trap, ctypes.POINTER(ffi.wasm_trap_t)))


# what the C extension calls (a call's store and its host calls), handed to it by address
_C_FUNCTIONS = (
    "wasmtime_store_new",
    "wasmtime_store_context",
    "wasmtime_store_delete",
    "wasmtime_store_limiter",
    "wasmtime_context_set_epoch_deadline",
    "wasmtime_store_epoch_deadline_callback",
    "wasmtime_instance_pre_instantiate",
    "wasmtime_instance_export_get",
    "wasmtime_func_call_unchecked",
    "wasmtime_memory_data",
    "wasmtime_memory_data_size",
    "wasmtime_global_get",
    "wasmtime_global_set",
    "wasmtime_trap_new",
)


def _set_up() -> bool:
    """Hand the C crossing the library's functions and the package's layouts, which it checks
    against its own; False (the ctypes crossing) if they differ."""
    layout = (
        ctypes.sizeof(ffi.wasmtime_val_raw_t),
        ctypes.sizeof(ffi.wasmtime_global_t),
        ctypes.sizeof(ffi.wasmtime_val_t),
        ffi.wasmtime_val_t.of.offset,
        int(ffi.WASMTIME_I64.value),
        ctypes.sizeof(ffi.wasmtime_instance_t),
        ctypes.sizeof(ffi.wasmtime_extern_t),
        ffi.wasmtime_extern_t.of.offset,
        int(ffi.WASMTIME_EXTERN_FUNC.value),
        int(ffi.WASMTIME_EXTERN_GLOBAL.value),
        int(ffi.WASMTIME_EXTERN_MEMORY.value),
    )
    functions = {name: _address(name) for name in _C_FUNCTIONS}
    try:
        _crossing.setup(_PENDING, _raised, _trap, functions, layout)
    except ImportError as refused:  # a wasmtime package whose C types changed
        log.warning("host calls cross through ctypes: %s", refused)
        return False
    return True


try:
    from nearrpc.contracts import _crossing
except ImportError:  # not built (no C compiler at install): the ctypes crossing serves
    log.info("host calls cross through ctypes: the C extension is not built")
    NATIVE = False
else:
    NATIVE = _set_up()
# the C callback (wasmtime_func_unchecked_callback_t), its env a `_crossing.Host`
_NATIVE_CALLBACK = _crossing.CALLBACK if NATIVE else 0


def host_callback(handler: RawHost, params: tuple[str, ...], results: tuple[str, ...]) -> Any:
    """An unchecked callback running `handler(caller address, *arguments)` with the arguments as
    unsigned 64-bit values (an i32 sign-extended first, as the package's Val does) and writing its
    result back. Raw values are 16 bytes apart (wasmtime_val_raw_t), an i32 in the low four."""
    count = len(params)
    wide = count > 0 and all(kind == "i64" for kind in params)  # read unsigned at once
    layout = struct.Struct("<" + "".join(("Q8x" if wide else "q8x") if kind == "i64" else "i12x" for kind in params))
    unpack, size, string_at = layout.unpack, 16 * count, ctypes.string_at
    result_kind = results[0] if results else None
    cell = ctypes.c_uint64 if result_kind == "i64" else ctypes.c_uint32
    mask = _U64 if result_kind == "i64" else 0xFFFF_FFFF

    def call(_env: Any, caller: Any, values: Any, _count: int) -> int:
        try:
            if wide:
                result = handler(caller, *unpack(string_at(values, size)))
            elif count:
                result = handler(caller, *[value & _U64 for value in unpack(string_at(values, size))])
            else:
                result = handler(caller)
            if result_kind is not None:
                assert result is not None, "a host function with a result returns it"
                cell.from_address(values).value = result & mask
            return 0
        except BaseException as failure:  # carried across the wasm frames, raised again on return
            _PENDING.failure = failure
            trap: Any = wasmtime.Trap("python exception")._consume()
            return int(ctypes.cast(trap, ctypes.c_void_p).value or 0)

    return _RAW_CALLBACK(call)


def native_host(
    handler: Callable[..., tuple[int | None, int]], params: tuple[str, ...], results: tuple[str, ...]
) -> Any:
    """The C crossing's host function (only where NATIVE): `handler(crossing, caller address, gas
    left, *arguments as u64)` answering (result, gas to grant), for the call `enter_crossing`
    names; its arguments and result converted as `host_callback` converts them."""
    return _crossing.Host(handler, params, results)


def enter_crossing(crossing: object, store: Store) -> None:
    """Host calls of the C crossing on this thread hand `crossing` to their handlers and read
    and set the gas global of `store` (a `_crossing.Store`, instantiated), until
    `leave_crossing` or the next `enter_crossing`."""
    _crossing.enter(crossing, store)


def leave_crossing() -> None:
    """Host calls of the C crossing on this thread fail (no call runs)."""
    _crossing.leave()


_NO_FINALIZER = ctypes.cast(0, ctypes.CFUNCTYPE(None, ctypes.c_void_p))


def define(linker: wasmtime.Linker, module: str, name: str, ty: wasmtime.FuncType, callback: Any) -> None:
    """Define `callback` (from host_callback or native_host; the caller keeps it alive) in the linker."""
    if isinstance(callback, _RAW_CALLBACK):
        function: Any = ctypes.cast(callback, ffi.wasmtime_func_unchecked_callback_t)
        env = None
    else:  # the C callback, its env the host function
        function = ffi.wasmtime_func_unchecked_callback_t(_NATIVE_CALLBACK)
        env = ctypes.c_void_p(callback.env)
    module_bytes, name_bytes = module.encode(), name.encode()
    error = ffi.wasmtime_linker_define_func_unchecked(
        linker.ptr(),
        ctypes.create_string_buffer(module_bytes),
        len(module_bytes),
        ctypes.create_string_buffer(name_bytes),
        len(name_bytes),
        ty.ptr(),
        function,
        env,
        _NO_FINALIZER,
    )
    if error:
        raise wasmtime.WasmtimeError._from_ptr(error)


_c = ctypes.c_void_p
_store_new = _raw("wasmtime_store_new", _c, _c, _c, _c)
_store_context = _raw("wasmtime_store_context", _c, _c)
_store_delete = _raw("wasmtime_store_delete", None, _c)
_store_limiter = _raw("wasmtime_store_limiter", None, _c, *(ctypes.c_int64,) * 5)
_set_epoch_deadline = _raw("wasmtime_context_set_epoch_deadline", None, _c, ctypes.c_uint64)
_watch_epochs = _raw("wasmtime_store_epoch_deadline_callback", None, _c, _c, _c, _c)
_pre_instantiate = _raw("wasmtime_instance_pre_instantiate", _c, _c, _c, _c, _c)
_export_get = _raw("wasmtime_instance_export_get", ctypes.c_bool, _c, _c, ctypes.c_char_p, ctypes.c_size_t, _c)
_call_unchecked = _raw("wasmtime_func_call_unchecked", _c, _c, _c, _c, ctypes.c_size_t, _c)


def address(pointer: Any) -> int:
    """A ctypes pointer's address (an object of the package's, e.g. `InstancePre.ptr()`)."""
    value = ctypes.cast(pointer, ctypes.c_void_p).value
    assert value is not None, "a live object's pointer"
    return value


class Store(Protocol):
    """One call's store (made with the engine's address, the store's limits and its epoch
    deadline, and the epoch callback's address or 0), its instance, the instance's gas global
    and memory, deleted once (`delete`): `_crossing.Store` in C where it is built, else
    `CallStore` through ctypes (`store_type`)."""

    @property
    def bound(self) -> bool:
        """Whether the instance (and with it the gas global) exists."""

    def instantiate(self, pre: int, memory: str, gas: str, method: str, start: str | None, /) -> None:
        """The instance of the InstancePre at address `pre`, its exports of these names looked
        up; raises the package's Trap or WasmtimeError, or the host function's exception."""

    def call(self, start: bool, /) -> None:
        """Run the start function (True) or the method; raises as `instantiate` does."""

    def get(self) -> int:
        """The gas global's value (a signed i64)."""

    def set(self, value: int, /) -> None:
        """Set the gas global."""

    def stack(self, name: str, /) -> int:
        """The value of the stack global exported as `name`."""

    def memory_base(self) -> int:
        """The memory's data address."""

    def memory_size(self) -> int:
        """The memory's size in bytes (it only grows)."""

    def delete(self) -> None:
        """Delete the store (again: nothing)."""


def store_type(native: bool) -> Callable[[int, int, int, int, int, int], Store]:
    """The call store of the C extension (only where NATIVE) or of ctypes."""
    return _crossing.Store if native else CallStore


class CallStore:
    """`Store` through ctypes, where the C extension is not built: the C API called directly,
    the package's Store, Instance and export objects costing more than a short view's work."""

    def __init__(
        self, engine: int, memory_size: int, table_elements: int, tables: int, epoch_deadline: int, epoch_callback: int
    ) -> None:
        self._store = _store_new(engine, None, None)
        self._context: int = _store_context(self._store)
        # one instance, one memory (engine.py)
        _store_limiter(self._store, memory_size, table_elements, 1, tables, 1)
        if epoch_callback:
            _watch_epochs(self._store, epoch_callback, None, None)
        _set_epoch_deadline(self._context, epoch_deadline)
        self._trap = ctypes.c_void_p()
        self._trap_address = ctypes.addressof(self._trap)
        self._instance: Any = None
        self._gas = _Global(self._context)
        self._stack: _Global | None = None
        self._memory: Any = None  # the exports, kept alive while their addresses are used
        self._functions: tuple[Any, Any] = (None, None)  # the method, the start function

    @property
    def bound(self) -> bool:
        return self._gas.bound

    def delete(self) -> None:
        if self._store is not None:
            _store_delete(self._store)
            self._store = None

    def _raise(self, error: int | None) -> None:
        """The failure of a run into wasm: the host function's exception that ended it, else its
        error or trap (none: it returned)."""
        failure = _take_pending()
        trap, self._trap.value = self._trap.value, None
        if error:
            raised: BaseException = _raised(error)
        elif trap:
            raised = _trap(trap)
        else:
            return
        if failure is not None:
            del raised  # the trap only carried the failure out of wasm
            try:
                raise failure
            finally:
                # else this frame, in the failure's traceback, would hold the failure: a cycle
                # that keeps the call's buffers until the cyclic collector runs
                del failure
        raise raised

    def instantiate(self, pre: int, memory: str, gas: str, method: str, start: str | None, /) -> None:
        _PENDING.failure = None
        instance = ffi.wasmtime_instance_t()
        self._raise(_pre_instantiate(pre, self._context, ctypes.addressof(instance), self._trap_address))
        self._instance = instance
        self._memory = self._export(memory).of.memory
        self._gas.bind(self._export(gas))
        self._functions = (self._export(method).of.func, None if start is None else self._export(start).of.func)

    def _export(self, name: str) -> Any:
        """The instance's export `name` (an `ffi.wasmtime_extern_t`), which it has."""
        encoded = name.encode()
        item = ffi.wasmtime_extern_t()
        found = _export_get(
            self._context, ctypes.addressof(self._instance), encoded, len(encoded), ctypes.addressof(item)
        )
        assert found, f"the instance exports {name}"
        return item

    def call(self, start: bool, /) -> None:
        func = self._functions[1 if start else 0]
        assert func is not None, "a start function to call"
        _PENDING.failure = None
        self._raise(_call_unchecked(self._context, ctypes.addressof(func), None, 0, self._trap_address))

    def get(self) -> int:
        return self._gas.get()

    def set(self, value: int, /) -> None:
        self._gas.set(value)

    def stack(self, name: str, /) -> int:
        if self._stack is None:
            self._stack = _Global(self._context)
            self._stack.bind(self._export(name))
        return self._stack.get()

    def memory_base(self) -> int:
        return int(_memory_data_address(self._context, ctypes.addressof(self._memory)) or 0)

    def memory_size(self) -> int:
        size: int = _memory_data_size(self._context, ctypes.addressof(self._memory))
        return size


_global_get = _raw("wasmtime_global_get", None, _c, _c, _c)
_global_set = _raw("wasmtime_global_set", _c, _c, _c, _c)


class _Global:
    """An instance's i64 global (the gas left, or the stack left: instrument.py), read and set
    without the package's per-call wrappers. Bound once the instance exists; its value is
    signed (a charge past the gas left takes it below zero)."""

    def __init__(self, context: int) -> None:
        self.context = context
        self._global: Any = None  # the export, kept alive while its address is used
        self.address = 0  # the bound export's wasmtime_global_t (0: not bound)
        self._value = ffi.wasmtime_val_t()
        self._value_address = ctypes.addressof(self._value)
        self._kind = ctypes.c_uint8.from_address(self._value_address)
        self._i64 = int(ffi.WASMTIME_I64.value)
        self._cell = ctypes.c_int64.from_address(self._value_address + ffi.wasmtime_val_t.of.offset)

    def bind(self, extern: Any) -> None:
        """Bind to `extern`, an instance's export (`ffi.wasmtime_extern_t`) of the global."""
        self._global = extern.of.global_
        self.address = ctypes.addressof(self._global)

    @property
    def bound(self) -> bool:
        return self.address != 0

    def get(self) -> int:
        _global_get(self.context, self.address, self._value_address)
        return self._cell.value

    def set(self, value: int) -> None:
        self._kind.value = self._i64
        self._cell.value = value
        error = _global_set(self.context, self.address, self._value_address)
        if error:
            raise _raised(error)


class LinearMemory:
    """The call's linear memory seen from host functions, bound once the instance exists (no
    contract code runs before: the start function is an export, instrument.py). Its data never
    moves (the engine runs with `memory_may_move` off: a memory grows inside its reservation),
    so the address is read once; the size only grows, so a range inside the size last read is
    inside, and only a range past it reads the size again."""

    def __init__(self) -> None:
        self._size_now: Callable[[], int] | None = None  # the store's, once bound
        self._base = 0  # the data's address
        self._size = 0  # the size last read

    def bind(self, store: Store) -> None:
        self._size_now = store.memory_size
        self._base = store.memory_base()
        self._size = store.memory_size()

    def holds(self, stop: int) -> bool:
        """Whether bytes [0, stop) lie inside the memory."""
        if stop <= self._size:
            return True
        assert self._size_now is not None, "bound once the instance exists"
        self._size = self._size_now()  # grown since?
        return stop <= self._size

    def read(self, start: int, stop: int) -> bytes:
        """Bytes [start, stop), which the caller has checked lie inside the memory."""
        return _read_at(self._base + start, stop - start) if stop > start else b""

    def write(self, data: bytes, start: int) -> None:
        """`data` at `start`, which the caller has checked lies inside the memory."""
        if data:
            _write_at(self._base + start, bytes(data))


def _ctypes_write(address: int, data: bytes) -> None:
    ctypes.memmove(address, data, len(data))


# a memory's bytes read and written in C where the extension is built (ctypes' string_at and
# memmove convert their arguments at each call: about 0.7 us against 0.1)
_read_at: Callable[[int, int], bytes] = _crossing.memory_read if NATIVE else ctypes.string_at
_write_at: Callable[[int, bytes], None] = _crossing.memory_write if NATIVE else _ctypes_write


def use_pooling(config: wasmtime.Config, limits: dict[str, int]) -> None:
    """Allocate instances, memories and tables from Wasmtime's pooling allocator (the package has
    no setter for it): slots reserved once with the engine and reused, rather than each call's
    memory mapped and unmapped. `limits` name the pool's setters
    (`wasmtime_pooling_allocation_config_<name>_set`)."""
    pool = ffi.wasmtime_pooling_allocation_config_new()
    try:
        for name, value in limits.items():
            getattr(ffi, f"wasmtime_pooling_allocation_config_{name}_set")(pool, value)
        ffi.wasmtime_pooling_allocation_strategy_set(config.ptr(), pool)
    finally:
        ffi.wasmtime_pooling_allocation_config_delete(pool)


def leave_component_async_off(config: wasmtime.Config) -> None:
    """Turn the component model's async features off (the package has no setter for them): they
    need reference types, which an engine for protocols before 84 leaves off."""
    for setter in (
        ffi.wasmtime_config_wasm_component_model_async_set,
        ffi.wasmtime_config_wasm_component_model_async_stackful_set,
        ffi.wasmtime_config_wasm_component_model_more_async_builtins_set,
    ):
        setter(config.ptr(), False)


# wasmtime_update_deadline_kind_t: go on with the new deadline (rather than yield, for async stores)
_UPDATE_DEADLINE_CONTINUE = 0
# the C callback's type (the binding's own; ctypes keeps one class per signature)
_EPOCH_CALLBACK_TYPE: Any = ctypes.CFUNCTYPE(
    ctypes.c_size_t,
    ctypes.POINTER(ffi.wasmtime_context_t),
    ctypes.c_void_p,
    ctypes.POINTER(ctypes.c_uint64),
    ctypes.POINTER(ctypes.c_uint8),
)


def epoch_callback(should_stop: Callable[[], bool]) -> Any:
    """A store's epoch deadline callback (run at each epoch tick the store's code sees): an error,
    which ends the running call, when `should_stop()`, else the next deadline one tick on.
    `should_stop` must not raise (there is no Python frame to raise into)."""

    def call(_context: Any, _env: Any, delta: Any, kind: Any) -> int:
        if should_stop():
            error = ffi.wasmtime_error_new(b"interrupted")
            return int(ctypes.cast(error, ctypes.c_void_p).value or 0)
        delta[0] = 1
        kind[0] = _UPDATE_DEADLINE_CONTINUE
        return 0

    return _EPOCH_CALLBACK_TYPE(call)
