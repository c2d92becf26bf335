"""Compiled modules kept on disk (contracts/compiled_cache.py): a new engine over the same folder
(a restarted server) loads a known contract instead of compiling it; an entry that is truncated,
damaged, swapped for another or signed under another secret is never loaded, but compiled and
written again with the same answer; a changed key (memory, engine settings, wasmtime version)
compiles again; the folder stays within its byte bound; a folder that cannot be trusted or
written leaves the engine in memory only."""

from __future__ import annotations

import importlib.metadata
import logging
import os
import stat
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
import wasmtime

from nearrpc.contracts import ViewCallError, ViewEngine, engine
from nearrpc.contracts.compiled_cache import CompiledCache, open_compiled_cache
from tests.conftest import reference_dir
from tests.contracts.support import COSTS, IMPORTS, DictState, module, run

STORAGE = IMPORTS + '(import "env" "storage_read" (func $storage_read (param i64 i64 i64) (result i64)))'
GET = module(
    '(data (i32.const 0) "STATE") (func (export "get")'
    " (drop (call $storage_read (i64.const 5) (i64.const 0) (i64.const 0)))"
    " (call $value_return (i64.const -1) (i64.const 0)))",
    STORAGE,
)
STATE = DictState({b"STATE": b"forty-two"})


def _engine(folder: Path, max_bytes: int = 1 << 30) -> ViewEngine:
    """A new engine over the folder: what a restarted server has."""
    return ViewEngine(compiled_cache=CompiledCache(folder, max_bytes))


def _answer(engine_: ViewEngine, code: bytes = GET) -> bytes:
    return run(code, "get", state=STATE, engine=engine_).result


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.cwasm"))


def _disk(engine_: ViewEngine) -> CompiledCache:
    assert engine_.disk is not None
    return engine_.disk


def test_a_restarted_engine_loads_a_known_contract_instead_of_compiling(tmp_path: Path) -> None:
    tmp_path = tmp_path / "compiled"  # made by the cache
    first = _engine(tmp_path)
    assert _answer(first) == b"forty-two"
    assert (first.compilations, _disk(first).stats.stores, _disk(first).stats.misses) == (1, 1, 1)
    assert len(_entries(tmp_path)) == 1
    restarted = _engine(tmp_path)
    assert _answer(restarted) == b"forty-two"
    assert (restarted.compilations, _disk(restarted).stats.loads) == (0, 1)
    # the folder and its secret are this user's alone
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "secret.key").stat().st_mode) == 0o600


