"""Debian packages a test needs (a browser, a load balancer, a PostgreSQL), installed with
apt-get when missing, as `.ci/run` does, so `./check` stays the only command."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from typing import TypeVar

from tests.support.once import machine_lock

Found = TypeVar("Found")


class PackageUnavailable(RuntimeError):
    """The package is missing and cannot be installed here (not root, no apt-get, apt failed)."""


def ensure_package(package: str, find: Callable[[], Found | None]) -> Found:
    """What `find` finds, after `apt-get install package` when it finds nothing at first."""
    found = find()
    if found is not None:
        return found
    with machine_lock("apt-get"):  # apt-get refuses to run beside another; parallel workers wait
        return _install(package, find)


def _install(package: str, find: Callable[[], Found | None]) -> Found:
    found = find()  # another worker may have installed it while this one waited
    if found is not None:
        return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise PackageUnavailable(f"{package} is missing and this user cannot install it: apt-get install {package}")
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}

    def apt_get(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["apt-get", *args], env=environment, capture_output=True, text=True, timeout=900,
                              check=False)  # fmt: skip

    install = ("install", "-y", "-qq", "--no-install-recommends", package)
    if apt_get(*install).returncode != 0:  # a fresh machine's package lists may be empty or stale
        apt_get("update", "-qq")
        done = apt_get(*install)
        if done.returncode != 0:
            raise PackageUnavailable(f"apt-get install {package} failed: {done.stderr[-2000:]}")
    found = find()
    if found is None:
        raise PackageUnavailable(f"apt-get install {package} ran, but what the test needs of it is not there")
    return found
