"""Run the `nearrpc` command in a real process, as a user does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def nearrpc(
    *args: str | Path, env: dict[str, str] | None = None, timeout: float = 600, cwd: Path = REPO
) -> subprocess.CompletedProcess[str]:
    """`python -m nearrpc ARGS` in `cwd` with no NEARRPC_* variables but `env`; never raises on
    a non-zero exit."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("NEARRPC_")}
    return subprocess.run(
        [sys.executable, "-m", "nearrpc", *map(str, args)],
        cwd=cwd, env={**clean, **(env or {})}, capture_output=True, text=True, timeout=timeout, check=False,
    )
