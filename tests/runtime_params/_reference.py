"""Where nearcore's runtime parameter reference files are (outside the repo, optional)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENV_VAR = "NEARRPC_REFERENCE_DIR"


def runtime_configs_dir() -> Path:
    """`$NEARRPC_REFERENCE_DIR/runtime_configs`, else `<repo>/../shared/reference/runtime_configs`.

    Like tests/conftest.py, the variable names the `reference` folder; a path that already is
    the `runtime_configs` folder is accepted too.
    """
    override = os.environ.get(ENV_VAR)
    base = Path(override) if override else REPO.parent / "shared" / "reference"
    if (base / "parameters.yaml").is_file():
        return base
    return base / "runtime_configs"


def missing_reason(path: Path) -> str | None:
    """Why the reference folder cannot be used, or None if it can."""
    if not (path / "parameters.yaml").is_file():
        return (
            f"nearcore runtime_configs reference folder not found at {path} "
            f"(set {ENV_VAR} to the shared 'reference' folder)"
        )
    return None
