"""deploy/Dockerfile's build times and image size (needs a running Docker daemon, as root):

    python -m bench.container_build

Builds the image from a copy of the checkout with no layer cache (the first build a user
makes, on a base image already present), then again after a one-line change under service/,
and prints both times, their ratio, which steps the rebuild took from the cache, and the
image's size against its base image's. Where no `python:3.11-slim-bookworm` is present, its
Debian stand-in is built first (tests/support/standin.py); the base's size printed is then the
stand-in's. Removes the images it built.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import docker

from tests.support.image_build import DOCKERFILE, build_image, copy_build_folder
from tests.support.standin import LABEL, ensure_standins

BASE = "python:3.11-slim-bookworm"
TAG = "nearrpc:bench"


def _megabytes(client: docker.DockerClient, tag: str) -> float:
    return float(client.images.get(tag).attrs["Size"]) / 1e6


def main() -> None:
    client = docker.from_env(timeout=900)
    ensure_standins(client, BASE)
    stand_in = LABEL in (client.images.get(BASE).labels or {})
    with tempfile.TemporaryDirectory(prefix="nearrpc-bench-") as folder:
        context = copy_build_folder(Path(folder))
        first = build_image(client, context, DOCKERFILE, TAG, nocache=True)
        with (context / "service" / "version.py").open("a") as source:
            source.write("# a one-line change\n")
        rebuilt = build_image(client, context, DOCKERFILE, f"{TAG}-changed")
    try:
        print(f"first build (no cache): {first.seconds:.1f} s")
        print(f"rebuild after a one-line change under service/: {rebuilt.seconds:.1f} s "
              f"({rebuilt.seconds / first.seconds:.2f} of the first)")  # fmt: skip
        for step in rebuilt.steps:
            print(f"  {'cached ' if step.cached else 'rebuilt'}  {step.instruction[:100]}")
        base = _megabytes(client, BASE)
        image = _megabytes(client, TAG)
        print(f"image {image:.0f} MB; base {BASE}{' (Debian stand-in)' if stand_in else ''} {base:.0f} MB; "
              f"nearrpc and its dependencies add {image - base:.0f} MB")  # fmt: skip
    finally:
        for tag in (TAG, f"{TAG}-changed"):
            client.images.remove(tag)


if __name__ == "__main__":
    main()
