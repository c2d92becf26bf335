# The C extension _crossing.c (wasm_api.py uses it where it is built).
from collections.abc import Callable
from typing import Any

CALLBACK: int  # the address of the wasmtime_func_unchecked_callback_t

class Host:
    """A host function for the C callback; its `env` is this object's address."""

    def __init__(
        self, handler: Callable[..., tuple[int | None, int]], params: tuple[str, ...], results: tuple[str, ...]
    ) -> None: ...
    @property
    def env(self) -> int: ...

def setup(
    pending: Any,
    raised: Callable[[int], BaseException],
    trapped: Callable[[int], BaseException],
    functions: dict[str, int],
    layout: tuple[int, int, int, int, int, int, int, int, int, int, int],
) -> None: ...
def enter(crossing: object, store: object, /) -> None: ...  # store: a Store (else TypeError)
def leave() -> None: ...

class Store:
    """One call's store (wasm_api.Store)."""

    def __init__(
        self,
        engine: int,
        memory_size: int,
        table_elements: int,
        tables: int,
        epoch_deadline: int,
        epoch_callback: int,
        /,
    ) -> None: ...
    @property
    def bound(self) -> bool: ...
    def instantiate(self, pre: int, memory: str, gas: str, method: str, start: str | None, /) -> None: ...
    def call(self, start: bool, /) -> None: ...
    def get(self) -> int: ...
    def set(self, value: int, /) -> None: ...
    def stack(self, name: str, /) -> int: ...
    def memory_base(self) -> int: ...
    def memory_size(self) -> int: ...
    def delete(self) -> None: ...
