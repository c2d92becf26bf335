"""Compiled contracts kept beside the store across restarts, through the server (the worker's app
as `serve` builds it, in process; a fresh engine stands for a fresh process):
- the first server compiles the token's contract and keeps it; a restarted server's first call
  of it loads it (no compile) and answers the same bytes;
- an entry damaged on disk is compiled again and rewritten, the answer unchanged;
- where it lives: `<store>.compiled` beside an SQLite store, the folder given, none with `off`
  or for a PostgreSQL store not given one;
- a folder that cannot be used leaves the server in memory only, said once, and it answers.
Through `nearrpc serve` processes (a read-only store folder): tests/cli/test_serve_compiled_cache.py."""

from __future__ import annotations

import asyncio
import base64
import logging
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from nearrpc.cli.serve import _checked_compiled_cache, app_from_env, use_settings
from nearrpc.cli.settings import ServeSettings
from nearrpc.contracts import ViewEngine, default_engine, engine
from tests.support.sample_facts import SampleFacts, sample_facts

FACTS: SampleFacts = sample_facts()


def _holder() -> str:
    return next(row.key[1:].decode() for row in FACTS.contract_data if row.account_id == FACTS.token_account
                and row.key[:1] == b"b")  # fmt: skip


def _first_call(settings: ServeSettings, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, ViewEngine]:
    """A fresh process's server (its own engine) and its first call of the token's contract."""
    monkeypatch.setattr(engine, "_ENGINE", None)
    use_settings(settings)
    app = app_from_env()
    args = orjson.dumps({"account_id": _holder()})
    params = {"request_type": "call_function", "account_id": FACTS.token_account, "method_name": "ft_balance_of",
              "args_base64": base64.b64encode(args).decode(), "block_id": FACTS.head_height}  # fmt: skip

    async def ask() -> bytes:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://nearrpc") as client:
                body = {"jsonrpc": "2.0", "id": 1, "method": "query", "params": params}
                return (await client.post("/", json=body)).content

    try:
        answer = asyncio.run(ask())
    finally:
        use_settings(None)  # type: ignore[arg-type]
    return answer, default_engine()


def _settings(store: Path | str, **more: Any) -> ServeSettings:
    return ServeSettings(store=str(store), metrics=False, **more)


@pytest.fixture
def store(sample_store: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "chain.sqlite"
    copy.write_bytes(sample_store.read_bytes())
    return copy


def test_a_restarted_server_loads_a_known_contract_instead_of_compiling(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _settings(store)
    assert settings.compiled_cache_folder() == Path(f"{store}.compiled")
    first, compiled = _first_call(settings, monkeypatch)
    assert b'"result"' in first and compiled.compilations == 1
    assert compiled.disk is not None and compiled.disk.stats.stores == 1
    again, restarted = _first_call(settings, monkeypatch)
    assert again == first
    assert restarted.compilations == 0
    assert restarted.disk is not None and restarted.disk.stats.loads == 1


def test_a_damaged_entry_is_compiled_again_with_the_same_answer(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _settings(store)
    first, _ = _first_call(settings, monkeypatch)
    (entry,) = Path(f"{store}.compiled").glob("*.cwasm")
    entry.write_bytes(entry.read_bytes()[:1000])  # as a process killed while writing would leave it
    again, restarted = _first_call(settings, monkeypatch)
    assert again == first
    assert restarted.compilations == 1 and restarted.disk is not None and restarted.disk.stats.rejected == 1
    third, loaded = _first_call(settings, monkeypatch)
    assert third == first and loaded.compilations == 0


def test_where_compiled_contracts_are_kept(tmp_path: Path) -> None:
    sqlite = tmp_path / "chain.sqlite"
    assert _settings(sqlite).compiled_cache_folder() == tmp_path / "chain.sqlite.compiled"
    assert _settings(sqlite, compiled_cache=str(tmp_path / "x")).compiled_cache_folder() == tmp_path / "x"
    assert _settings(sqlite, compiled_cache="off").compiled_cache_folder() is None
    assert _settings(sqlite, compiled_cache="").compiled_cache_folder() is None
    postgres = "postgresql://nearrpc@127.0.0.1:5432/chain"
    assert ServeSettings(store=postgres).compiled_cache_folder() is None
    given = ServeSettings(store=postgres, compiled_cache=str(tmp_path / "y"))
    assert given.compiled_cache_folder() == tmp_path / "y"
    assert ServeSettings(store=postgres, compiled_cache_mb=7).to_env()["NEARRPC_COMPILED_CACHE_MB"] == "7"
    # a worker gets the same choice through the environment: unset stays unset (the default folder)
    assert "NEARRPC_COMPILED_CACHE" not in _settings(sqlite).to_env()
    assert _settings(sqlite, compiled_cache="off").to_env()["NEARRPC_COMPILED_CACHE"] == "off"


def test_off_and_an_unusable_folder_serve_from_memory_said_once(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    off, memory_only = _first_call(_settings(store, compiled_cache="off"), monkeypatch)
    assert b'"result"' in off and memory_only.disk is None and memory_only.compilations == 1
    assert not Path(f"{store}.compiled").exists()
    blocked = tmp_path / "not-a-folder"
    blocked.write_bytes(b"")
    with caplog.at_level(logging.INFO):
        checked = _checked_compiled_cache(_settings(store, compiled_cache=str(blocked)))
    said = [record.getMessage() for record in caplog.records if "compiled contracts" in record.getMessage()]
    assert len(said) == 1 and "kept in memory only" in said[0], said
    assert checked.compiled_cache == "off"
    answer, unused = _first_call(checked, monkeypatch)
    assert answer == off and unused.disk is None
