"""RFC 6901 JSON pointers over plain dict/list documents (the few operations the tools need)."""

from __future__ import annotations

from typing import Any


def _tokens(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise KeyError(f"not a JSON pointer: {pointer!r}")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _step(node: Any, token: str, pointer: str) -> Any:
    if isinstance(node, dict):
        if token not in node:
            raise KeyError(f"{pointer}: no member {token!r}")
        return node[token]
    if isinstance(node, list):
        try:
            return node[int(token)]
        except (ValueError, IndexError):
            raise KeyError(f"{pointer}: no item {token!r}") from None
    raise KeyError(f"{pointer}: cannot descend into a {type(node).__name__}")


def pointer_get(doc: Any, pointer: str) -> Any:
    node = doc
    for token in _tokens(pointer):
        node = _step(node, token, pointer)
    return node


def pointer_parent(doc: Any, pointer: str) -> tuple[Any, str]:
    tokens = _tokens(pointer)
    if not tokens:
        raise KeyError("the document root has no parent")
    node = doc
    for token in tokens[:-1]:
        node = _step(node, token, pointer)
    return node, tokens[-1]


def pointer_set(doc: Any, pointer: str, value: Any) -> None:
    """Set the member named by the pointer. Its parent must exist: an edit aimed at something
    upstream no longer has fails instead of creating a stray fragment."""
    node, last = pointer_parent(doc, pointer)
    if isinstance(node, dict):
        node[last] = value
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        raise KeyError(f"{pointer}: cannot set inside a {type(node).__name__}")
