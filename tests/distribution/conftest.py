"""The built wheel, installed into a fresh virtual environment once per session."""

from __future__ import annotations

import sys
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.distribution.venvs import run

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv with the wheel of this tree installed; yields its bin/ folder."""
    folder = tmp_path_factory.mktemp("wheel")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", folder / "dist", REPO, cwd=folder)
    (wheel,) = (folder / "dist").glob("nearrpc-*.whl")
    venv.EnvBuilder(with_pip=True).create(folder / "venv")
    bin_dir = folder / "venv" / "bin"
    run(bin_dir / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel, cwd=folder)
    yield bin_dir
