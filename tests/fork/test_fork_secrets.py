"""No credential of an upstream's URL is shown anywhere: not in the environment or command line
of any process of a multi-worker fork, not while the command is starting."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.fork.upstream_proxy import UpstreamProxy, rpc
from tests.support.serve_process import serving

pytestmark = pytest.mark.live


def session_processes(session: int) -> list[int]:
    """Every process whose session is `session` (a server started with start_new_session)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[3]) == session:  # after the name: state, ppid, pgrp, session
            found.append(int(stat.parent.name))
    return found


@pytest.mark.deep  # a fork of several worker processes
def test_no_process_of_a_multi_worker_fork_shows_a_credential(proxy: UpstreamProxy, tmp_path: Path) -> None:
    upstream = proxy.url.replace("http://", "http://someone:PASSWORD-1@") + "?apikey=SECRET-2"
    with serving(
        "--store", tmp_path / "f.sqlite", "--upstream", upstream, "--workers", "2", log=tmp_path / "fork.log"
    ) as fork:
        for height in (20, 21, 22, 23):  # misses, fetched by the workers through the upstream
            assert rpc(fork.url, "block", {"block_id": height}).json()["result"]["header"]["height"] == height
        processes = session_processes(fork.pid)
        assert len(processes) >= 3, processes  # the supervisor and its two workers (and multiprocessing's helper)
        for pid in processes:
            for what in ("environ", "cmdline"):
                shown = Path(f"/proc/{pid}/{what}").read_bytes()
                assert b"PASSWORD-1" not in shown and b"SECRET-2" not in shown, (pid, what, shown[:300])
    assert not [line for line in fork.log_lines() if "PASSWORD-1" in line or "SECRET-2" in line]


def test_the_process_title_is_masked_before_the_command_loads() -> None:
    """`ps` shows a command line to anyone: it is masked first, before the second or two the
    command's modules take to load (the entry point imports nothing else before it)."""
    probe = (
        "import sys; from nearrpc.cli import entry, proctitle; "
        "print(sorted(m for m in sys.modules if m.startswith('nearrpc')))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['nearrpc', 'nearrpc.cli', 'nearrpc.cli.entry', 'nearrpc.cli.proctitle', 'nearrpc.urls']"
    heavy = {"aiohttp", "pydantic", "fastapi", "uvicorn", "psycopg", "orjson"}
    probe = f"import sys; from nearrpc.cli import entry, proctitle; print(sorted(set(sys.modules) & {heavy!r}))"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout == "[]\n"


def test_urls_in_any_text_are_shown_without_user_path_or_query() -> None:
    from nearrpc.urls import public_url, scrub_urls

    assert public_url("https://someone:pw@rpc.example:8443/v3/KEY?apikey=K") == "https://rpc.example:8443/…"
    assert public_url("http://[::1]:3030/") == "http://[::1]:3030/"
    assert public_url("http://127.0.0.1:3030") == "http://127.0.0.1:3030"
    text = "TooManyRedirects: 10, url='http://h:1/x?apikey=SECRET' (then http://u:pw@h/): done"
    assert scrub_urls(text) == "TooManyRedirects: 10, url='http://h:1/…' (then http://h/…): done"
    assert scrub_urls("http://127.0.0.1:9/: genesis_config") == "http://127.0.0.1:9/: genesis_config"


def test_each_part_that_may_hold_a_key_is_left_out_and_said_to_be() -> None:
    """Whichever part of a URL holds the key (path, query, fragment, user, password), it is
    left out and `…` says so; a URL with none of them is shown as it is."""
    from nearrpc.urls import public_url

    for url in ("https://rpc.example/v3/KEY", "https://rpc.example/?apikey=KEY", "https://rpc.example/#KEY",
                "https://KEY@rpc.example/", "https://:KEY@rpc.example/"):  # fmt: skip
        assert public_url(url) == "https://rpc.example/…", url
    assert public_url("https://rpc.example/") == "https://rpc.example/"


def test_urls_of_any_scheme_in_text_are_scrubbed() -> None:
    from nearrpc.urls import scrub_urls

    text = "cannot connect to postgresql://chain:PW@db:5432/chain?sslmode=require; ws://u:PW@h/x."
    assert scrub_urls(text) == "cannot connect to postgresql://db:5432/…; ws://h/…."


def test_a_password_is_masked_whatever_the_case_of_the_scheme_or_key() -> None:
    from nearrpc.urls import mask_password

    assert mask_password("PostgreSQL://u:pw@h/db?PASSWORD=pw") == "PostgreSQL://u:***@h/db?PASSWORD=***"


@pytest.mark.deep  # a fork of several worker processes
def test_no_worker_inherits_a_credential_given_in_the_environment(proxy: UpstreamProxy, tmp_path: Path) -> None:
    """The upstream's URL given as NEARRPC_UPSTREAM: the supervisor reads it into its settings and
    takes it out of the environment its workers inherit (its own environment is its caller's)."""
    upstream = proxy.url.replace("http://", "http://someone:PASSWORD-1@") + "?apikey=SECRET-2"
    with serving(
        "--store", tmp_path / "f.sqlite", "--workers", "2", env={"NEARRPC_UPSTREAM": upstream},
        log=tmp_path / "fork.log",
    ) as fork:
        for height in (20, 21, 22, 23):  # misses, fetched by the workers through the upstream
            assert rpc(fork.url, "block", {"block_id": height}).json()["result"]["header"]["height"] == height
        workers = [pid for pid in session_processes(fork.pid) if pid != fork.pid]
        assert len(workers) >= 2, workers
        for pid in workers:
            for what in ("environ", "cmdline"):
                shown = Path(f"/proc/{pid}/{what}").read_bytes()
                assert b"PASSWORD-1" not in shown and b"SECRET-2" not in shown, (pid, what, shown[:300])
