"""`docker build` through the daemon's API, with what a test needs to know of it: how long it
took and which of its steps came from the layer cache (read from the builder's own output); and
a build folder as a developer's checkout is, for deploy/Dockerfile."""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import docker
from docker.errors import BuildError

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = "deploy/Dockerfile"
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


@dataclass(frozen=True)
class Step:
    instruction: str  # as the builder prints it: "RUN pip install -r requirements.txt"
    cached: bool


@dataclass(frozen=True)
class Built:
    tag: str
    seconds: float
    steps: tuple[Step, ...]
    log: str

    def step(self, starts_with: str) -> Step:
        """The one step whose instruction starts with `starts_with`."""
        found = [step for step in self.steps if step.instruction.startswith(starts_with)]
        assert len(found) == 1, f"{len(found)} steps start with {starts_with!r}: {[s.instruction for s in self.steps]}"
        return found[0]


def _steps(log: str) -> tuple[Step, ...]:
    """The classic builder prints `Step i/n : INSTRUCTION`, then ` ---> Using cache` when cached."""
    steps: list[Step] = []
    for line in log.splitlines():
        if line.startswith("Step ") and " : " in line:
            steps.append(Step(line.split(" : ", 1)[1].strip(), cached=False))
        elif line.strip() == "---> Using cache" and steps:
            steps[-1] = Step(steps[-1].instruction, cached=True)
    return tuple(steps)


def build_image(client: docker.DockerClient, context: Path, dockerfile: str, tag: str, *,
                labels: dict[str, str] | None = None, nocache: bool = False) -> Built:  # fmt: skip
    """Build `context` with `dockerfile` (a path inside it) into `tag`; BuildError with the log on failure."""
    started = time.monotonic()
    lines: list[str] = []
    stream = client.api.build(path=str(context), dockerfile=dockerfile, tag=tag, labels=labels, rm=True,
                              forcerm=True, nocache=nocache, decode=True)  # fmt: skip
    for chunk in stream:
        if "stream" in chunk:
            lines.append(str(chunk["stream"]))
        if "error" in chunk:
            log = "".join(lines)
            raise BuildError(f"{tag}: {chunk['error']}\n{log[-4000:]}", iter([]))
    log = "".join(lines)
    return Built(tag, time.monotonic() - started, _steps(log), log)
