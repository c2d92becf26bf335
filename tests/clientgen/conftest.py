"""The client generators a client author runs on spec/openapi.json, run the same way here.

Python: openapi-python-client (pinned in pyproject's `clientgen` extra) generates a client
project into a temporary folder, pip installs it there (no index: its dependencies, httpx and
attrs, are already installed) and the tests import it. TypeScript: openapi-typescript and tsc,
pinned by package-lock.json beside this file, installed with `npm ci` into .cache/ when missing
(tests/support/npm.py).
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO
from tests.support.live_server import LiveServer, running_server
from tests.support.npm import pinned_tools
from tests.support.stores import create_empty_store

SPEC = REPO / "spec" / "openapi.json"
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class GeneratedPythonClient:
    project: Path  # where the generator wrote the client project
    returncode: int
    report: str  # everything the generator printed
    package: ModuleType

    def module(self, name: str) -> ModuleType:
        return importlib.import_module(f"{self.package.__name__}.{name}")


def _run(
    command: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="session")
def python_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GeneratedPythonClient]:
    folder = tmp_path_factory.mktemp("python-client")
    project = folder / "client"
    # the generator's post-hooks run `ruff`: the pinned one, from this environment
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [sys.executable, "-m", "openapi_python_client", "generate", "--path", str(SPEC)]
    generated = _run([*command, "--output-path", str(project), "--fail-on-warning"], env=env)
    report = generated.stdout + generated.stderr
    # with warnings it still writes a client (minus the dropped schemas); the tests say what broke
    assert (project / "pyproject.toml").is_file(), report

    site = folder / "site"
    installed = _run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index",
         "--no-deps", "--no-build-isolation", "--target", str(site), str(project)]
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    (name,) = [path.name for path in site.iterdir() if (path / "__init__.py").is_file()]

    sys.path.insert(0, str(site))
    try:
        yield GeneratedPythonClient(project, generated.returncode, report, importlib.import_module(name))
    finally:
        sys.path.remove(str(site))
        for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
            del sys.modules[module]


@pytest.fixture(scope="session")
def empty_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server over a store with no data: every method answers INTERNAL_ERROR."""
    folder = tmp_path_factory.mktemp("empty-server")
    create_empty_store(folder / "empty.sqlite")
    with running_server(folder / "empty.sqlite", folder / "server.log") as live:
        yield live


@pytest.fixture(scope="session")
def node_tools() -> Path:
    """node_modules/.bin with the pinned openapi-typescript and tsc (`npm ci` once per lock file)."""
    return pinned_tools(HERE, "clientgen", "tsc")
