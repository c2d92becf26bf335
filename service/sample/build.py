"""Writing the sample chain into a store file, atomically."""

from __future__ import annotations

import os
from pathlib import Path

from service.sample.facts import SampleFacts, derive_facts, sample_chain
from service.sample.generator import SampleChain
from service.store import ChainWriter
from service.store.files import store_built_beside


def write_chain(writer: ChainWriter, chain: SampleChain) -> None:
    """Write the whole chain in one batch: it lands whole or not at all."""
    with writer.batch() as batch:
        batch.put_genesis_config(chain.genesis_config_json)
        batch.put_client_config(chain.client_config_json)
        for epoch in chain.epochs:
            batch.put_epoch(epoch)
        for block in chain.blocks:
            batch.put_block(block)
        for row in chain.account_states:
            batch.put_account_state(row.account_id, row.height, row.view_json)


def build_sample_store(path: str | os.PathLike[str]) -> SampleFacts:
    """Write the sample chain to a new store at `path`, replacing any file there.

    The store is written to a temporary file in the same folder and renamed over `path`
    only when complete, so a crash leaves either the old file or the new one, never a
    partial store. The result uses a rollback journal (no -wal/-shm side files), so it can
    be opened read-only from a folder the server cannot write to.
    """
    target = Path(path)
    chain = sample_chain()
    with store_built_beside(target, target.with_name(f".{target.name}.{os.getpid()}.tmp")) as writer:
        write_chain(writer, chain)
    return derive_facts(chain)


def ensure_sample_store(path: str | os.PathLike[str]) -> Path:
    """Build the sample store at `path` unless a file is already there (first run)."""
    target = Path(path)
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        build_sample_store(target)
    return target
