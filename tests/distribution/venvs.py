"""Running commands of a fresh virtual environment."""

from __future__ import annotations

import subprocess
from pathlib import Path


def run(*command: str | Path, cwd: Path, timeout: float = 600) -> str:
    """The command's stdout; a failure shows its whole output."""
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout
