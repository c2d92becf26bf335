"""The few Wasmtime calls a view makes per call, made through the `wasmtime` package's own C-API
bindings (`wasmtime._ffi`) instead of its object layer: that layer builds a Caller, a Val per
argument and result, and a type object per call, and every export of an instance when one is
asked for, which for a short view costs more than the contract's work. Here a host function is
an "unchecked" callback (its arguments and results in one array of raw values, types fixed by
the linker's definition), the method is called unchecked (a `() -> ()` export, checked when the
module was compiled), an export is looked up by name, and memory and fuel are read directly.

A Python exception raised by a host function becomes a trap that unwinds the wasm stack; it is
kept per thread and raised again where the call or the instantiation returns, as the package's
own trampoline does with its (process-wide) slot.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from typing import Any

import wasmtime
from wasmtime import _ffi as ffi

RawHost = Callable[[Any, list[int]], int | None]  # (caller pointer, arguments as u64) -> result


class _Pending(threading.local):
    failure: BaseException | None = None


_PENDING = _Pending()


def _take_pending() -> BaseException | None:
    failure, _PENDING.failure = _PENDING.failure, None
    return failure


def host_callback(handler: RawHost, params: tuple[str, ...], results: tuple[str, ...]) -> Any:
    """An unchecked callback running `handler` with the arguments as unsigned 64-bit values (an
    i32 sign-extended first, as the package's Val does) and writing its result back."""
    kinds = tuple(kind == "i64" for kind in params)
    result_i64 = bool(results) and results[0] == "i64"
    has_result = bool(results)

    def call(_env: Any, caller: Any, values: Any, _count: int) -> int:
        try:
            args = [(values[i].i64 if wide else values[i].i32) & 0xFFFF_FFFF_FFFF_FFFF for i, wide in enumerate(kinds)]
            result = handler(caller, args)
            if has_result:
                assert result is not None, "a host function with a result returns it"
                if result_i64:
                    values[0].i64 = result - (1 << 64) if result >= 1 << 63 else result
                else:
                    values[0].i32 = result - (1 << 32) if result >= 1 << 31 else result
            return 0
        except BaseException as failure:  # carried across the wasm frames, raised again on return
            _PENDING.failure = failure
            trap: Any = wasmtime.Trap("python exception")._consume()
            return int(ctypes.cast(trap, ctypes.c_void_p).value or 0)

    return ffi.wasmtime_func_unchecked_callback_t(call)


_NO_FINALIZER = ctypes.cast(0, ctypes.CFUNCTYPE(None, ctypes.c_void_p))
# wasmtime_memory_data returning the address as an int (the package's binding returns a typed
# pointer, which costs a cast per access); the same C function, another ctypes prototype
_memory_data_address = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
    int(ctypes.cast(ffi.dll.wasmtime_memory_data, ctypes.c_void_p).value or 0)
)


def define(linker: wasmtime.Linker, module: str, name: str, ty: wasmtime.FuncType, callback: Any) -> None:
    """Define `callback` (from host_callback; the caller keeps it alive) in the linker."""
    module_bytes, name_bytes = module.encode(), name.encode()
    error = ffi.wasmtime_linker_define_func_unchecked(
        linker.ptr(),
        ctypes.create_string_buffer(module_bytes),
        len(module_bytes),
        ctypes.create_string_buffer(name_bytes),
        len(name_bytes),
        ty.ptr(),
        callback,
        None,
        _NO_FINALIZER,
    )
    if error:
        raise wasmtime.WasmtimeError._from_ptr(error)


def instantiate(pre: wasmtime.InstancePre, store: wasmtime.Store) -> wasmtime.Instance:
    """The instance (its start function run); a host function's exception is raised as itself."""
    _PENDING.failure = None
    try:
        return pre.instantiate(store)
    except (wasmtime.Trap, wasmtime.WasmtimeError):
        failure = _take_pending()
        if failure is not None:
            try:
                raise failure from None
            finally:
                del failure  # no cycle through this frame (see `call`)
        raise


