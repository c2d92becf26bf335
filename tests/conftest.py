"""Shared test fixtures: repository paths and the optional ../shared reference data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def reference_dir() -> Path:
    """nearcore reference data: $NEARRPC_REFERENCE_DIR, else ../shared/reference beside the repo."""
    return Path(os.environ.get("NEARRPC_REFERENCE_DIR", REPO.parent / "shared" / "reference"))


@pytest.fixture(scope="session")
def reference() -> Path:
    path = reference_dir()
    if not (path / "nearcore-openapi.json").is_file():
        pytest.skip(f"nearcore reference data not found at {path} (set NEARRPC_REFERENCE_DIR); it exists in CI")
    return path
