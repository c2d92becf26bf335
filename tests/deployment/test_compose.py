"""The deployment files: deploy/compose.yaml has what docs/DEPLOYMENT.md says it has (its
structure, here; tests/container/test_compose.py brings it up), and deploy/haproxy.cfg is valid
for HAProxy."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.support.balancer import DEPLOYED_CONFIG, ensure_haproxy

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    return document


def test_compose_file_has_a_database_a_loader_two_replicas_and_a_balancer() -> None:
    services = compose()["services"]
    assert set(services) == {"postgres", "store", "replica1", "replica2", "balancer"}
    assert services["postgres"]["image"].startswith("postgres:")
    assert "healthcheck" in services["postgres"]
    # one image for every nearrpc service, built by the store job alone
    assert services["store"]["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}
    for name in ("store", "replica1", "replica2"):
        service = services[name]
        assert service["image"] == "${NEARRPC_IMAGE:-nearrpc:latest}"
        assert name == "store" or "build" not in service
        environment = service["environment"]
        assert environment["NEARRPC_STORE"].startswith("postgresql://nearrpc@postgres:5432/")
        assert ":" not in environment["NEARRPC_STORE"].split("//", 1)[1].split("@", 1)[0]  # no password in it
        assert environment["PGPASSWORD"].startswith("${POSTGRES_PASSWORD:?")  # required, no default
        assert all(isinstance(value, str) for value in environment.values())
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD"].startswith("${POSTGRES_PASSWORD:?")
    # the health check goes over the network, not the local socket
    assert '--host="$$(hostname)"' in services["postgres"]["healthcheck"]["test"][1]
    assert services["store"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert "nearrpc store copy" in services["store"]["command"][0]
    for name in ("replica1", "replica2"):
        assert services[name]["depends_on"] == {"store": {"condition": "service_completed_successfully"}}
        assert services[name]["environment"]["NEARRPC_HOST"] == "0.0.0.0"
    balancer = services["balancer"]
    assert balancer["image"].startswith("haproxy:") and balancer["ports"] == ["${NEARRPC_PUBLISH:-3030}:3030"]
    mounted = balancer["volumes"][0].split(":")
    assert (DEPLOY / mounted[0]).resolve() == DEPLOYED_CONFIG and mounted[1] == "/usr/local/etc/haproxy/haproxy.cfg"
    assert set(balancer["depends_on"]) == {"replica1", "replica2"}
    assert (DEPLOY / "Dockerfile").is_file() and "pgdata" in compose()["volumes"]


def test_haproxy_config_is_valid_and_checks_health_and_retries() -> None:
    text = DEPLOYED_CONFIG.read_text()
    for line in ("option httpchk GET /health", "option http-buffer-request", "option redispatch 1",
                 "retry-on conn-failure empty-response response-timeout 502 503 504"):  # fmt: skip
        assert f"    {line}\n" in text, line
    checked = subprocess.run([ensure_haproxy(), "-c", "-f", str(DEPLOYED_CONFIG)],
                             capture_output=True, text=True, check=False)  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
