"""The image built from deploy/Dockerfile, unchanged, as a user builds it: from a build folder
holding what a developer's checkout holds (a .git, a venv, caches, a store, build output), on
the stand-in of its base image (tests/support/standin.py). Every test module here is marked
`container`: `./check --ignore=tests/container` or `pytest -m 'not container'` leaves them out of a quick loop."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from tests.support.docker_engine import docker_client
from tests.support.image_build import DOCKERFILE, Built, build_image, copy_build_folder
from tests.support.once import machine_lock
from tests.support.standin import ensure_standins

IMAGE = "nearrpc:container-test"


@pytest.fixture(scope="session")
def engine() -> Iterator[docker.DockerClient]:
    client = docker_client()
    yield client
    client.close()


@pytest.fixture(scope="session")
def build_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_build_folder(tmp_path_factory.mktemp("build-folder"))


@pytest.fixture(scope="session")
def image(engine: docker.DockerClient, build_folder: Path) -> Built:
    """The image, built once per worker (a second worker's build comes from the layer cache)."""
    ensure_standins(engine, "python:3.11-slim-bookworm")
    with machine_lock("nearrpc-image"):
        return build_image(engine, build_folder, DOCKERFILE, IMAGE)
