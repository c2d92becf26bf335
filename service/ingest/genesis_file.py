"""Streaming a nearcore genesis.json: its config members, and its records one at a time.

nearcore writes the config members first and `records` last, so one pass suffices: records
are handed over as they are parsed. A file with `records` before `genesis_height` (which the
records need) is read twice: the first pass skips the records, the second streams them.
Memory stays bounded by the largest single record either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from nearrpc.ingest import jsonio
from nearrpc.ingest.errors import IngestError

# Called with (genesis height, record index, record) for every record, in file order.
RecordHandler = Callable[[int, int, Any], None]
# Called now and then with the number of bytes read so far.
ProgressHandler = Callable[[int], None]
# Called with the config members read so far when the records start (checks that fail fast).
ConfigCheck = Callable[[dict[str, Any]], None]

_PROGRESS_EVERY = 2048  # records


def _genesis_height(members: dict[str, Any], where: str) -> int:
    height = members["genesis_height"]
    if isinstance(height, bool) or not isinstance(height, int) or height < 0:
        raise IngestError(f"{where}: genesis_height must be a non-negative integer, got {height!r}")
    return height


def _stream_records(
    events: Iterator[jsonio.Event], stream: BinaryIO, height: int, on_record: RecordHandler,
    on_progress: ProgressHandler | None,
) -> int:
    """Hand over the elements of the `records` array whose start_array was just read."""
    index = 0
    for event in events:
        if event[1] == "end_array" and event[0] == "records":
            return index
        on_record(height, index, jsonio.build(event, events))
        index += 1
        if on_progress is not None and index % _PROGRESS_EVERY == 0:
            on_progress(stream.tell())
    return index


def read_genesis(
    path: Path,
    on_record: RecordHandler,
    on_progress: ProgressHandler | None = None,
    on_records_start: ConfigCheck | None = None,
) -> tuple[dict[str, Any], int]:
    """The file's config members (in file order) and its record count; every record goes to
    `on_record` as it is parsed."""
    where = str(path)
    members: dict[str, Any] = {}
    deferred = False
    count = 0
    with path.open("rb") as stream:
        events = jsonio.events(stream)
        first = next(events, None)
        if first is None or first[1] != "start_map":
            raise IngestError(f"{where}: a genesis file holds one JSON object")
        for prefix, kind, value in events:
            if prefix == "" and kind == "end_map":
                break
            key = value  # a map_key at the top level
            start = next(events)
            if key == "records":
                if start[1] != "start_array":
                    raise IngestError(f"{where}: records must be an array")
                if on_records_start is not None:
                    on_records_start(members)
                if "genesis_height" in members:
                    count = _stream_records(events, stream, _genesis_height(members, where), on_record, on_progress)
                else:
                    deferred = True
                    jsonio.skip(start, events)
            else:
                members[key] = jsonio.build(start, events)
    if "genesis_height" not in members:
        raise IngestError(f"{where}: genesis config lacks required field(s) genesis_height")
    if deferred:
        count = read_records(path, "records.item", _genesis_height(members, where), on_record, on_progress)
    return members, count


def read_records(
    path: Path, prefix: str, height: int, on_record: RecordHandler, on_progress: ProgressHandler | None = None
) -> int:
    """Stream the records at `prefix` ("item" for a records file holding just the array)."""
    index = 0
    with path.open("rb") as stream:
        for record in jsonio.items(stream, prefix):
            on_record(height, index, record)
            index += 1
            if on_progress is not None and index % _PROGRESS_EVERY == 0:
                on_progress(stream.tell())
    return index
