"""Build the sample chain's contracts from their WAT source; with --check, fail on drift.

    python -m tools.build_contracts            # write each contracts/NAME.wasm beside NAME.wat
    python -m tools.build_contracts --check    # exit 1 naming each .wasm that differs

The source is service/sample/contracts/*.wat; wasmtime's wat2wasm (the `wasmtime` package, pinned
in pyproject.toml) turns it into the same bytes on every run, so the committed .wasm files are
checked against their source in ./check, as generated/ is against the spec.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import wasmtime

CONTRACTS = Path(__file__).resolve().parent.parent / "service" / "sample" / "contracts"


def build(source: Path) -> bytes:
    """The module the WAT file at `source` describes."""
    return bytes(wasmtime.wat2wasm(source.read_text(encoding="utf-8")))


def sources(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.wat"))


def stale(directory: Path) -> list[Path]:
    """The .wasm files in `directory` that are missing or differ from their source's build."""
    out = []
    for source in sources(directory):
        target = source.with_suffix(".wasm")
        if not target.is_file() or target.read_bytes() != build(source):
            out.append(target)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.build_contracts", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a committed .wasm differs from its source")
    parser.add_argument("--dir", type=Path, default=CONTRACTS, help="the folder of .wat sources")
    args = parser.parse_args(argv)
    if not sources(args.dir):
        print(f"build_contracts: no .wat source in {args.dir}", file=sys.stderr)
        return 1
    if args.check:
        differing = stale(args.dir)
        for target in differing:
            print(f"build_contracts: {target} differs from the build of {target.with_suffix('.wat').name};"
                  " run python -m tools.build_contracts", file=sys.stderr)
        return 1 if differing else 0
    for source in sources(args.dir):
        source.with_suffix(".wasm").write_bytes(build(source))
    return 0


if __name__ == "__main__":
    sys.exit(main())
