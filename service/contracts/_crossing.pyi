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
    global_get: int,
    global_set: int,
    trap_new: int,
    layout: tuple[int, int, int, int, int],
) -> None: ...
def enter(crossing: object, context: int, global_address: int, /) -> None: ...
def leave() -> None: ...
