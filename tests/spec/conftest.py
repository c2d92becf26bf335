"""Fixtures of the spec tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.fixture()
def scratch_repo(tmp_path: Path) -> Path:
    """A copy of spec/ and generated/ to modify."""
    for folder in ("spec", "generated"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    return tmp_path
