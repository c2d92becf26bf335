"""The `import` command group's help and usage errors, the store's optional verbatim protocol
config per epoch, and the progress bar."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest
from rich.console import Console

from nearrpc.ingest.progress import Progress
from nearrpc.sample import sample_chain, write_chain
from nearrpc.store import StoredEpoch, open_store
from tests.ingest.conftest import call, result
from tests.support.cli import nearrpc
from tests.support.live_server import LiveServer, running_server


@pytest.mark.parametrize("source", ["genesis", "blocks", "rpc"])
def test_every_import_command_has_help(source: str) -> None:
    done = nearrpc("import", source, "--help")
    assert done.returncode == 0 and "--store" in done.stdout and "NEARRPC_STORE" in done.stdout
    assert nearrpc("import", "--help").stdout.count(source) >= 1
    assert "import" in nearrpc("--help").stdout


def test_usage_errors_exit_2_without_a_traceback() -> None:
    done = nearrpc("import", "rpc", "--from-height", "1", "--to-height", "2")
    assert done.returncode == 2 and "the following arguments are required: --url" in done.stderr
    assert "Traceback" not in done.stderr
    done = nearrpc("import", "blocks", "/nonexistent/folder", "--store", "/tmp/never.sqlite")
    assert done.returncode == 2  # the command names what is not there: change the command (cli/refusals.py)
    assert done.stderr.strip() == "nearrpc import blocks: /nonexistent/folder: no such file or folder"


def test_a_recorded_protocol_config_is_served_verbatim(tmp_path: Path, server_a: LiveServer) -> None:
    """A node whose runtime config differs from this build's: its protocol config is served
    as recorded, not recomposed."""
    block = result(server_a.url, "block", {"block_id": 60})
    config = result(server_a.url, "EXPERIMENTAL_protocol_config", {"block_id": 60})
    config["runtime_config"]["storage_amount_per_byte"] = "20000000000000000000"  # not what we compute
    store = tmp_path / "store.sqlite"
    with open_store(store, "write") as writer:
        write_chain(writer, sample_chain())
    lines = [{"jsonrpc": "2.0", "result": config, "id": 1, "block_hash": block["header"]["hash"]}]
    (tmp_path / "epoch.jsonl").write_bytes(b"\n".join(orjson.dumps(v) for v in lines))
    done = nearrpc("import", "blocks", tmp_path / "epoch.jsonl", "--store", store)
    assert done.returncode == 0, done.stderr
    with running_server(store, tmp_path / "serve.log") as server:
        _, body = call(server.url, "EXPERIMENTAL_protocol_config", {"block_id": 60})
        assert body == b'{"jsonrpc":"2.0","result":' + orjson.dumps(config) + b',"id":"t"}'
        _, other_epoch = call(server.url, "EXPERIMENTAL_protocol_config", {"block_id": 30})
        assert other_epoch == call(server_a.url, "EXPERIMENTAL_protocol_config", {"block_id": 30})[1]


def test_a_recorded_protocol_config_must_agree_with_its_epoch(tmp_path: Path) -> None:
    from nearrpc.spec import SchemaViolation
    from nearrpc.store import StoreIntegrityError

    epoch = sample_chain().epochs[2]
    version = epoch.protocol_version
    config = {"protocol_version": version, "epoch_length": 25, "runtime_config": {}}
    with open_store(tmp_path / "s.sqlite", "write") as writer:
        mismatch = f"protocol_version={version} but the epoch's protocol version is {version - 1}"
        with pytest.raises(StoreIntegrityError, match=mismatch):
            with writer.batch() as batch:
                batch.put_epoch(StoredEpoch(epoch.epoch_id, version - 1, b"{}", orjson.dumps(config)))
        with pytest.raises(StoreIntegrityError, match=r"\['epoch_length'\] differ from the epoch's config values"):
            with writer.batch() as batch:
                batch.put_epoch(StoredEpoch(epoch.epoch_id, version, b'{"epoch_length":30}', orjson.dumps(config)))
        with pytest.raises(SchemaViolation, match="RpcProtocolConfigResponse at epoch_length"):
            with writer.batch() as batch:
                bad = {**config, "epoch_length": "25"}
                batch.put_epoch(StoredEpoch(epoch.epoch_id, version, b"{}", orjson.dumps(bad)))


def test_progress_bar_draws_only_on_a_terminal() -> None:
    terminal = io.StringIO()
    console = Console(file=terminal, force_terminal=True, color_system=None, width=160)
    bar = Progress("recording", 200, "heights", console=console)
    bar.update(50)
    bar.count("requests", 120)
    bar.close()
    drawn = terminal.getvalue()
    print(repr(drawn))
    assert "recording" in drawn and "25%" in drawn and "50/200 heights" in drawn and "120 requests (" in drawn

    pipe = io.StringIO()
    quiet = Progress("genesis", 1 << 30, "B", console=Console(file=pipe))
    quiet.update(1 << 29, records=10)
    quiet.close()
    assert pipe.getvalue() == ""
