"""A Docker daemon for the container tests: the running one, or Debian's docker.io installed and
`dockerd` started (as root), as `.ci/run` does, so `./check` alone also works.

Where none can run (not root, no docker.io to be had, dockerd fails), the tests skip with one
line saying why. `.ci/run` sets NEARRPC_REQUIRE_DOCKER=1 after starting the daemon: there a
missing daemon fails the tests instead, so CI never counts a skip as a pass.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import docker
import pytest
from docker.errors import DockerException
from requests import RequestException

from tests.support.debian import PackageUnavailable, ensure_package
from tests.support.once import machine_lock

_START_SECONDS = 60
# Docker 20.10's (Debian 12's docker.io), which later daemons serve too (a fixed version spares
# the client a question to the daemon on creation)
_API_VERSION = "1.41"
# why no daemon could be had, once this process found out: later tests skip without trying again
_REFUSED: list[str] = []


class NoDaemon(RuntimeError):
    """No Docker daemon runs here, and none could be started."""


def _socket_answers() -> bool:
    """Whether the daemon's Unix socket takes a connection (True for a DOCKER_HOST of another kind).
    Asked first, since the client leaves a socket open when its first connection fails."""
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if not host.startswith("unix://"):
        return True
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(host.removeprefix("unix://"))
        except OSError:
            return False
    return True


def _client() -> docker.DockerClient | None:
    if not _socket_answers():
        return None
    try:
        client = docker.from_env(version=_API_VERSION, timeout=600)
    except DockerException:
        return None
    try:
        client.ping()
        return client
    except (DockerException, RequestException):
        client.close()
        return None


def _start_dockerd() -> docker.DockerClient:
    if os.geteuid() != 0:
        raise NoDaemon("no Docker daemon is running and only root can start one (dockerd)")
    try:
        dockerd = ensure_package("docker.io", lambda: shutil.which("dockerd"))
    except PackageUnavailable as exc:
        raise NoDaemon(str(exc)) from None
    log = Path(tempfile.gettempdir()) / "nearrpc-tests-dockerd.log"
    log.unlink(missing_ok=True)
    with log.open("ab") as output:  # the daemon outlives the test run, as a service does
        daemon = subprocess.Popen([dockerd, "--storage-driver=overlay2"], stdout=output, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + _START_SECONDS
    while time.monotonic() < deadline and daemon.poll() is None:
        client = _client()
        if client is not None:
            return client
        time.sleep(0.5)
    last = log.read_text(errors="replace").strip().splitlines()[-1:] or ["(no output)"]
    if daemon.poll() is None:
        raise NoDaemon(f"dockerd did not answer in {_START_SECONDS} s: {last[0]}")
    raise NoDaemon(f"dockerd exited ({daemon.returncode}): {last[0]}")


def docker_client() -> docker.DockerClient:
    """A client of a running daemon, or the test skips (fails under NEARRPC_REQUIRE_DOCKER=1)."""
    client = None if _REFUSED else _client()
    if client is not None:
        return client
    try:
        if _REFUSED:
            raise NoDaemon(_REFUSED[0])
        with machine_lock("dockerd"):
            return _client() or _start_dockerd()
    except NoDaemon as exc:
        _REFUSED[:] = [str(exc)]
        message = f"no Docker daemon can run here: {exc}"
        if os.environ.get("NEARRPC_REQUIRE_DOCKER") == "1":
            pytest.fail(message + " (NEARRPC_REQUIRE_DOCKER=1)", pytrace=False)
        pytest.skip(message)