def export(store: wasmtime.Store, instance: wasmtime.Instance, name: str) -> Any | None:
    """The instance's export `name` (an `ffi.wasmtime_extern_t`), or None."""
    encoded = name.encode()
    item = ffi.wasmtime_extern_t()
    found = ffi.wasmtime_instance_export_get(
        store._context(), ctypes.byref(instance._instance), encoded, len(encoded), ctypes.byref(item)
    )
    return item if found else None


def caller_memory(caller: Any, name: str) -> Any | None:
    """The calling instance's memory export `name` (an `ffi.wasmtime_memory_t`), or None."""
    encoded = name.encode()
    item = ffi.wasmtime_extern_t()
    if not ffi.wasmtime_caller_export_get(caller, encoded, len(encoded), ctypes.byref(item)):
        return None
    kind: Any = item.kind
    return item.of.memory if kind == ffi.WASMTIME_EXTERN_MEMORY.value else None


def call(store: wasmtime.Store, func: Any) -> None:
    """Call a `() -> ()` function export (`ffi.wasmtime_func_t`); raises its trap, or the host
    function's exception that ended it."""
    _PENDING.failure = None
    trap = ctypes.POINTER(ffi.wasm_trap_t)()
    error = ffi.wasmtime_func_call_unchecked(store._context(), ctypes.byref(func), None, 0, ctypes.byref(trap))
    failure = _take_pending()
    if error:
        raised: BaseException = wasmtime.WasmtimeError._from_ptr(error)
    elif trap:
        raised = wasmtime.Trap._from_ptr(trap)
    else:
        return
    if failure is not None:
        del raised  # the trap only carried the failure out of wasm
        try:
            raise failure
        finally:
            # else this frame, in the failure's traceback, would hold the failure: a cycle that
            # keeps the call's buffers (its last register write, its store) until the cyclic
            # collector runs
            del failure
    raise raised


class Fuel:
    """The store's fuel, read and set without the package's per-call wrappers."""

    def __init__(self, store: wasmtime.Store) -> None:
        self._context = store._context()
        self._cell = ctypes.c_uint64(0)
        self._ref = ctypes.byref(self._cell)

    def get(self) -> int:
        error = ffi.wasmtime_context_get_fuel(self._context, self._ref)
        if error:
            raise wasmtime.WasmtimeError._from_ptr(error)
        return int(self._cell.value)

    def set(self, fuel: int) -> None:
        error = ffi.wasmtime_context_set_fuel(self._context, fuel)
        if error:
            raise wasmtime.WasmtimeError._from_ptr(error)


class LinearMemory:
    """The call's linear memory seen from host functions. It is bound at the first host call
    (from the calling instance's export), so a start function, which runs before instantiation
    returns the instance, reaches it too. The data pointer is read per access: memory may grow."""

    def __init__(self, store: wasmtime.Store) -> None:
        self._context = store._context()
        self._context_address = ctypes.cast(self._context, ctypes.c_void_p)
        self._memory: Any = None
        self._ref: Any = None

    @property
    def bound(self) -> bool:
        return self._memory is not None

    def bind(self, memory: Any) -> None:
        self._memory = memory
        self._ref = ctypes.byref(memory)

    def _base(self) -> int:
        assert self._ref is not None, "bound at the first host call"
        return int(_memory_data_address(self._context_address, self._ref) or 0)

    def read(self, start: int, stop: int) -> bytes:
        """Bytes [start, stop), which the caller has checked lie inside the memory."""
        return ctypes.string_at(self._base() + start, stop - start) if stop > start else b""

    def write(self, data: bytes, start: int) -> None:
        """`data` at `start`, which the caller has checked lies inside the memory."""
        if data:
            ctypes.memmove(self._base() + start, data, len(data))

    def size(self) -> int:
        assert self._ref is not None, "bound at the first host call"
        return int(ffi.wasmtime_memory_data_size(self._context, self._ref))


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


def watch_epochs(store: wasmtime.Store, callback: Any) -> None:
    """Have `store` ask `callback` (from epoch_callback; the caller keeps it alive) at each tick."""
    ffi.wasmtime_store_epoch_deadline_callback(store.ptr(), callback, None, _NO_FINALIZER)
