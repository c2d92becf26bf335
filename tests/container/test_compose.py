"""deploy/compose.yaml brought up as an operator does, twice over the same database volume: the
store job runs again and adds nothing, and the balancer serves the final block both times. The
postgres and haproxy images are Debian stand-ins (tests/support/standin.py); compose is the
`docker compose` plugin where installed, else Debian's docker-compose."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import httpx
import pytest
from docker.models.containers import Container

from tests.support.debian import PackageUnavailable, ensure_package
from tests.support.image_build import REPO
from tests.support.live_server import free_port
from tests.support.once import machine_lock
from tests.support.rpc import call
from tests.support.sample_facts import sample_facts
from tests.support.standin import ensure_standins

pytestmark = [pytest.mark.container, pytest.mark.long(3)]

COMPOSE_FILE = REPO / "deploy" / "compose.yaml"
_UP_SECONDS = 240
# every row of every table of the store, by table: what a second run of the store job must not change
_ROW_COUNTS = (
    "SELECT table_name || '=' || (xpath('/row/c/text()', query_to_xml('SELECT count(*) AS c FROM ' || "
    "quote_ident(table_name), false, true, '')))[1]::text FROM information_schema.tables "
    "WHERE table_schema = 'public' ORDER BY table_name"
)


def compose_command() -> list[str]:
    plugin = subprocess.run(["docker", "compose", "version"], capture_output=True, check=False)
    if plugin.returncode == 0:
        return ["docker", "compose"]
    try:  # Debian packages no compose plugin; its docker-compose (1.29) reads the same file
        return [ensure_package("docker-compose", lambda: shutil.which("docker-compose"))]
    except PackageUnavailable as exc:
        pytest.skip(f"no docker compose here: {exc}")


class Stack:
    def __init__(self, command: list[str], environment: dict[str, str], project: str) -> None:
        self.command = [*command, "--project-name", project, "--file", str(COMPOSE_FILE)]
        self.environment = environment

    def run(self, *args: str, timeout: float = 600) -> str:
        started = time.monotonic()
        done = subprocess.run([*self.command, *args], env=self.environment, capture_output=True, text=True,
                              timeout=timeout, check=False)  # fmt: skip
        assert done.returncode == 0, f"compose {' '.join(args)}: {done.stdout[-3000:]}{done.stderr[-3000:]}"
        print(f"compose {' '.join(args)}: {time.monotonic() - started:.1f} s")
        return done.stdout

    def container(self, engine: docker.DockerClient, service: str) -> Container:
        ids = self.run("ps", "--quiet", service).split()
        assert len(ids) == 1, ids
        return engine.containers.get(ids[0])

    def row_counts(self) -> list[str]:
        return self.run("exec", "-T", "postgres", "psql", "-U", "nearrpc", "-d", "nearrpc", "-Atc", _ROW_COUNTS).split()


@pytest.fixture()
def stack(engine: docker.DockerClient) -> Iterator[tuple[Stack, int]]:
    ensure_standins(engine, "python:3.11-slim-bookworm", "postgres:15-bookworm", "haproxy:2.6-bookworm")
    command = compose_command()
    port = free_port()
    environment = {**os.environ, "POSTGRES_PASSWORD": secrets.token_hex(12), "NEARRPC_IMAGE": "nearrpc:compose-test",
                   "NEARRPC_PUBLISH": f"127.0.0.1:{port}"}  # fmt: skip
    stack = Stack(command, environment, f"nearrpctest{secrets.token_hex(4)}")
    dangling = {volume.id for volume in engine.volumes.list(filters={"dangling": True})}
    try:
        yield stack, port
    finally:
        stack.run("down", "--volumes", "--remove-orphans", "--timeout", "5")
        # the nearrpc containers' anonymous /data volumes (the image declares it), left by `down`
        for volume in engine.volumes.list(filters={"dangling": True}):
            if volume.id not in dangling:
                volume.remove()


def _final_block_through(port: int) -> tuple[int, str]:
    """The final block as the balancer serves it, once both replicas are up behind it."""
    deadline = time.monotonic() + _UP_SECONDS
    last: object = None
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10.0) as http:
        while time.monotonic() < deadline:
            try:
                answer = call(http, "block", {"finality": "final"})
                if answer.status == 200 and "result" in answer.body:
                    header = answer.result["header"]
                    print(f"served through the balancer after {_UP_SECONDS - (deadline - time.monotonic()):.1f} s")
                    return header["height"], header["hash"]
                last = answer
            except httpx.TransportError as exc:
                last = exc
            time.sleep(0.5)
    raise AssertionError(f"the balancer on port {port} served no block in {_UP_SECONDS} s: {last!r}")


def _store_job_succeeded(stack: Stack, engine: docker.DockerClient) -> str:
    job = stack.container(engine, "store")
    job.reload()
    logs = bytes(job.logs()).decode(errors="replace")
    assert job.attrs["State"]["Status"] == "exited" and job.attrs["State"]["ExitCode"] == 0, logs
    return logs


def test_stack_comes_up_twice_over_one_volume_and_serves_through_the_balancer(
    stack: tuple[Stack, int], engine: docker.DockerClient
) -> None:
    compose, port = stack
    facts = sample_facts()
    # the build under the image fixture's lock: two builds of the Dockerfile at once each make
    # their own deps layers, and a later rebuild's cache then mixes the two (test_image's
    # rebuild test saw its `COPY --from=deps` built again)
    with machine_lock("nearrpc-image"):
        compose.run("up", "--detach", "--build")
    assert _final_block_through(port) == (facts.final_height, facts.final_hash)
    assert "copied" in _store_job_succeeded(compose, engine)
    rows = compose.row_counts()
    assert "blocks=0" not in rows and any(row.startswith("blocks=") for row in rows), rows
    # `up` again: the same containers, the store job run again in its own
    compose.run("up", "--detach")
    assert _final_block_through(port) == (facts.final_height, facts.final_hash)
    _store_job_succeeded(compose, engine)
    assert compose.row_counts() == rows
    # down and up: new containers over the same database volume
    compose.run("down", "--timeout", "5")
    compose.run("up", "--detach")
    assert _final_block_through(port) == (facts.final_height, facts.final_hash)
    _store_job_succeeded(compose, engine)
    assert compose.row_counts() == rows
    for replica in ("replica1", "replica2"):
        assert compose.container(engine, replica).attrs["State"]["Status"] == "running"


def test_compose_refuses_to_start_without_a_password(tmp_path: Path) -> None:
    environment = {key: value for key, value in os.environ.items() if key != "POSTGRES_PASSWORD"}
    done = subprocess.run([*compose_command(), "--file", str(COMPOSE_FILE), "config", "--quiet"], env=environment,
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode != 0
    assert "set POSTGRES_PASSWORD" in done.stdout + done.stderr, done
