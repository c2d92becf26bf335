"""Long imports report progress where no terminal shows a bar (nohup, CI, a container): as log
lines every NEARRPC_PROGRESS_EVERY seconds, and every retry of a request as a warning."""

from __future__ import annotations

import io
import logging
import re
import socket
from pathlib import Path

import pytest
from rich.console import Console

from nearrpc.ingest.progress import Progress
from tests.ingest.genesis_files import write_big_genesis
from tests.support.cli import nearrpc

TIMESTAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


def test_lines_are_logged_only_without_a_terminal(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="nearrpc.import")
    quiet = Progress("genesis", 1 << 30, "B", console=Console(file=io.StringIO()), log_every=0.0)
    quiet.update(1 << 29, records=10)
    quiet.note("something to see")
    quiet.close()  # nothing new since the last line: not logged again
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert len(lines) == 2 and lines[1] == ("WARNING", "genesis: something to see"), lines
    expected = r"genesis: 512\.0 MiB of 1\.0 GiB \(50%\), 10 records \(\d+/s\), \d+ s"
    assert lines[0][0] == "INFO" and re.fullmatch(expected, lines[0][1]), lines

    caplog.clear()
    short = Progress("blocks", None, "items", console=Console(file=io.StringIO()), log_every=3600)
    short.update(advance=7)
    short.close()  # over before its first line was due: nothing to add to its summary or error
    assert caplog.records == []

    caplog.clear()
    shown = io.StringIO()
    bar = Progress("recording", 200, "heights", console=Console(file=shown, force_terminal=True, width=160),
                   log_every=0.0)
    bar.update(50)
    bar.note("retrying")
    bar.close()
    assert caplog.records == [] and "retrying" in shown.getvalue()


def test_a_long_genesis_import_logs_progress_lines(tmp_path: Path) -> None:
    genesis = tmp_path / "genesis.json"
    records, _ = write_big_genesis(genesis, 3000)
    done = nearrpc("import", "genesis", genesis, "--store", tmp_path / "store.sqlite",
                   env={"NEARRPC_PROGRESS_EVERY": "0.05"}, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()  # stderr is a pipe here, as under nohup
    progress = [line for line in lines if re.match(f"{TIMESTAMP} INFO nearrpc.import: genesis: ", line)]
    assert len(progress) >= 2 and progress == lines, lines
    assert re.search(r"genesis: [\d.]+ (KiB|MiB) of [\d.]+ (KiB|MiB) \(\d+%\), \d+ records", progress[0])
    assert f"(100%), {records} records" in progress[-1], progress[-1]
    assert progress[-1].split(": genesis: ")[1] != progress[-2].split(": genesis: ")[1]  # no line twice


def test_retries_of_a_dead_url_are_logged(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"  # nothing listens once it is closed
    done = nearrpc("import", "rpc", "--url", dead, "--from-height", "1", "--to-height", "2", "--retries", "2",
                   "--backoff", "0.05", "--store", tmp_path / "store.sqlite", timeout=120)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    retries = [line for line in lines if " WARNING nearrpc.import: recording: " in line]
    assert len(retries) == 2, lines
    for number, line in enumerate(retries, 1):
        assert re.fullmatch(f"{TIMESTAMP} WARNING nearrpc.import: recording: {dead}: genesis_config: "
                            rf"cannot connect to .+; retry {number} of 2 in \d+\.\d s", line), line
    port = dead.rstrip("/").rsplit(":", 1)[1]
    assert lines[-1] == (f"nearrpc import rpc: cannot reach {dead} (genesis_config): cannot connect to "
                         f"127.0.0.1:{port}: connection refused, still after 2 retries")
    assert not (tmp_path / "store.sqlite").exists()
