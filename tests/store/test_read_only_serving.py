"""Every store the project writes can be served from a read-only folder (a read-only bind mount,
which holds for root too), and what cannot be served from one is refused in one line.

A store is copied into the folder as an operator copies it (the file alone), then served by
`nearrpc serve` in a mount namespace where the folder is read-only."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import orjson
import pytest

from nearrpc.store import open_store
from tests.ingest.genesis_files import genesis_members, some_records, write_genesis
from tests.support.cli import REPO, nearrpc
from tests.support.live_server import LiveServer
from tests.support.read_only import assert_read_only, read_only_wrapper
from tests.support.serve_process import serving

pytestmark = pytest.mark.live


def _wal_mode(path: Path) -> bool:
    """The file header says WAL (bytes 18 and 19 are 2), as any reader will open it."""
    return path.read_bytes()[18:20] == b"\x02\x02"


def _ok(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr


def _serve_in(folder: Path, *args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """`nearrpc serve --port 0 ARGS` with `folder` read-only, for a run expected to end."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("NEARRPC_")}
    command = [*read_only_wrapper(folder), sys.executable, "-m", "nearrpc", "serve", "--port", "0", *map(str, args)]
    return subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=60, check=False)


def _sample(folder: Path, server: LiveServer) -> Path:
    _ok(nearrpc("sample", folder / "s.sqlite", timeout=120))
    return folder / "s.sqlite"


def _genesis_import(folder: Path, server: LiveServer) -> Path:
    genesis = write_genesis(folder / "genesis.json", genesis_members(), some_records())
    _ok(nearrpc("import", "genesis", genesis, "--store", folder / "g.sqlite", timeout=120))
    return folder / "g.sqlite"


def _blocks_into_an_existing_store(folder: Path, server: LiveServer) -> Path:
    store = _sample(folder, server)
    blocks = [httpx.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "block",
                                           "params": {"block_id": h}}).json() for h in (10, 11)]
    (folder / "blocks.json").write_bytes(orjson.dumps(blocks))
    _ok(nearrpc("import", "blocks", folder / "blocks.json", "--store", store, timeout=120))
    return store


def _rpc_import(folder: Path, server: LiveServer) -> Path:
    _ok(nearrpc("import", "rpc", "--url", server.url, "--from-height", "0", "--to-height", "12",
                "--accounts", "alice.localnet", "--store", folder / "r.sqlite", timeout=300))
    return folder / "r.sqlite"


def _imported_while_served(folder: Path, server: LiveServer) -> Path:
    """A batch written while a reader (a server) reads the store: the writer cannot take the
    store out of WAL mode when it closes, so the file stays in WAL mode."""
    store = _blocks_into_an_existing_store(folder, server)
    reader = open_store(store, "read")
    try:
        with open_store(store, "write") as writer:
            head = reader.head()  # a request answered while the import runs
            assert head is not None
            with writer.batch() as batch:
                batch.put_block(head)
            reader.head()
    finally:
        reader.close()
    assert _wal_mode(store), "the case this test is about: a store left in WAL mode"
    return store


STORES: dict[str, Callable[[Path, LiveServer], Path]] = {
    "sample": _sample,
    "import genesis": _genesis_import,
    "import blocks into an existing store": _blocks_into_an_existing_store,
    "import rpc": _rpc_import,
    "import while a server reads it": _imported_while_served,
}


@pytest.mark.parametrize("kind", STORES)
def test_every_store_the_project_writes_serves_from_a_read_only_folder(
    kind: str, server: LiveServer, tmp_path: Path
) -> None:
    (tmp_path / "written").mkdir()
    written = STORES[kind](tmp_path / "written", server)
    folder = tmp_path / "read-only"
    folder.mkdir()
    shutil.copyfile(written, folder / "store.sqlite")
    assert_read_only(folder)
    with serving("--store", folder / "store.sqlite", log=tmp_path / "serve.log",
                 wrapper=read_only_wrapper(folder)) as served:
        answer = httpx.post(served.url, json={"jsonrpc": "2.0", "id": 1, "method": "genesis_config"})
        assert answer.status_code == 200 and "chain_id" in answer.json()["result"]
        if kind != "import genesis":  # a genesis import holds no blocks
            block = httpx.post(served.url, json={"jsonrpc": "2.0", "id": 1, "method": "block",
                                                 "params": {"finality": "final"}})
            assert block.status_code == 200 and block.json()["result"]["header"]["height"] > 0
    assert sorted(p.name for p in folder.iterdir()) == ["store.sqlite"]


def test_unfolded_writes_in_a_read_only_folder_are_refused_in_one_line(sample_store: Path, tmp_path: Path) -> None:
    """A writer that died in WAL mode leaves committed writes in -wal; without the -shm file
    beside them, a read-only folder cannot serve them, and serving the file without them would
    answer old data."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    store = tmp_path / "crashed.sqlite"
    shutil.copyfile(sample_store, store)
    conn = sqlite3.connect(store)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("INSERT INTO meta (key, value) VALUES ('unfolded', 'yes')")
    conn.commit()
    shutil.copyfile(store, folder / "store.sqlite")
    shutil.copyfile(f"{store}-wal", folder / "store.sqlite-wal")
    conn.close()
    wrapped = _serve_in(folder, "--store", folder / "store.sqlite")
    assert wrapped.returncode == 2 and wrapped.stderr.count("\n") == 1, wrapped.stderr
    assert wrapped.stderr.startswith(f"nearrpc serve: cannot read {folder / 'store.sqlite'}: it is in WAL mode with "
                                     "writes in store.sqlite-wal that are not folded into it")


def test_the_default_store_in_a_read_only_folder_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "read-only"
    folder.mkdir()
    done = _serve_in(folder, cwd=folder)
    tried, refused = done.stderr.splitlines()  # what it tried (a log line), then why it cannot
    assert tried.endswith("INFO nearrpc.serve: no store at data/nearrpc.sqlite: building the sample chain there")
    assert refused == "nearrpc serve: cannot create store data/nearrpc.sqlite: Read-only file system"
    assert done.returncode == 2 and list(folder.iterdir()) == []


def test_the_sample_into_a_read_only_folder_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "read-only"
    folder.mkdir()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("NEARRPC_")}
    command = [*read_only_wrapper(folder), sys.executable, "-m", "nearrpc", "sample", str(folder / "new.sqlite")]
    done = subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout) == (1, ""), done
    assert done.stderr == (
        f"nearrpc sample: cannot create store {folder / 'new.sqlite'}: Read-only file system\n"
    )
    assert list(folder.iterdir()) == []
