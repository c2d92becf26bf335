"""Items of a blocks import: from one JSON file, a JSON-lines file, or a folder of them.

- JSON-lines (`.jsonl`/`.ndjson`, or any file whose first line is a whole JSON object and is
  followed by more): one item per non-empty line; positions are `line N` (1-based).
- Otherwise one JSON document: a top-level array holds one item per element, streamed one at
  a time (positions `[i]`, 0-based); a top-level object is one item.
- A folder: its `.json`, `.jsonl` and `.ndjson` files, recursively, in path order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nearrpc.ingest import jsonio
from nearrpc.ingest.errors import ImportRequestError, IngestError, located

_LINE_SUFFIXES = (".jsonl", ".ndjson")
_SUFFIXES = (".json", *_LINE_SUFFIXES)


@dataclass(frozen=True, slots=True)
class SourceItem:
    where: str  # e.g. "blocks.jsonl: line 17"
    value: Any


def input_files(path: Path) -> list[Path]:
    """The files an import reads, in order."""
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in _SUFFIXES)
        if not files:
            raise IngestError(f"{path}: the folder holds no .json, .jsonl or .ndjson files")
        return files
    raise ImportRequestError(f"{path}: no such file or folder")


def _is_json_lines(path: Path) -> bool:
    if path.suffix.lower() in _LINE_SUFFIXES:
        return True
    with path.open("rb") as stream:
        first = stream.readline().strip()
        if not first.startswith(b"{"):
            return False
        try:
            jsonio.loads(first)
        except ValueError:
            return False
        return any(line.strip() for line in stream)


def _lines(path: Path) -> Iterator[SourceItem]:
    with path.open("rb") as stream:
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            where = f"{path}: line {number}"
            try:
                value = jsonio.loads(line)
            except ValueError as exc:
                raise located(where, f"invalid JSON: {exc}") from None
            yield SourceItem(where, value)


def _document(path: Path) -> Iterator[SourceItem]:
    with path.open("rb") as stream:
        head = stream.read(4096).lstrip()
    if head.startswith(b"["):
        index = -1
        with path.open("rb") as stream:
            try:
                for index, value in enumerate(jsonio.items(stream, "item")):
                    yield SourceItem(f"{path}: [{index}]", value)
            except jsonio.JsonInputError as exc:
                raise located(f"{path}: [{index + 1}]", exc) from None
        return
    try:
        value = jsonio.loads(path.read_bytes())
    except ValueError as exc:
        raise located(f"{path}", f"invalid JSON: {exc}") from None
    yield SourceItem(str(path), value)


def read_items(path: Path) -> Iterator[SourceItem]:
    """Every item under `path`, one at a time."""
    for file in input_files(path):
        yield from (_lines(file) if _is_json_lines(file) else _document(file))
