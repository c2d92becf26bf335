"""JSON input: streamed parsing (ijson) and order-preserving compact output (orjson).

Objects keep their key order, integers stay integers and other numbers become floats, so a
value read here and written with `compact` gives the bytes a node's compact output has.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO, cast

import ijson  # type: ignore[import-untyped]
import orjson

# (prefix, event, value) as ijson reports them, e.g. ("records.item", "start_map", None).
Event = tuple[str, str, Any]

_OPENING = ("start_map", "start_array")
_CLOSING = ("end_map", "end_array")


class JsonInputError(Exception):
    """The input is not valid JSON (the message says near which byte)."""


def compact(value: object) -> bytes:
    """Compact JSON with the key order of `value` kept."""
    return orjson.dumps(value)


def loads(data: bytes | str) -> Any:
    """Parse one JSON document (orjson keeps key order)."""
    return orjson.loads(data)


def json_kind(value: object) -> str:
    """What a parsed JSON value is, in JSON's words ("a number", not Python's "int")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list | tuple) else "an object" if isinstance(value, dict) else "a value"


def _error(stream: BinaryIO, exc: Exception) -> JsonInputError:
    # yajl reports bad bytes as a bytes message, with the input quoted on a second line
    raw = exc.args[0] if exc.args else ""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(exc)
    message = text.strip().splitlines()[0].strip() if text.strip() else "not valid JSON"
    try:
        where = f" (near byte {stream.tell()})"
    except (OSError, ValueError):
        where = ""
    return JsonInputError(f"invalid JSON{where}: {message}")


def events(stream: BinaryIO) -> Iterator[Event]:
    """The parse events of `stream`, read in bounded chunks."""
    parsed = ijson.parse(stream, use_float=True)
    try:
        for event in parsed:
            yield cast(Event, event)
    except ijson.JSONError as exc:
        raise _error(stream, exc) from exc


def items(stream: BinaryIO, prefix: str) -> Iterator[Any]:
    """Each value at `prefix` (e.g. "item" for the elements of a top-level array), built one
    at a time."""
    built = ijson.items(stream, prefix, use_float=True)
    try:
        yield from built
    except ijson.JSONError as exc:
        raise _error(stream, exc) from exc


def build(first: Event, rest: Iterator[Event]) -> Any:
    """The value that starts with event `first`, consuming its remaining events from `rest`."""
    builder = ijson.ObjectBuilder()
    _, kind, value = first
    builder.event(kind, value)
    if kind in _OPENING:
        depth = 1
        for _, kind, value in rest:
            builder.event(kind, value)
            if kind in _OPENING:
                depth += 1
            elif kind in _CLOSING:
                depth -= 1
                if depth == 0:
                    break
    return builder.value


def skip(first: Event, rest: Iterator[Event]) -> None:
    """Consume the value that starts with event `first` without building it."""
    if first[1] not in _OPENING:
        return
    depth = 1
    for _, kind, _ in rest:
        if kind in _OPENING:
            depth += 1
        elif kind in _CLOSING:
            depth -= 1
            if depth == 0:
                return
