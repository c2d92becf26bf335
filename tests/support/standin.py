"""Stand-ins for the public base images the deployment files name, built from this machine's
Debian packages: no image registry is reachable here, so `docker build` and compose could not
pull them.

A Debian bookworm root is made once with debootstrap from the machine's own apt mirror (read
from its apt sources at run time), trusting the machine's locally added CA certificates (the
proxy through which containers reach the package registries), and imported as
`nearrpc-standin/debian:bookworm`. Each stand-in is a small Dockerfile over it
(tests/container/standins/) that installs the Debian packages playing the public image, tagged
with that image's name, so deploy/Dockerfile and deploy/compose.yaml are used unchanged.

The root is cached as a tarball under ~/.cache/nearrpc-tests (XDG_CACHE_HOME), named by a hash of
everything it is made from, and the images carry that hash as a label: a later run imports the
tarball, or finds the images, instead of running debootstrap again. An image of the public name
that is not a stand-in (pulled where a registry is reachable) is used as it is.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import docker
from docker.errors import ImageNotFound

from tests.support.debian import ensure_package
from tests.support.image_build import build_image
from tests.support.once import machine_lock

LABEL = "org.nearrpc.standin"
BASE = "nearrpc-standin/debian:bookworm"
SUITE = "bookworm"
STANDIN_FOLDER = Path(__file__).resolve().parents[1] / "container" / "standins"
# public image name -> the Dockerfile under STANDIN_FOLDER that plays it
STANDINS = {
    "python:3.11-slim-bookworm": "python.Dockerfile",
    "postgres:15-bookworm": "postgres.Dockerfile",
    "haproxy:2.6-bookworm": "haproxy.Dockerfile",
}
_LOCAL_CA = Path("/usr/local/share/ca-certificates")
# raise to rebuild every cached root (a change of how the root is made)
_RECIPE = "debootstrap minbase + ca-certificates + local CAs, v1"


def apt_mirror() -> str:
    """The URI of this machine's apt source for Debian's main suite (deb822 or one-line lists)."""
    sources = Path("/etc/apt")
    for path in sorted((sources / "sources.list.d").glob("*.sources")):
        for stanza in path.read_text().split("\n\n"):
            lines = [line for line in stanza.splitlines() if ":" in line and not line.startswith("#")]
            fields = dict(line.split(":", 1) for line in lines)
            suites = fields.get("Suites", "").split()
            if "deb" in fields.get("Types", "").split() and SUITE in suites:
                return fields["URIs"].split()[0]
    for path in [sources / "sources.list", *sorted((sources / "sources.list.d").glob("*.list"))]:
        for line in path.read_text().splitlines() if path.is_file() else []:
            words = [word for word in line.split() if not word.startswith("[")]
            if len(words) >= 3 and words[0] == "deb" and words[2] == SUITE:
                return words[1]
    raise RuntimeError(f"no apt source for Debian {SUITE} in /etc/apt: the stand-in base images need one")


def _local_cas() -> list[Path]:
    return sorted(_LOCAL_CA.rglob("*.crt")) if _LOCAL_CA.is_dir() else []


def base_key() -> str:
    digest = hashlib.sha256(f"{_RECIPE}\n{SUITE}\n{apt_mirror()}\n".encode())
    for ca in _local_cas():
        digest.update(ca.name.encode() + b"\0" + ca.read_bytes())
    return digest.hexdigest()[:24]


def cache_folder() -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "nearrpc-tests"


def _labelled(client: docker.DockerClient, tag: str) -> str | None:
    """The stand-in label of the image `tag` ("" for an image that is no stand-in), None if absent."""
    try:
        labels = client.images.get(tag).labels or {}
    except ImageNotFound:
        return None
    return str(labels.get(LABEL, ""))


def _debootstrap_tarball(tarball: Path) -> None:
    debootstrap = ensure_package("debootstrap", lambda: shutil.which("debootstrap"))
    with tempfile.TemporaryDirectory(prefix="nearrpc-standin-") as folder:
        root = Path(folder) / "root"
        done = subprocess.run([debootstrap, "--variant=minbase", "--include=ca-certificates", SUITE, str(root),
                               apt_mirror()], capture_output=True, text=True, timeout=1200, check=False)  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"debootstrap failed: {(done.stdout + done.stderr)[-2000:]}")
        for ca in _local_cas():
            target = root / ca.relative_to("/").as_posix()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ca, target)
        subprocess.run(["chroot", str(root), "update-ca-certificates"], capture_output=True, timeout=120, check=True)
        for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for path in (root / leftover).glob("*"):
                if path.is_file():
                    path.unlink()
        partial = tarball.with_suffix(".partial")
        subprocess.run(["tar", "--numeric-owner", "-C", str(root), "-cf", str(partial), "."], timeout=600, check=True)
        partial.rename(tarball)


def ensure_base(client: docker.DockerClient) -> str:
    """The stand-in Debian root image (imported from the cached tarball, made when missing); its key."""
    key = base_key()
    if _labelled(client, BASE) == key:
        return key
    folder = cache_folder()
    folder.mkdir(parents=True, exist_ok=True)
    tarball = folder / f"debian-{SUITE}-{key}.tar"
    if not tarball.is_file():
        _debootstrap_tarball(tarball)
    repository, tag = BASE.split(":")
    changes = [f"LABEL {LABEL}={key}", "ENV LANG=C.UTF-8",
               # pip trusts the system's CA bundle, which holds the machine's proxy CA
               "ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt", 'CMD ["bash"]']  # fmt: skip
    client.api.import_image_from_file(str(tarball), repository=repository, tag=tag, changes=changes)
    return key


def ensure_standins(client: docker.DockerClient, *names: str) -> None:
    """The images `names` (keys of STANDINS): a public image already here is kept; otherwise its
    stand-in is built (Docker's layer cache makes a repeat take seconds)."""
    with machine_lock("docker-standins"):
        missing = [name for name in names if _labelled(client, name) != ""]
        if not missing:
            return
        key = ensure_base(client)
        for name in missing:
            build_image(client, STANDIN_FOLDER, STANDINS[name], name, labels={LABEL: key})
