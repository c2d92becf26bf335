"""The drift gate run on a scratch copy of spec/ and generated/ (the `scratch_repo` fixture)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def regenerate(repo: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """`python -m tools.regenerate` from `repo`'s spec into its generated/ (and spec/CHANGES.md)."""
    command = [sys.executable, "-m", "tools.regenerate", "--spec", str(repo / "spec" / "openapi.json")]
    command += ["--out", str(repo / "generated"), *extra]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
