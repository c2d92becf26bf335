"""Node tools the tests run, pinned by a package.json + package-lock.json folder in tests/.

`npm ci` installs a folder's lock into .cache/ once per lock file's content; parallel workers
take a file lock, one installs (into a staging folder renamed into place, so whole or not at
all) and the others wait for it. node and npm come from the system's packages when missing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from functools import partial
from pathlib import Path

from filelock import FileLock

from tests.support.cli import REPO
from tests.support.debian import ensure_package

NPM_CACHE = REPO / ".cache"


def ensure_node() -> None:
    """node and npm, installed from the system's packages when missing (as .ci/run does)."""
    for package, program in (("nodejs", "node"), ("npm", "npm")):
        ensure_package(package, partial(shutil.which, program))


def pinned_tools(folder: Path, name: str, program: str) -> Path:
    """node_modules/.bin of `folder`'s pinned packages, installed as `name` in .cache/ unless
    `program` (one of the packages' commands) is already there."""
    return _installed(folder, name, Path(".bin") / program) / ".bin"


def pinned_packages(folder: Path, name: str, package: str) -> Path:
    """node_modules of `folder`'s pinned packages (for a script that imports them), installed as
    `name` in .cache/ unless `package` (one of them) is already there."""
    return _installed(folder, name, Path(package) / "package.json")


def _installed(folder: Path, name: str, marker: Path) -> Path:
    """node_modules of `folder`'s lock installed in .cache/, `npm ci` first unless `marker` (a
    path inside node_modules) is there."""
    ensure_node()
    lock = (folder / "package-lock.json").read_bytes()
    target = NPM_CACHE / f"{name}-npm-{hashlib.sha256(lock).hexdigest()[:16]}"
    modules = target / "node_modules"
    NPM_CACHE.mkdir(exist_ok=True)
    with FileLock(NPM_CACHE / f"{target.name}.lock"):  # parallel workers: one installs, the others wait
        if not (modules / marker).exists():
            _npm_ci(folder, target)
    return modules


def _npm_ci(folder: Path, target: Path) -> None:
    staging = NPM_CACHE / f"{target.name}.partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(folder / name, staging / name)
    done = subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=staging, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)  # whole or not at all
