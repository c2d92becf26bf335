"""The image built from deploy/Dockerfile, unchanged, as a user builds it: from a build folder
holding what a developer's checkout holds (a .git, a venv, caches, a store, build output), on
the stand-in of its base image (tests/support/standin.py). Every test module here is marked
`container`: `pytest -m 'not container'` leaves them out of a quick loop."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import docker
import pytest

from tests.support.docker_engine import docker_client
from tests.support.image_build import Built, build_image
from tests.support.once import machine_lock
from tests.support.standin import ensure_standins

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = "deploy/Dockerfile"
IMAGE = "nearrpc:container-test"
# what a developer's build folder holds besides the sources; none of it may reach the image
PLANTED = (
    ".git/nearrpc-planted-git",
    ".venv/nearrpc-planted-venv",
    "venv/nearrpc-planted-venv",
    ".mypy_cache/nearrpc-planted-cache",
    "data/nearrpc-planted.sqlite",
    "service/nearrpc-planted.sqlite",
    "build/nearrpc-planted-build",
    "nearrpc.egg-info/nearrpc-planted-egg",
)


def copy_build_folder(target: Path) -> Path:
    """The checkout's tracked files in `target`, plus what PLANTED names."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    for name in PLANTED:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes(b"SQLite format 3\0 planted by tests/container\n")
    return target


@pytest.fixture(scope="session")
def engine() -> docker.DockerClient:
    return docker_client()


@pytest.fixture(scope="session")
def build_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_build_folder(tmp_path_factory.mktemp("build-folder"))


@pytest.fixture(scope="session")
def image(engine: docker.DockerClient, build_folder: Path) -> Built:
    """The image, built once per worker (a second worker's build comes from the layer cache)."""
    ensure_standins(engine, "python:3.11-slim-bookworm")
    with machine_lock("nearrpc-image"):
        return build_image(engine, build_folder, DOCKERFILE, IMAGE)
