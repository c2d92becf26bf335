"""What parallel test workers (pytest-xdist) must not do at the same time, or should do only once.

The suite runs in several worker processes. A session fixture runs once per worker, so work
that touches something machine-wide (apt-get's lock, a system user, a build in the checkout)
takes a file lock, and work whose result every worker can use (a wheel in a fresh venv) is done
by the first worker that needs it and reused by the others.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from filelock import FileLock

# Generous: the longest thing done under a lock is an apt-get install on a fresh machine.
_LOCK_TIMEOUT_SECONDS = 1200


@contextmanager
def machine_lock(name: str) -> Iterator[None]:
    """Held by one process of the machine at a time (any test run's), named `name`."""
    with FileLock(Path(tempfile.gettempdir()) / f"nearrpc-tests-{name}.lock", timeout=_LOCK_TIMEOUT_SECONDS):
        yield


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of this whole test run, shared by its workers.

    Each xdist worker's base folder (`…/pytest-N/popen-gw0`) sits in the run's (`…/pytest-N`);
    without xdist the base folder is the run's own.
    """
    base = tmp_path_factory.getbasetemp()
    return base.parent if "PYTEST_XDIST_WORKER" in os.environ else base


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder `name` of this run, filled by `build(folder)` by the first worker that asks;
    the others wait for it and reuse it. A build that failed is tried again by the next one."""
    folder = run_folder(tmp_path_factory) / name
    with FileLock(folder.with_name(f"{name}.lock"), timeout=_LOCK_TIMEOUT_SECONDS):
        done = folder / ".built"
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            done.touch()
    return folder
