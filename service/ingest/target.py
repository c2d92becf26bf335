"""The store an import writes into: an existing one, or a new one that appears only whole.

A new store is written to a hidden file beside the target and renamed over it once its
(first) batch has committed, so a killed or failed import leaves no store at all rather than
an empty one. The recorder's later batches land one by one in place; a re-run continues
after the last one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from service.store import ChainReader, SqliteChainWriter, WriteBatch, open_writer
from service.store.files import store_built_beside


def staging_path(store: Path) -> Path:
    """Where a new store is built before it is renamed into place."""
    return store.with_name(f".{store.name}.importing")


@contextmanager
def single_batch_target(store: Path) -> Iterator[SqliteChainWriter]:
    """A writer on `store`; when the file does not exist yet, on a staging file that replaces
    it only after the `with` block ends normally."""
    if store.exists():
        with open_writer(store) as writer:
            yield writer
        return
    store.parent.mkdir(parents=True, exist_ok=True)
    with store_built_beside(store, staging_path(store)) as writer:
        yield writer


class ResumableTarget:
    """The recorder's store: batches land one by one. A store that does not exist yet is built
    on a staging file and renamed into place with its first committed batch, so a run that
    fails before storing anything leaves no file behind."""

    def __init__(self, store: Path) -> None:
        self._store = store
        self._writer = open_writer(store) if store.exists() else None

    def reader(self) -> ChainReader | None:
        """A reader of what is committed so far (None before the first batch of a new store)."""
        return None if self._writer is None else self._writer.reader()

    @contextmanager
    def batch(self) -> Iterator[WriteBatch]:
        if self._writer is not None:
            with self._writer.batch() as batch:
                yield batch
            return
        with single_batch_target(self._store) as writer, writer.batch() as batch:
            yield batch
        self._writer = open_writer(self._store)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
