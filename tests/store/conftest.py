"""Store fixtures: SQLite files in temporary folders and PostgreSQL databases of the suite's
server, filled with the sample chain."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from nearrpc.sample import SampleChain, sample_chain, write_chain
from nearrpc.store import ChainReader, open_store
from tests.support.postgres import PostgresServer


@pytest.fixture(scope="session")
def chain() -> SampleChain:
    return sample_chain()


@pytest.fixture(scope="session")
def base_chain(chain: SampleChain) -> SampleChain:
    """The sample chain without its chunks, transactions, receipts and validators records: the
    store tests put made-up ones of their own (tests/store/chain_records.py) and count on them
    alone; test_sample_records.py writes the whole chain."""
    return dataclasses.replace(chain, chunks=(), transactions=(), receipts=(), validators=())


@pytest.fixture(scope="session")
def filled_store_file(tmp_path_factory: pytest.TempPathFactory, base_chain: SampleChain) -> Path:
    """A store holding the sample chain (base_chain), written through the writer API. Do not modify."""
    path = tmp_path_factory.mktemp("store") / "chain.db"
    with open_store(path, "write") as writer:
        write_chain(writer, base_chain)
    return path


@pytest.fixture
def store_copy(filled_store_file: Path, tmp_path: Path) -> Path:
    """A private copy of the filled store that a test may write to."""
    path = tmp_path / "copy.db"
    shutil.copyfile(filled_store_file, path)
    return path


@pytest.fixture
def reader(filled_store_file: Path) -> Iterator[ChainReader]:
    store = open_store(filled_store_file, "read")
    yield store
    store.close()


@pytest.fixture(scope="module")
def filled(postgres: PostgresServer, base_chain: SampleChain) -> str:
    """A database holding the sample chain (base_chain), written through the writer API. Do not modify."""
    url = postgres.create_database("filled")
    with open_store(url, "write") as writer:
        write_chain(writer, base_chain)
    return url


@pytest.fixture
def pg_copy(postgres: PostgresServer, filled: str) -> str:
    """A private copy of the filled database that a test may write to."""
    return postgres.create_database("copy", template=filled)


@pytest.fixture
def pg_reader(filled: str) -> Iterator[ChainReader]:
    reader = open_store(filled, "read")
    yield reader
    reader.close()
