"""Running this folder's near-api-js scripts as an application's own folder runs them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SHARED = HERE / "provider.mjs"  # what the scripts import


def run_script(script: Path, modules: Path, folder: Path, *args: str) -> dict[str, Any]:
    """The one JSON object `script` printed, run with node from `folder`, whose `node_modules` is
    the pinned install (so `import ... from 'near-api-js'` finds it)."""
    for source in (script, SHARED):
        shutil.copyfile(source, folder / source.name)
    (folder / "node_modules").symlink_to(modules, target_is_directory=True)
    done = subprocess.run(
        ["node", script.name, *args], cwd=folder, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    answers: dict[str, Any] = json.loads(done.stdout)
    return answers
