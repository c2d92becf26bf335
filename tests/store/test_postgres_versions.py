"""A store's whole life on the PostgreSQL an operator of Debian 12 installs (Debian's package,
PostgreSQL 15), not only on the suite's own PostgreSQL 16: created, copied into, checked,
imported into and served, each as a user runs it, with the password in the URL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.store.sqlite_files import genesis_config_of
from tests.support.cli import nearrpc
from tests.support.debian import PackageUnavailable, ensure_package
from tests.support.postgres import PostgresServer, debian_postgres_bin, dump, start_server, stop_server
from tests.support.serve_process import serving

pytestmark = [pytest.mark.live, pytest.mark.deep]

BLOCK_BY_HEIGHT = b'{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":50}}'


@pytest.fixture(scope="module")
def debian_postgres() -> Iterator[PostgresServer]:
    try:
        bin_dir = ensure_package("postgresql", debian_postgres_bin)
    except PackageUnavailable as unavailable:
        pytest.fail(str(unavailable))
    server = start_server(bin_dir)
    try:
        yield server
    finally:
        stop_server(server)


def _answer(url: str) -> bytes:
    return httpx.post(url, content=BLOCK_BY_HEIGHT, headers={"content-type": "application/json"}).content


def test_debian_postgresql_holds_and_serves_a_store(
    debian_postgres: PostgresServer, sample_store: Path, tmp_path: Path
) -> None:
    version = int(debian_postgres.bin_dir.parent.name)
    assert version < 16  # what this test is for: the versions the suite's own server is not
    url = debian_postgres.create_database()
    assert debian_postgres.password in url
    for command in (("store", "init", url), ("store", "copy", sample_store, url), ("store", "check", "--store", url)):
        done = nearrpc(*command, timeout=120)
        assert done.returncode == 0, (command[:2], done.stderr)
        assert debian_postgres.password not in done.stdout + done.stderr
    assert "integrity check ok" in done.stdout
    # an import creates its store on a new database as well
    genesis = genesis_config_of(sample_store)
    genesis_file = tmp_path / "genesis_config.json"
    genesis_file.write_bytes(genesis)
    imported = debian_postgres.create_database()
    done = nearrpc("import", "blocks", genesis_file, "--store", imported, timeout=120)
    assert done.returncode == 0, done.stderr
    assert dump(imported)["config"] == [row for row in dump(url)["config"] if row[0] == "genesis_config"]
    with (
        serving("--store", sample_store, log=tmp_path / "sqlite.log") as on_sqlite,
        serving("--store", url, log=tmp_path / "postgres.log") as on_postgres,
    ):
        expected = _answer(on_sqlite.url)
        assert b'"height":50' in expected
        assert _answer(on_postgres.url) == expected
