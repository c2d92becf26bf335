"""deploy/Dockerfile's image, run as a client's CI runs it: testcontainers starts it with its
default command and reads the sample chain's final block; it is healthy by its own HEALTHCHECK,
runs as a non-root user, keeps its store in a declared volume, serves a `postgresql://` store,
stops on SIGTERM within a second and holds nothing of the build folder but the package."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import docker
import httpx
import pytest
from docker.models.containers import Container
from testcontainers.core.config import testcontainers_config
from testcontainers.core.container import DockerContainer

from tests.container.conftest import IMAGE
from tests.support.backends import copy_into_postgres
from tests.support.image_build import DOCKERFILE, REPO, Built, build_image
from tests.support.live_server import free_port
from tests.support.postgres import PostgresServer
from tests.support.rpc import call
from tests.support.sample_facts import sample_facts

pytestmark = [pytest.mark.container, pytest.mark.long(2)]

_HEALTHY_SECONDS = 90


@pytest.fixture(autouse=True)
def _no_ryuk(monkeypatch: pytest.MonkeyPatch) -> None:
    """testcontainers' reaper is an image of its own, which no registry here can provide."""
    monkeypatch.setattr(testcontainers_config, "ryuk_disabled", True)


@contextmanager
def _served(url: str, deadline_seconds: float = _HEALTHY_SECONDS) -> Iterator[httpx.Client]:
    """A client of the server at `url` once its /health answers 200."""
    with httpx.Client(base_url=url, timeout=10.0) as http:
        deadline = time.monotonic() + deadline_seconds
        while True:
            try:
                if http.get("/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"{url}/health did not answer 200 in {deadline_seconds} s"
            time.sleep(0.2)
        yield http


def _final_block(http: httpx.Client) -> tuple[int, str]:
    answer = call(http, "block", {"finality": "final"})
    assert answer.status == 200, answer
    header = answer.result["header"]
    return header["height"], header["hash"]


def _health(container: Container) -> str:
    container.reload()
    return str(container.attrs["State"]["Health"]["Status"])


@pytest.fixture()
def started(image: Built) -> Iterator[DockerContainer]:
    """The image with its default command and no settings, its port published as a client's CI does."""
    with DockerContainer(image.tag).with_exposed_ports(3030) as container:
        yield container


def test_default_command_serves_the_sample_chain_and_turns_healthy(started: DockerContainer) -> None:
    url = f"http://{started.get_container_host_ip()}:{started.get_exposed_port(3030)}"
    with _served(url) as http:
        facts = sample_facts()
        assert _final_block(http) == (facts.final_height, facts.final_hash)
    wrapped = started.get_wrapped_container()
    deadline = time.monotonic() + _HEALTHY_SECONDS
    while (status := _health(wrapped)) != "healthy" and time.monotonic() < deadline:
        time.sleep(0.5)
    assert status == "healthy", wrapped.attrs["State"]["Health"]
    uid = started.exec(["id", "-u"])
    assert uid.exit_code == 0 and uid.output.decode().strip() not in ("", "0"), uid
    # the sample chain was built in the declared volume, by the image's own user
    listed = started.exec(["ls", "-l", "/data/nearrpc.sqlite"])
    assert listed.exit_code == 0 and " nearrpc nearrpc " in listed.output.decode(), listed


def test_image_declares_a_non_root_user_a_store_volume_and_a_health_check(engine: docker.DockerClient,
                                                                          image: Built) -> None:  # fmt: skip
    config = engine.images.get(image.tag).attrs["Config"]
    assert config["User"] not in ("", "root", "0")
    assert list(config["Volumes"]) == ["/data"]
    assert config["Env"] and "NEARRPC_STORE=/data/nearrpc.sqlite" in config["Env"]
    check = config["Healthcheck"]["Test"]
    assert check[0] == "CMD" and any("/health" in word for word in check), check
    assert config["Entrypoint"] == ["nearrpc"] and config["Cmd"][0] == "serve"


def _output(engine: docker.DockerClient, image: str, **options: Any) -> bytes:
    """What a one-off container of `image` prints; the container and its /data volume are removed."""
    container = engine.containers.run(image, detach=True, **options)
    try:
        assert container.wait(timeout=120)["StatusCode"] == 0, container.logs()
        return bytes(container.logs(stderr=False))
    finally:
        container.remove(force=True, v=True)


def test_image_holds_nothing_of_the_build_folder_but_the_package(engine: docker.DockerClient, image: Built) -> None:
    found = _output(
        engine, image.tag, entrypoint=["find", "/", "-xdev", "(", "-name", "nearrpc-planted*", "-o", "-name", ".git",
                               "-o", "-name", ".venv", "-o", "-name", ".mypy_cache", "-o", "-name", "*.sqlite",
                               "-o", "-name", "*.egg-info", "-o", "-path", "*/tests/container*", ")", "-print"],
        user="root",
    )  # fmt: skip
    assert found.decode().split() == []
    # and the package is there, installed (not a copy of the sources)
    shown = _output(engine, image.tag, command=["--version"])
    assert shown.decode().startswith("nearrpc ")


def test_image_crosses_host_calls_in_c_and_holds_no_compiler(engine: docker.DockerClient, image: Built) -> None:
    # the wheel stage built the C extension; gcc stayed there, out of the image served
    probe = (
        "import shutil; from nearrpc.contracts import wasm_api;"
        " print(wasm_api.NATIVE, shutil.which('gcc'), shutil.which('cc'))"
    )
    shown = _output(engine, image.tag, entrypoint=["python3", "-c", probe])
    assert shown.decode().split() == ["True", "None", "None"]


def test_sigterm_stops_it_within_a_second(engine: docker.DockerClient, image: Built) -> None:
    port = free_port()
    container = engine.containers.run(image.tag, detach=True, ports={"3030/tcp": ("127.0.0.1", port)})
    try:
        with _served(f"http://127.0.0.1:{port}") as http:
            _final_block(http)
            started = time.monotonic()
            container.kill("SIGTERM")
            exit_code = container.wait(timeout=30)["StatusCode"]
            seconds = time.monotonic() - started
        logs = container.logs().decode(errors="replace")
        assert exit_code == 0, logs
        assert "Finished server process" in logs
        assert seconds < 1.0, f"stopped {seconds:.2f} s after SIGTERM"
    finally:
        container.remove(force=True, v=True)


def test_serves_a_postgresql_store(image: Built, postgres: PostgresServer, tmp_path: Path) -> None:
    """The suite's own PostgreSQL listens on 127.0.0.1 only; the container shares the host's
    network for this test, so it reaches the server there, by the URL an operator writes."""
    from nearrpc.sample import build_sample_store

    build_sample_store(tmp_path / "sample.sqlite")
    url = copy_into_postgres(postgres, tmp_path / "sample.sqlite")
    port = free_port()
    settings = {"NEARRPC_STORE": url.replace(f":{postgres.password}@", "@"), "PGPASSWORD": postgres.password,
                "NEARRPC_HOST": "127.0.0.1", "NEARRPC_PORT": str(port)}  # fmt: skip
    with DockerContainer(image.tag).with_envs(**settings).with_kwargs(network_mode="host") as container:
        with _served(f"http://127.0.0.1:{port}") as http:
            facts = sample_facts()
            assert _final_block(http) == (facts.final_height, facts.final_hash)
        logs = b"".join(container.get_logs()).decode(errors="replace")
        assert f"serving postgresql://postgres@127.0.0.1:{postgres.port}/" in logs, logs
        assert postgres.password not in logs
        # nothing was built in the volume: a database store is never filled unasked
        assert container.exec(["ls", "-A", "/data"]).output == b""


def test_serves_a_store_mounted_read_only(image: Built, tmp_path: Path) -> None:
    """An operator's own store in a mounted folder of theirs (root's, read-only to the image's user)."""
    from nearrpc.sample import build_sample_store

    folder = tmp_path / "stores"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    build_sample_store(folder / "chain.sqlite")
    (folder / "chain.sqlite").chmod(0o644)
    mounted = (DockerContainer(image.tag).with_exposed_ports(3030).with_volume_mapping(folder, "/data", "ro")
               .with_env("NEARRPC_STORE", "/data/chain.sqlite"))  # fmt: skip
    with mounted as container:
        with _served(f"http://{container.get_container_host_ip()}:{container.get_exposed_port(3030)}") as http:
            facts = sample_facts()
            assert _final_block(http) == (facts.final_height, facts.final_hash)
    assert sorted(path.name for path in folder.iterdir()) == ["chain.sqlite"]


def test_rebuild_after_a_source_change_reuses_the_dependency_layers(
    engine: docker.DockerClient, image: Built, build_folder: Path, tmp_path: Path
) -> None:
    changed = tmp_path / "changed"
    shutil.copytree(build_folder, changed, symlinks=True)
    with (changed / "service" / "version.py").open("a") as source:
        # unique per run: the same change built by an earlier run would be in the layer cache
        source.write(f"# a one-line change {uuid.uuid4().hex}\n")
    rebuilt = build_image(engine, changed, DOCKERFILE, f"{IMAGE}-changed")
    try:
        print(f"\nimage build: {image.seconds:.1f} s (layer cache as it was); after a one-line change under "
              f"service/: {rebuilt.seconds:.1f} s")  # fmt: skip
        for step in ("RUN python3 -m venv", "COPY pyproject.toml", "RUN python3 -c \"import tomllib",
                     "RUN pip install -r build-requirements.txt", "COPY --from=deps"):  # fmt: skip
            assert rebuilt.step(step).cached, f"{step}: rebuilt after a change under service/\n{rebuilt.log[-3000:]}"
        for step in ("COPY service service", "RUN pip wheel", "COPY --from=wheel"):
            assert not rebuilt.step(step).cached, f"{step}: taken from the cache though service/ changed"
        assert engine.images.get(rebuilt.tag).id != engine.images.get(image.tag).id
    finally:
        engine.images.remove(rebuilt.tag, noprune=False)


def test_the_documented_testcontainers_test_passes_against_the_image(image: Built, tmp_path: Path) -> None:
    """docs/CLIENT_TESTING.md's Python container test, run by pytest as its own file, with the
    image under test in place of the image name a reader builds."""
    doc = (REPO / "docs" / "CLIENT_TESTING.md").read_text(encoding="utf-8")
    (snippet,) = re.findall(r"```py\n(.*?)```", doc, flags=re.DOTALL)
    assert '"nearrpc:latest"' in snippet
    (tmp_path / "test_with_container.py").write_text(snippet.replace('"nearrpc:latest"', f'"{image.tag}"'))
    environment = {**os.environ, "TESTCONTAINERS_RYUK_DISABLED": "true"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
                           "test_with_container.py"], cwd=tmp_path, env=environment, capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
