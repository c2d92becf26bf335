"""Sample-chain fixtures: the generated chain, its facts and a built store file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from nearrpc.sample import SampleChain, build_sample_store, sample_chain
from nearrpc.store import ChainReader, open_store
from tests.support.sample_facts import SampleFacts, sample_facts


@pytest.fixture(scope="session")
def chain() -> SampleChain:
    return sample_chain()


@pytest.fixture(scope="session")
def facts() -> SampleFacts:
    return sample_facts()


@pytest.fixture(scope="session")
def views(chain: SampleChain) -> list[dict[str, Any]]:
    """The `block` results, ascending height."""
    return [orjson.loads(block.view_json) for block in chain.blocks]


@pytest.fixture(scope="session")
def headers(views: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [view["header"] for view in views]


@pytest.fixture(scope="session")
def built_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sample") / "sample.db"
    build_sample_store(path)
    return path


@pytest.fixture
def reader(built_store: Path) -> Iterator[ChainReader]:
    store = open_store(built_store, "read")
    yield store
    store.close()
