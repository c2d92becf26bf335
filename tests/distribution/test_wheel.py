"""The built wheel, installed (not editable) into a fresh virtual environment: it adds one
import namespace, `nearrpc`, and nothing generic, and `nearrpc serve` answers from it."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import httpx

from tests.distribution.venvs import run
from tests.support.live_server import running_server

REPO = Path(__file__).resolve().parents[2]


def _declared_packages() -> set[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return set(config["tool"]["setuptools"]["packages"])


def test_every_package_folder_is_declared() -> None:
    on_disk = {"nearrpc.generated"} | {
        ".".join(["nearrpc", *init.parent.relative_to(REPO / "service").parts])
        for init in (REPO / "service").rglob("__init__.py")
    }
    assert _declared_packages() == on_disk


def test_the_wheel_adds_only_the_nearrpc_namespace(installed: Path) -> None:
    files = run(
        installed / "python",
        "-c",
        "import importlib.metadata as m; print('\\n'.join(str(f) for f in m.distribution('nearrpc').files))",
        cwd=installed,
    ).split()
    top_level = {name.split("/")[0] for name in files}
    assert top_level == {"nearrpc", "nearrpc-0.1.0.dist-info", ".."}, top_level  # ".." is bin/nearrpc
    assert {name for name in files if name.startswith("..")} == {"../../../bin/nearrpc"}
    assert "nearrpc/generated/openapi.json" in files
    assert "nearrpc/generated/openrpc.json" in files  # GET /openrpc.json and rpc.discover serve it
    assert any(name.startswith("nearrpc/runtime_params/data/") for name in files)
    # the sample contracts and their source (nearrpc sample deploys the built bytes)
    assert {"nearrpc/sample/contracts/counter.wasm", "nearrpc/sample/contracts/ft.wasm"} <= set(files)
    # the host-call crossing's C extension, built for this Python and chosen at import
    assert any(name.startswith("nearrpc/contracts/_crossing.") and name.endswith(".so") for name in files), files
    native = run(
        installed / "python", "-c", "from nearrpc.contracts import wasm_api; print(wasm_api.NATIVE)", cwd=installed
    )
    assert native.strip() == "True"
    for generic in ("service", "generated", "tools", "tests"):
        probe = subprocess.run([installed / "python", "-c", f"import {generic}"], cwd=installed, capture_output=True)
        assert probe.returncode != 0, f"`import {generic}` works in a fresh venv with nearrpc installed"


def test_the_installed_command_serves_block(installed: Path, tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    # serve builds the sample chain only at its default path: an explicit store is made first
    run(installed / "nearrpc", "sample", store, cwd=tmp_path)
    command = [str(installed / "nearrpc")]
    with running_server(store, tmp_path / "serve.log", command=command, cwd=tmp_path) as server:
        body = {"jsonrpc": "2.0", "id": 1, "method": "block", "params": {"finality": "final"}}
        answer = httpx.post(server.url, json=body, timeout=10)
        # the docs page's assets and the metrics come with the installed dependencies
        assert httpx.get(f"{server.url}/docs/assets/swagger-ui-bundle.js", timeout=10).status_code == 200
        assert "nearrpc_rpc_requests_total" in httpx.get(f"{server.url}/metrics", timeout=10).text
    assert answer.status_code == 200
    assert answer.json()["result"]["header"]["height"] > 0
