"""`nearrpc store init` and `nearrpc store copy`, run as a user runs them: results, refusals in
one line without a password, exit statuses."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from nearrpc.sample import build_sample_store, sample_chain
from nearrpc.store import open_store
from tests.store.sqlite_files import dump as sqlite_dump
from tests.store.sqlite_files import genesis_config_of
from tests.support.cli import nearrpc
from tests.support.live_server import free_port
from tests.support.postgres import PostgresServer, dump


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli-store") / "sample.sqlite"
    build_sample_store(path)
    return path


def test_init_creates_an_empty_store_and_leaves_one_as_it_is(postgres: PostgresServer, tmp_path: Path) -> None:
    url = postgres.create_database()
    for location, shown in ((tmp_path / "new.sqlite", str(tmp_path / "new.sqlite")),
                            (url, url.replace(postgres.password, "***"))):  # fmt: skip
        for _ in range(2):
            done = nearrpc("store", "init", location)
            assert done.returncode == 0, done.stderr
            assert done.stdout == f"nearrpc store init: {shown} is a store of schema version 5 (empty)\n"
        reader = open_store(location, "read")
        assert reader.info().block_count == 0 and reader.chain_id() is None
        reader.close()


def _records(store: Path) -> str:
    """What the copy says of a store's chunks, transactions, receipts and validators."""
    reader = open_store(store, "read")
    try:
        info = reader.info()
    finally:
        reader.close()
    return (f"{info.chunk_count} chunks, {info.transaction_count} transactions, {info.receipt_count} receipts, "
            f"{info.validators_count} epoch validator records")  # fmt: skip


def test_copy_prints_what_it_copied(postgres: PostgresServer, sample: Path, tmp_path: Path) -> None:
    url = postgres.create_database()
    done = nearrpc("store", "copy", sample, url)
    assert done.returncode == 0, done.stderr
    assert postgres.password not in done.stdout + done.stderr
    chain = sample_chain()
    counts = (f"{len(chain.blocks)} blocks, {len(chain.epochs)} epochs, {len(chain.account_states)} account states, "
              f"{len(chain.access_keys)} access key states, {len(chain.contract_codes)} contract codes, "
              f"{len(chain.contract_data)} contract state rows, {_records(sample)}, 2 configs")
    assert counts in done.stdout
    assert "counts verified (chain 'nearrpc-localnet', heights 0..110)" in done.stdout
    back = tmp_path / "back.sqlite"
    assert nearrpc("store", "copy", url, back).returncode == 0
    assert sqlite_dump(back) == sqlite_dump(sample) == dump(url)


def test_copy_refusals_are_one_line(postgres: PostgresServer, sample: Path, tmp_path: Path) -> None:
    genesis = genesis_config_of(sample)
    url = postgres.create_database()
    with open_store(url, "write") as writer, writer.batch() as batch:
        batch.put_genesis_config(genesis.replace(b'"chain_id":"nearrpc-localnet"', b'"chain_id":"elsewhere"'))
    # exit 2: a location holds no store or cannot be reached; 1: the copy was refused (cli/refusals.py)
    cases: list[tuple[tuple[str | Path, str | Path], int, str]] = [
        ((sample, url), 1, "holds chain 'elsewhere', the source chain 'nearrpc-localnet': copy into an empty store"),
        ((tmp_path / "absent.sqlite", url), 2, "no store at"),
        ((sample, f"postgresql://nearrpc:s3cret@127.0.0.1:{free_port()}/chain"), 2,
         'PostgreSQL database "chain" on 127.0.0.1:'),
        ((sample, tmp_path / "typo" / "copy.sqlite"), 2, f"there is no folder {tmp_path / 'typo'}"),
        # one store under two spellings: nothing to copy, and nothing may be lost
        ((sample, sample.parent / "." / sample.name), 1,
         f"{sample.parent / '.' / sample.name} is the source itself"),
        ((url, url + "?application_name=other"), 1, "is the source itself: copy into another store"),
    ]  # fmt: skip
    for (source, destination), code, message in cases:
        done = nearrpc("store", "copy", source, destination)
        assert done.returncode == code, done
        assert done.stderr.startswith("nearrpc store copy: ") and done.stderr.count("\n") == 1, done.stderr
        assert message in done.stderr and "s3cret" not in done.stderr and postgres.password not in done.stderr


def test_import_into_postgresql_shows_no_password(postgres: PostgresServer, sample: Path, tmp_path: Path) -> None:
    """An import straight into PostgreSQL: the store appears with its batch, the summary masks
    the URL, and what is stored equals the same import into SQLite."""
    reader = open_store(sample, "read")
    lines = [reader.genesis_config_json()] + [block.view_json for block, _ in list(reader.iter_blocks())[:30]]
    reader.close()
    items = tmp_path / "items.jsonl"
    items.write_bytes(b"\n".join(line for line in lines if line) + b"\n")
    url = postgres.create_database()
    done = nearrpc("import", "blocks", items, "--store", url)
    assert done.returncode == 0, done.stderr
    assert postgres.password not in done.stdout + done.stderr
    assert f"into {url.replace(postgres.password, '***')} in" in done.stdout
    into_sqlite = tmp_path / "imported.sqlite"
    assert nearrpc("import", "blocks", items, "--store", into_sqlite).returncode == 0
    contents = {table: rows for table, rows in sqlite_dump(into_sqlite).items() if table != "meta"}
    assert {table: rows for table, rows in dump(url).items() if table != "meta"} == contents
    assert len(contents["blocks"]) == 30


def test_an_import_waits_for_another_writer_as_long_as_store_timeout(
    postgres: PostgresServer, sample: Path, tmp_path: Path
) -> None:
    """Writers of one database take turns; an import that finds another writer's batch open
    waits --store-timeout (or NEARRPC_STORE_TIMEOUT) for it, then gives up in one line."""
    genesis = genesis_config_of(sample)
    items = tmp_path / "genesis.json"
    items.write_bytes(genesis)
    url = postgres.create_database()
    with open_store(url, "write") as other, other.batch() as batch:
        batch.put_genesis_config(genesis)  # the batch holds the writers' lock until it ends
        for flags, env in ((("--store-timeout", "0.5"), {}), ((), {"NEARRPC_STORE_TIMEOUT": "0.5"})):
            started = time.monotonic()
            done = nearrpc("import", "blocks", items, "--store", url, *flags, env=env, timeout=60)
            waited = time.monotonic() - started
            assert done.returncode == 1, done
            assert done.stderr.startswith("nearrpc import blocks: ") and done.stderr.count("\n") == 1, done.stderr
            assert "another writer is writing to this store; gave up waiting for it after 0.5 s" in done.stderr
            assert waited < 5, waited  # the default, 5 s, was not what it waited for
    # the other writer done, the same import lands
    assert nearrpc("import", "blocks", items, "--store", url, "--store-timeout", "0.5").returncode == 0


def test_command_lines_are_shown_without_passwords() -> None:
    from nearrpc.cli.proctitle import _masked

    assert _masked("postgresql://u:pw@h:5/db") == "postgresql://u:***@h:5/db"
    assert _masked("--store=postgres://u:pw@h/db?password=pw") == "--store=postgres://u:***@h/db?password=***"
    assert _masked("--store=data/x.sqlite") == "--store=data/x.sqlite"
    assert _masked("serve") == "serve"
