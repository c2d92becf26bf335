"""The recorder's progress note: a small JSON file beside the store.

It is written (atomically: temporary file + rename) after each batch has committed, and removed
when the recording completes. A re-run of the same recording (same chain, range and accounts)
continues after the last committed batch. The note only saves work: every batch is idempotent
(writes replace rows with the same values), so a lost or stale note costs time, not data.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

import orjson


@dataclass(frozen=True, slots=True)
class Job:
    chain_id: str
    from_height: int
    to_height: int
    accounts: tuple[str, ...]


def note_path(store: Path) -> Path:
    return store.with_name(f"{store.name}.recording.json")


def load(store: Path, job: Job) -> int | None:
    """The next height to record when `store` has a note for this very job."""
    try:
        note = orjson.loads(note_path(store).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(note, dict) or not isinstance(note.get("next_height"), int):
        return None
    if note.get("job") != {**asdict(job), "accounts": list(job.accounts)}:
        return None
    next_height: int = note["next_height"]
    return next_height if job.from_height <= next_height <= job.to_height + 1 else None


def save(store: Path, job: Job, next_height: int) -> None:
    path = note_path(store)
    temporary = path.with_name(f".{path.name}.tmp")
    note = {"job": {**asdict(job), "accounts": list(job.accounts)}, "next_height": next_height}
    temporary.write_bytes(orjson.dumps(note, option=orjson.OPT_INDENT_2))
    os.replace(temporary, path)


def remove(store: Path) -> None:
    note_path(store).unlink(missing_ok=True)
