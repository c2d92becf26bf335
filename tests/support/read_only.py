"""A really read-only folder for a process, even as root (for whom permission bits do not
count): the process runs in its own mount namespace where the folder is bind-mounted over
itself read-only, so every write there fails with EROFS, as on a read-only volume."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

# $0 is the folder, the rest the command; util-linux unshare makes mounts private by default.
# `cd "$PWD"` enters the read-only mount when the command runs inside the folder (the working
# directory was entered before the mount, so it still points at the writable folder beneath).
_SCRIPT = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && cd "$PWD" && exec "$@"'


def read_only_wrapper(folder: Path) -> list[str]:
    """Prefix a command with this to run it with `folder` read-only."""
    unshare = shutil.which("unshare")
    if unshare is None:
        raise RuntimeError("unshare (util-linux) is needed to run a process with a read-only folder")
    return [unshare, "--mount", "sh", "-c", _SCRIPT, str(folder)]


def assert_read_only(folder: Path) -> None:
    """The wrapper really makes the folder read-only (as root, too)."""
    probe = subprocess.run([*read_only_wrapper(folder), "touch", str(folder / "probe")],
                           capture_output=True, text=True, timeout=30, check=False)
    assert probe.returncode != 0 and "Read-only file system" in probe.stderr, (probe.returncode, probe.stderr)
    assert not (folder / "probe").exists()