def _damaged(entry: Path, other: Path) -> dict[str, bytes]:
    whole = entry.read_bytes()
    flipped = bytearray(whole)
    flipped[len(whole) // 2] ^= 0x01
    return {
        "truncated (a process killed mid-write)": whole[: len(whole) // 3],
        "empty": b"",
        "one bit flipped": bytes(flipped),
        "another key's entry renamed to this key": other.read_bytes(),
        "garbage": os.urandom(4096),
    }


def test_a_damaged_or_swapped_entry_is_never_loaded_but_rewritten(tmp_path: Path) -> None:
    other_code = module('(func (export "get"))')
    seed = _engine(tmp_path)
    _answer(seed)
    entry = _entries(tmp_path)[0]
    run(other_code, "get", engine=seed)
    other = next(path for path in _entries(tmp_path) if path != entry)
    for what, content in _damaged(entry, other).items():
        entry.write_bytes(content)
        restarted = _engine(tmp_path)
        assert _answer(restarted) == b"forty-two", what
        assert (restarted.compilations, _disk(restarted).stats.rejected, _disk(restarted).stats.loads) == (1, 1, 0)
        # rewritten whole: the next restart loads it
        again = _engine(tmp_path)
        assert (_answer(again), again.compilations, _disk(again).stats.loads) == (b"forty-two", 0, 1), what


def test_an_entry_signed_under_another_secret_is_not_trusted(tmp_path: Path) -> None:
    _answer(_engine(tmp_path))
    elsewhere = tmp_path / "elsewhere"
    _answer(_engine(elsewhere))  # the same key, written by a cache with its own secret
    (entry,) = _entries(tmp_path)
    entry.write_bytes((elsewhere / entry.name).read_bytes())
    restarted = _engine(tmp_path)
    assert _answer(restarted) == b"forty-two"
    assert (restarted.compilations, _disk(restarted).stats.rejected) == (1, 1)


def test_an_authentic_entry_wasmtime_refuses_is_rewritten(tmp_path: Path) -> None:
    # bytes this cache signed, of an engine with other settings (as after a settings change that
    # did not reach the key): Wasmtime's own check refuses them, and the module is compiled again
    cache = CompiledCache(tmp_path)
    key = _engine(tmp_path).disk_key(cache, _key_hash(GET), COSTS.prepare_rules)
    config = wasmtime.Config()
    config.consume_fuel = True  # the executor's engine meters no fuel (instrument.py)
    cache.store(key, wasmtime.Module(wasmtime.Engine(config), '(module (func (export "get")))'))
    restarted = _engine(tmp_path)
    assert _answer(restarted) == b"forty-two"
    assert (restarted.compilations, _disk(restarted).stats.rejected) == (1, 1)
    assert _engine(tmp_path).disk is not None


def _key_hash(code: bytes) -> str:
    from tests.contracts.support import code_hash

    return code_hash(code)


def test_a_changed_key_compiles_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _answer(_engine(tmp_path))
    # other memory limits: another prepared module
    other_memory = _engine(tmp_path)
    run(GET, "get", state=STATE, engine=other_memory, costs=replace(COSTS, initial_memory_pages=2, max_memory_pages=3))
    assert other_memory.compilations == 1
    # other engine settings
    monkeypatch.setitem(engine.ENGINE_SETTINGS, "cranelift_opt_level", "speed")
    other_settings = _engine(tmp_path)
    assert (_answer(other_settings), other_settings.compilations) == (b"forty-two", 1)
    monkeypatch.undo()
    # another wasmtime version
    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "0.0.1" if name == "wasmtime" else real(name))
    other_version = _engine(tmp_path)
    assert (_answer(other_version), other_version.compilations) == (b"forty-two", 1)
    monkeypatch.undo()
    assert len(_entries(tmp_path)) == 4
    unchanged = _engine(tmp_path)
    assert (_answer(unchanged), unchanged.compilations) == (b"forty-two", 0)


def test_the_folder_stays_within_its_byte_bound_least_recently_used_first(tmp_path: Path) -> None:
    codes = [module(f'(func (export "get")) (func (export "f{i}"))') for i in range(4)]
    probe = _engine(tmp_path / "probe")
    run(codes[0], "get", engine=probe)
    size = _entries(tmp_path / "probe")[0].stat().st_size
    bounded = _engine(tmp_path / "bounded", max_bytes=2 * size + size // 2)  # room for two
    folder = tmp_path / "bounded"
    for i, code in enumerate(codes[:3]):
        before = set(_entries(folder))
        run(code, "get", engine=bounded)
        (written,) = set(_entries(folder)) - before
        os.utime(written, (1000 + i, 1000 + i))  # last used in this order
    assert sum(path.stat().st_size for path in _entries(folder)) <= 2 * size + size // 2
    assert len(_entries(folder)) == 2 and _disk(bounded).stats.evicted == 1
    restarted = _engine(folder)
    run(codes[0], "get", engine=restarted)  # the oldest went
    assert restarted.compilations == 1


def test_an_unusable_folder_leaves_the_engine_in_memory_only(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_bytes(b"")
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    leaky = tmp_path / "leaky"
    CompiledCache(leaky)
    (leaky / "secret.key").chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="nearrpc.contracts"):
        assert open_compiled_cache(blocked) is None
        assert open_compiled_cache(shared) is None
        assert open_compiled_cache(leaky) is None
    texts = [record.getMessage() for record in caplog.records]
    assert len(texts) == 3 and all("kept in memory only" in text for text in texts), texts
    assert "not this user's alone" in texts[1] and "secret" in texts[2]
    memory_only = ViewEngine(compiled_cache=None)
    assert _answer(memory_only) == b"forty-two" and memory_only.compilations == 1


def test_a_folder_that_turns_unwritable_is_said_once(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    cached = _engine(tmp_path)

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    codes = [module(f'(func (export "get")) (func (export "g{i}"))') for i in range(3)]
    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with caplog.at_level(logging.WARNING, logger="nearrpc.contracts"):
        for code in codes:
            run(code, "get", engine=cached)
    monkeypatch.undo()
    assert len(caplog.records) == 1 and "No space left" in caplog.records[0].getMessage()
    assert _disk(cached).stats.write_failures == 3 and cached.compilations == 3


def test_a_real_near_sdk_contract_is_loaded_after_a_restart(tmp_path: Path) -> None:
    """The 250 kB near-contract-standards NFT (near-sdk-rs examples, read from the reference
    folder): kept once, loaded by a restarted engine, the same answer (an uninitialised contract's
    panic, with no state)."""
    path = reference_dir() / "contracts" / "new_non_fungible_token.wasm"
    if not path.is_file():
        pytest.skip(f"{path} not found (set NEARRPC_REFERENCE_DIR)")
    code = path.read_bytes()

    def answer(engine_: ViewEngine) -> str:
        try:
            return run(code, "nft_total_supply", engine=engine_).result.decode()
        except ViewCallError as failure:
            return failure.debug

    first = _engine(tmp_path)
    said = answer(first)
    assert "GuestPanic" in said and first.compilations == 1
    restarted = _engine(tmp_path)
    assert answer(restarted) == said
    assert (restarted.compilations, _disk(restarted).stats.loads) == (0, 1)


def test_a_module_the_pool_refuses_is_kept_for_the_engine_without_one(tmp_path: Path) -> None:
    # two tables: past the pool's bounds (engine.POOL_BOUNDS), valid where prepare checks no table
    code = module(
        '(table 1 funcref) (table 1 funcref) (data (i32.const 0) "ok") (func (export "get")'
        " (call $value_return (i64.const 2) (i64.const 0)))"
    )
    costs = replace(COSTS, prepare_max_tables=None, prepare_max_table_elements=None)
    first = _engine(tmp_path)
    with pytest.raises(ViewCallError) as refused:
        run(code, "get", engine=first, costs=costs)
    assert first.compilations == 1 and first._spare is not None
    restarted = _engine(tmp_path)
    with pytest.raises(ViewCallError) as again:
        run(code, "get", engine=restarted, costs=costs)
    assert again.value.debug == refused.value.debug and refused.value.debug.startswith("LinkError")
    assert (restarted.compilations, _disk(restarted).stats.loads) == (0, 1)


def test_other_pool_bounds_compile_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _answer(_engine(tmp_path))
    monkeypatch.setitem(engine.POOL_BOUNDS, "table_elements", 20_000)
    other_bounds = _engine(tmp_path)
    assert (_answer(other_bounds), other_bounds.compilations) == (b"forty-two", 1)
    # the engine without a pool keeps its modules under a key of its own
    without_pool = ViewEngine(compiled_cache=CompiledCache(tmp_path), pool_slots=None)
    assert (_answer(without_pool), without_pool.compilations) == (b"forty-two", 1)
