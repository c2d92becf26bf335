"""Regenerate `generated/` from `spec/openapi.json`; with --check, fail on drift.

    python -m tools.regenerate            # write generated/
    python -m tools.regenerate --check    # exit 1 with a diff when generated/ is stale

Needs the code generators: `pip install -e '.[codegen]'`.

generated/ holds: models.py (datamodel-codegen, options in pyproject.toml
[tool.datamodel-codegen]), methods.py / handlers.py / routes.py (tools.stubgen),
openapi.json (a byte copy of the spec, so the installed service can serve and validate it),
openrpc.json (the same interface as an OpenRPC document, `tools.openrpc`, served as
GET /openrpc.json and by `rpc.discover`) and __init__.py. Nothing in generated/ is edited by hand.

Beside the spec it writes spec/openrpc.json, the same bytes as generated/openrpc.json, for
readers of the repository; `--check` fails when it is stale.

Beside generated/, it writes the interface changelog, spec/CHANGES.md (`tools.spec_changes`),
for a spec that keeps one; `--check` fails when either is stale.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tools import openrpc, spec_changes

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SPEC = REPO / "spec" / "openapi.json"
DEFAULT_OUT = REPO / "generated"
INIT_TEXT = '"""Generated from spec/openapi.json by `python -m tools.regenerate`. Do not edit."""\n'
INSTALL_HINT = "the code generators are not installed: pip install -e '.[codegen]'"


class GenerationError(Exception):
    pass


def _datamodel_codegen() -> str:
    beside = Path(sys.executable).with_name("datamodel-codegen")
    found = str(beside) if beside.exists() else shutil.which("datamodel-codegen")
    if found is None:
        raise GenerationError(INSTALL_HINT)
    return found


def run_datamodel_codegen(spec_path: Path, output: Path) -> str:
    """Run datamodel-codegen with the options from pyproject.toml; return the model source."""
    command = [_datamodel_codegen(), "--input", str(spec_path), "--output", str(output)]
    # pyproject.toml is found from the working directory; its warnings about unknown
    # integer formats (uint64, ...) are expected and carry no information
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise GenerationError(f"datamodel-codegen failed:\n{done.stderr}")
    text = output.read_text(encoding="utf-8")
    # the generator names its input file in a comment; keep it stable whatever the path
    return text.replace(f"#   filename:  {output.parent.name}", "#   filename:  ").replace(
        f"#   filename:  {spec_path.name}", "#   filename:  openapi.json"
    )


def render_generated(spec_path: Path) -> dict[str, bytes]:
    """Every file of generated/, as bytes, from the spec at spec_path."""
    try:
        from tools import stubgen
    except ModuleNotFoundError as missing:
        raise GenerationError(f"{INSTALL_HINT} ({missing})") from None
    spec_bytes = spec_path.read_bytes()
    spec = json.loads(spec_bytes)
    files: dict[str, bytes] = {"__init__.py": INIT_TEXT.encode(), "openapi.json": spec_bytes}
    try:
        files["openrpc.json"] = openrpc.render(spec_bytes)
    except (openrpc.OpenRpcError, KeyError, StopIteration) as exc:
        raise GenerationError(f"cannot describe {spec_path.name} as OpenRPC: {exc!r}") from None
    with tempfile.TemporaryDirectory() as tmp:
        files["models.py"] = run_datamodel_codegen(spec_path, Path(tmp) / "models.py").encode()
    for name, text in stubgen.render_all(spec).items():
        files[name] = text.encode()
    return files


def drift(expected: dict[str, bytes], out_dir: Path) -> list[str]:
    """Unified diffs between what should be in out_dir and what is there."""
    diffs: list[str] = []
    present = {p.name for p in out_dir.iterdir() if p.is_file()} if out_dir.is_dir() else set()
    for name in sorted(set(expected) | (present - {"py.typed"})):
        want = expected.get(name, b"").decode()
        path = out_dir / name
        have = path.read_text(encoding="utf-8") if path.is_file() else ""
        if want != have:
            diffs.extend(
                difflib.unified_diff(
                    have.splitlines(True), want.splitlines(True), f"{out_dir.name}/{name} (on disk)",
                    f"{out_dir.name}/{name} (from spec)",
                )
            )
    return diffs


def write(expected: dict[str, bytes], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob("*.py"):
        if stale.name not in expected:
            stale.unlink()
    for name, data in expected.items():
        (out_dir / name).write_bytes(data)
    (out_dir / "py.typed").write_bytes(b"")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.regenerate", description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=DEFAULT_SPEC)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="exit 1 with a diff when --out is stale")
    args = parser.parse_args(argv)
    try:
        expected = render_generated(args.spec)
    except (GenerationError, ValueError, KeyError, OSError) as exc:
        print(f"regenerate: {exc}", file=sys.stderr)
        return 2
    if args.check:
        return _check(expected, args.out, args.spec)
    write(expected, args.out)
    print(f"regenerate: wrote {len(expected)} files to {args.out}")
    openrpc_path(args.spec).write_bytes(expected["openrpc.json"])
    print(f"regenerate: wrote {openrpc_path(args.spec)}")
    if spec_changes.has_changelog(args.spec):
        changes = spec_changes.changes_path(args.spec)
        changes.write_text(spec_changes.render_changes(args.spec), encoding="utf-8")
        print(f"regenerate: wrote {changes}")
    return 0


def _check(expected: dict[str, bytes], out_dir: Path, spec_path: Path) -> int:
    diffs = drift(expected, out_dir)
    diffs.extend(openrpc_drift(spec_path, expected["openrpc.json"]))
    if spec_changes.has_changelog(spec_path):
        diffs.extend(changelog_drift(spec_path))
    if diffs:
        sys.stdout.writelines(diffs)
        stale = f"{out_dir}, {openrpc_path(spec_path).name} or the changelog is stale"
        print(f"\nregenerate: {stale}; run `python -m tools.regenerate`", file=sys.stderr)
        return 1
    print(f"regenerate: {out_dir} matches {spec_path}")
    return 0


def openrpc_path(spec_path: Path) -> Path:
    """Where the OpenRPC document of a spec lives: beside it."""
    return spec_path.with_name("openrpc.json")


def openrpc_drift(spec_path: Path, want: bytes) -> list[str]:
    """A unified diff between the OpenRPC document beside the spec and what the spec makes of it."""
    path = openrpc_path(spec_path)
    have = path.read_text(encoding="utf-8") if path.is_file() else ""
    names = (f"{path.name} (on disk)", f"{path.name} (from spec)")
    return list(difflib.unified_diff(have.splitlines(True), want.decode().splitlines(True), *names))


def changelog_drift(spec_path: Path) -> list[str]:
    """A unified diff between spec/CHANGES.md and what the records and the spec make of it."""
    path = spec_changes.changes_path(spec_path)
    have = path.read_text(encoding="utf-8") if path.is_file() else ""
    want = spec_changes.render_changes(spec_path)
    names = (f"{path.name} (on disk)", f"{path.name} (from spec)")
    return list(difflib.unified_diff(have.splitlines(True), want.splitlines(True), *names))


if __name__ == "__main__":
    raise SystemExit(main())
