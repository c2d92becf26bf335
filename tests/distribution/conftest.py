"""The built wheel, installed into a fresh virtual environment once per test run."""

from __future__ import annotations

import sys
import venv
from pathlib import Path

import pytest

from tests.distribution.venvs import run
from tests.support.once import built_once

REPO = Path(__file__).resolve().parents[2]


def _wheel_in_a_fresh_venv(folder: Path) -> None:
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", folder / "dist", REPO, cwd=folder)
    (wheel,) = (folder / "dist").glob("nearrpc-*.whl")
    venv.EnvBuilder(with_pip=True).create(folder / "venv")
    bin_dir = folder / "venv" / "bin"
    run(bin_dir / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel, cwd=folder)


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel of this tree installed; its bin/ folder. The build writes into
    the checkout (setuptools' build/), so parallel workers build it once and share it."""
    return built_once(tmp_path_factory, "wheel", _wheel_in_a_fresh_venv) / "venv" / "bin"
