"""How `nearrpc serve` starts, or refuses to, as an operator sees it: one start-up line once the
port is bound (naming store, chain, head and the real URL), and every refusal one line on stderr
with a non-zero exit before anything says it started."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
from pathlib import Path

import httpx
import pytest

from nearrpc.cli.settings import DEFAULT_STORE
from tests.support.cli import nearrpc
from tests.support.sample_facts import sample_facts
from tests.support.serve_process import serving

pytestmark = pytest.mark.live

TIMESTAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


def _one_line_refusal(done: subprocess.CompletedProcess[str], code: int) -> str:
    assert done.returncode == code, (done.returncode, done.stderr)
    stderr = done.stderr
    assert stderr.startswith("nearrpc serve: ") and stderr.count("\n") == 1, stderr
    assert "Traceback" not in stderr and "started" not in stderr.lower() and "startup" not in stderr.lower()
    return stderr.rstrip("\n")


def test_the_start_up_line_names_store_chain_head_and_the_bound_port(sample_store: Path, tmp_path: Path) -> None:
    facts = sample_facts()
    with serving("--store", sample_store, log=tmp_path / "serve.log") as served:
        lines = served.log_lines()
        port = int(served.url.rsplit(":", 1)[1])
        assert port != 0 and httpx.get(f"{served.url}/health").status_code == 200
    expected = (f"serving {sample_store} (chain {facts.chain_id}, head {facts.head_height}) "
                f"at http://127.0.0.1:{port}/")
    started = [line for line in lines if " at http://" in line]
    assert started == [served.started_line] and re.fullmatch(f"{TIMESTAMP} INFO nearrpc.serve: {re.escape(expected)}",
                                                             served.started_line), lines
    # it comes first; uvicorn's own lines follow in the same format
    assert lines[0] == served.started_line
    assert all(re.match(f"{TIMESTAMP} (INFO|WARNING|ERROR|DEBUG) ", line) for line in lines), lines
    assert any(re.match(f"{TIMESTAMP} INFO uvicorn.error: Application startup complete", line) for line in lines)


def test_the_start_up_line_shows_at_every_log_level(sample_store: Path, tmp_path: Path) -> None:
    with serving("--store", sample_store, "--log-level", "error", log=tmp_path / "serve.log") as served:
        lines = served.log_lines()
    assert lines == [served.started_line]  # and nothing else at this level


def test_a_port_in_use_is_one_line_before_anything_starts(sample_store: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = nearrpc("serve", "--store", sample_store, "--port", str(port), timeout=60)
    line = _one_line_refusal(done, 1)
    assert line == f"nearrpc serve: cannot listen on 127.0.0.1:{port}: Address already in use"
    assert done.stdout == ""


def test_a_port_in_use_is_refused_before_the_sample_chain_is_built(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = nearrpc("serve", "--port", str(port), cwd=tmp_path, timeout=60)
    assert _one_line_refusal(done, 1) == f"nearrpc serve: cannot listen on 127.0.0.1:{port}: Address already in use"
    assert list(tmp_path.iterdir()) == []  # the default store was not built


@pytest.mark.parametrize(("running_workers", "second_workers"), [(1, 1), (2, 1), (1, 2), (2, 2)])
def test_a_port_a_running_nearrpc_holds_is_refused_not_shared(
    sample_store: Path, tmp_path: Path, running_workers: int, second_workers: int
) -> None:
    # several workers bind one port with SO_REUSEPORT; a second server must not join that
    # group and take a share of the first one's connections (of another store, perhaps)
    with serving("--store", sample_store, "--workers", str(running_workers), log=tmp_path / "serve.log") as served:
        port = served.url.rsplit(":", 1)[1]
        done = nearrpc("serve", "--store", sample_store, "--port", port, "--workers", str(second_workers),
                       timeout=60)
        line = _one_line_refusal(done, 1)
        assert line == f"nearrpc serve: cannot listen on 127.0.0.1:{port}: Address already in use"
        assert httpx.get(f"{served.url}/health").status_code == 200


@pytest.mark.parametrize("given", ["flag", "environment"])
def test_an_explicit_missing_store_is_one_line_and_creates_nothing(tmp_path: Path, given: str) -> None:
    missing = tmp_path / "no" / "such" / "dir" / "x.sqlite"
    if given == "flag":
        done = nearrpc("serve", "--store", missing, "--port", "0", timeout=60)
    else:
        done = nearrpc("serve", "--port", "0", env={"NEARRPC_STORE": str(missing)}, timeout=60)
    line = _one_line_refusal(done, 2)
    assert line.startswith(f"nearrpc serve: no store at {missing} (")
    assert "--sample" in line and not (tmp_path / "no").exists()


def test_sample_builds_the_sample_chain_where_asked(tmp_path: Path) -> None:
    store = tmp_path / "x.sqlite"
    facts = sample_facts()
    with serving("--store", store, "--sample", log=tmp_path / "serve.log") as served:
        assert f"(chain {facts.chain_id}, head {facts.head_height})" in served.started_line
    assert store.is_file()
    assert "no store at" in served.log.read_text() and "building the sample chain there" in served.log.read_text()


def test_the_default_store_path_gets_the_sample_chain(tmp_path: Path) -> None:
    with serving(log=tmp_path / "serve.log", cwd=tmp_path) as served:
        assert f"serving {DEFAULT_STORE} (chain " in served.started_line
    assert (tmp_path / DEFAULT_STORE).is_file()


def _damaged_copy(sample_store: Path, tmp_path: Path, *, damaged_bytes: int | None = None) -> Path:
    """The sample store with its end overwritten (by default its second half)."""
    store = tmp_path / "damaged.sqlite"
    shutil.copyfile(sample_store, store)
    data = bytearray(store.read_bytes())
    start = len(data) // 2 if damaged_bytes is None else len(data) - damaged_bytes
    data[start:] = bytes((i * 7 + 3) % 256 for i in range(len(data) - start))
    store.write_bytes(bytes(data))
    return store


def test_a_store_that_fails_the_quick_check_is_refused_in_one_line(sample_store: Path, tmp_path: Path) -> None:
    store = _damaged_copy(sample_store, tmp_path)
    done = nearrpc("serve", "--store", store, "--port", "0", timeout=60)
    line = _one_line_refusal(done, 2)
    assert line.startswith(f"nearrpc serve: {store} fails the store's quick check: ")
    assert line.endswith(f"`nearrpc store check --store {store}` checks it in full")


def test_store_check_off_serves_the_store_unchecked_and_says_so(sample_store: Path, tmp_path: Path) -> None:
    # what an operator of a store of many GB chooses (its quick check takes minutes), having
    # checked it offline: a store whose last page the quick check refuses is served
    store = _damaged_copy(sample_store, tmp_path, damaged_bytes=4096)
    assert nearrpc("serve", "--store", store, "--port", "0", timeout=60).returncode == 2
    env = {"NEARRPC_STORE_CHECK": "off"}
    with serving("--store", store, log=tmp_path / "serve.log", env=env) as served:
        lines = served.log_lines()
        assert httpx.get(f"{served.url}/health").status_code == 200
    warned = [line for line in lines if "store check off" in line]
    assert len(warned) == 1 and re.fullmatch(
        f"{TIMESTAMP} WARNING nearrpc.serve: store check off: {re.escape(str(store))} is served unchecked "
        r"\(`nearrpc store check` checks it\)", warned[0]), lines
    refused = nearrpc("serve", "--store", store, "--port", "0", "--store-check", "thorough", timeout=60)
    assert "--store-check" in refused.stderr and refused.returncode == 2, refused.stderr
