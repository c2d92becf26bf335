"""TypeScript types generated from spec/openapi.json by openapi-typescript type-check a small
client (ts/client.ts) and catch the mistakes in ts/misuse.ts, under `tsc --strict`."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.clientgen.conftest import HERE, SPEC

TSC_FLAGS = ["--strict", "--noEmit", "--target", "es2022", "--module", "es2022", "--moduleResolution", "bundler",
             "--lib", "es2022,dom"]  # fmt: skip


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def test_generated_types_type_check_a_client(node_tools: Path, tmp_path: Path, record_property: Any) -> None:
    work = tmp_path / "ts"
    shutil.copytree(HERE / "ts", work)
    schema = work / "schema.d.ts"

    generated = _run([str(node_tools / "openapi-typescript"), str(SPEC), "--output", str(schema)], cwd=work)
    record_property("terminal_summary", f"openapi-typescript on {SPEC.name}:\n{generated.stdout.rstrip()}")
    assert generated.returncode == 0 and generated.stderr == "", generated.stdout + generated.stderr
    pinned = json.loads((HERE / "package.json").read_text(encoding="utf-8"))["devDependencies"]
    banner = rf"✨ openapi-typescript {re.escape(pinned['openapi-typescript'])}\n"
    success = rf"🚀 {re.escape(str(SPEC))} → {re.escape(str(schema))} \[[\d.]+m?s\]\n"
    assert re.fullmatch(banner + success, generated.stdout), generated.stdout  # nothing else: no warning

    # every method's request and answer types are there, with the schemas' own names
    declarations = schema.read_text(encoding="utf-8")
    for name in ("GenesisConfig", "RpcClientConfigResponse", "RpcBlockResponse", "RpcProtocolConfigResponse",
                 "RpcViewAccountResponse", "ErrorWrapper_for_RpcViewAccountError", "RpcStatusResponse",
                 "RpcGasPriceResponse", "RpcQueryResponse", "RpcViewAccessKeyListResponse"):  # fmt: skip
        assert f"        {name}: " in declarations, name

    checked = _run([str(node_tools / "tsc"), *TSC_FLAGS, "client.ts", "misuse.ts"], cwd=work)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout == ""
