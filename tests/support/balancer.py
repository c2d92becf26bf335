"""A real HAProxy (Debian's package, installed when missing) in front of nearrpc replicas on
127.0.0.1: active health checks on /health, and failed requests retried on another replica.

The configuration is deploy/haproxy.cfg, the one docs/DEPLOYMENT.md describes, with loopback
addresses and test-sized check intervals.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.support.debian import PackageUnavailable, ensure_package
from tests.support.live_server import free_port


def ensure_haproxy() -> str:
    """The haproxy binary; installed with apt-get (as root) when missing, as `.ci/run` does."""
    try:
        return ensure_package("haproxy", lambda: shutil.which("haproxy"))
    except PackageUnavailable as unavailable:
        pytest.fail(str(unavailable))


DEPLOYED_CONFIG = Path(__file__).resolve().parents[2] / "deploy" / "haproxy.cfg"


def haproxy_config(port: int, replicas: list[str], *, check_interval: str) -> str:
    """deploy/haproxy.cfg as it is, but listening on 127.0.0.1:`port`, over `replicas`
    ("host:port" addresses, so no DNS resolvers), checking every `check_interval`."""
    config = DEPLOYED_CONFIG.read_text()
    config = config.replace("    bind :3030\n", f"    bind 127.0.0.1:{port}\n")
    config = re.sub(r" inter \S+ ", f" inter {check_interval} ", config)
    config = config.replace(" resolvers docker", "")
    config = config.split("\nresolvers docker\n")[0] + "\n"
    servers = "".join(
        f"    server replica{index} {address} check\n" for index, address in enumerate(replicas, start=1)
    )
    config, count = re.subn(r"(    server replica\d+ \S+ check\n)+", servers, config)
    assert count == 1 and f"bind 127.0.0.1:{port}" in config and f"inter {check_interval}" in config, config
    return config


@contextmanager
def running_haproxy(folder: Path, replicas: list[str]) -> Iterator[str]:
    """HAProxy in the foreground over `replicas`; yields its URL."""
    binary = ensure_haproxy()
    port = free_port()
    config = folder / "haproxy.cfg"
    config.write_text(haproxy_config(port, replicas, check_interval="300ms"))
    checked = subprocess.run([binary, "-c", "-f", str(config)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    log = (folder / "haproxy.log").open("wb")
    process = subprocess.Popen([binary, "-db", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None, (folder / "haproxy.log").read_text()
            assert time.monotonic() < deadline, "haproxy did not come up"
            time.sleep(0.1)
        yield url
    finally:
        process.send_signal(signal.SIGUSR1)  # graceful stop
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
